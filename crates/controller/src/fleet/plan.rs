//! The plan: every child a fleet should have, in one value, built by the pure builders of
//! [`children`](crate::children). Nothing here calls the API server; applying the plan is
//! [`apply_plan::apply`](crate::fleet::apply_plan::apply)'s job, which destructures it field by
//! field, so a child kind added here and forgotten there does not compile.

use crate::children::deploy_jobs::DeployJobs;
use crate::children::{self, Desired};
use gateway_api::httproutes::HttpRoute;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{Ingress, NetworkPolicy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use std::borrow::Cow;

/// Every child of one fleet, as the operator wants it.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The celld nodes.
    pub statefulset: StatefulSet,
    /// The public Service.
    pub service: Service,
    /// The headless peer Service.
    pub peer_service: Service,
    /// The NetworkPolicy.
    pub network_policy: NetworkPolicy,
    /// The PodDisruptionBudget, when the fleet has more than one node.
    pub pod_disruption_budget: Option<PodDisruptionBudget>,
    /// The Ingress, when spec.ingress names an ingressClass.
    pub ingress: Option<Ingress>,
    /// The HTTPRoute, when spec.ingress names gatewayRefs.
    pub http_route: Option<HttpRoute>,
    /// Whether the cluster serves HTTPRoute: where it does not, HTTPRoutes are neither applied
    /// nor pruned.
    pub http_routes_served: bool,
    /// The deploy Job to start and the superseded ones to delete, for a fleet with
    /// spec.source.
    pub deploy_jobs: DeployJobs,
}

impl Plan {
    /// Kind and name of every child the plan holds whose version a settled fleet remembers:
    /// not the deploy Jobs, whose changes the source step reads.
    pub fn children(&self) -> Vec<(Cow<'static, str>, String)> {
        let Plan {
            statefulset,
            service,
            peer_service,
            network_policy,
            pod_disruption_budget,
            ingress,
            http_route,
            http_routes_served: _,
            deploy_jobs: _,
        } = self;
        fn named<K: kube::Resource<DynamicType = ()>>(k: &K) -> (Cow<'static, str>, String) {
            (K::kind(&()), k.meta().name.clone().unwrap_or_default())
        }
        let mut children = vec![
            named(statefulset),
            named(service),
            named(peer_service),
            named(network_policy),
        ];
        children.extend(pod_disruption_budget.as_ref().map(named));
        children.extend(ingress.as_ref().map(named));
        children.extend(http_route.as_ref().map(named));
        children
    }
}

/// The plan of the fleet `d`, on a cluster that serves HTTPRoute or not, with its
/// `deploy_jobs`.
pub fn plan(d: &Desired<'_>, http_routes_served: bool, deploy_jobs: DeployJobs) -> Plan {
    Plan {
        statefulset: children::statefulset::build(d),
        service: children::service::build(d),
        peer_service: children::peer_service::build(d),
        network_policy: children::network_policy::build(d),
        pod_disruption_budget: children::pdb::build(d),
        ingress: children::ingress::build(d),
        http_route: children::httproute::build(d),
        http_routes_served,
        deploy_jobs,
    }
}
