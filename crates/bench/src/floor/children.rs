//! The children the operator would make for the bench's fleets, rendered by its own builders
//! (`celld_operator::children::*::build`) for the floor to apply.

use super::status;
use crate::error::{Error, Result};
use crate::settings::REPLICAS;
use celld_api::CelldFleet;
use celld_operator::buckets::pointer::Pointer;
use celld_operator::children::{self, Desired};
use celld_operator::fleet::status::observation::Observation;
use celld_operator::upgrade::decide;
use k8s_openapi::api::core::v1::Secret;
use kube::api::ApiResource;
use kube::{Resource, ResourceExt};

/// One child, ready to apply.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Its kind.
    pub resource: ApiResource,
    /// Its name.
    pub name: String,
    /// Its namespace (its fleet's).
    pub namespace: String,
    /// What is applied.
    pub body: serde_json::Value,
    /// The name of the fleet it belongs to.
    pub fleet: String,
    /// Whether it goes with the fleet's pods: the StatefulSet, and what a correct operator has
    /// in place before they run (the NetworkPolicy fencing their internal port, which carries
    /// celld's unauthenticated operator API, and the peer Service naming them to their peers).
    pub with_pods: bool,
}

fn rendered<K>(fleet: &str, namespace: &str, object: K, with_pods: bool) -> Result<Rendered>
where
    K: Resource<DynamicType = ()> + serde::Serialize,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let body = serde_json::to_value(&object).map_err(|e| Error::Manifest {
        what: format!("{} {name}", K::kind(&())),
        detail: e.to_string(),
    })?;
    Ok(Rendered {
        resource: ApiResource::erase::<K>(&()),
        name,
        namespace: namespace.to_owned(),
        body,
        fleet: fleet.to_owned(),
        with_pods,
    })
}

/// A fleet as the floor sends it.
#[derive(Debug)]
pub struct RenderedFleet {
    /// Its children, in the order the operator applies them.
    pub children: Vec<Rendered>,
    /// What its Ready status is computed from ([`status`]).
    pub status: Observation,
}

/// Every child the operator applies for `fleet` (on a cluster without the Gateway API route
/// it asks for none), rendered with the operator's builders, in the order its reconcile applies
/// them (`celld_operator::fleet::apply_plan`): the NetworkPolicy and the peer Service, which its
/// pods need from their first moment, then the StatefulSet, then the public Service and the
/// others; and what the operator observes of it once it is Ready, its bucket serving `pointer`.
pub fn render(fleet: &CelldFleet, secret: &Secret, pointer: Pointer) -> Result<RenderedFleet> {
    let namespace = fleet.namespace().ok_or_else(|| Error::Manifest {
        what: format!("fleet {}", fleet.name_any()),
        detail: "it has no namespace".into(),
    })?;
    let storage = celld_api::resolve::resolve(&fleet.spec, &namespace, None).map_err(|e| {
        Error::Manifest {
            what: format!("the storage of fleet {}", fleet.name_any()),
            detail: e.to_string(),
        }
    })?;
    let desired = Desired {
        fleet,
        name: fleet.name_any(),
        namespace,
        config_hash: celld_operator::fleet::config_hash::compute(&storage, Some(secret)),
        storage,
        replicas: REPLICAS,
        https: false,
        operator: children::OperatorPods::default(),
        upgrade: decide::decide(&fleet.spec, REPLICAS, None, &decide::Probed::default()),
    };
    let (name, ns) = (desired.name.as_str(), desired.namespace.as_str());
    let mut out = vec![
        rendered(name, ns, children::network_policy::build(&desired), true)?,
        rendered(name, ns, children::peer_service::build(&desired), true)?,
        rendered(name, ns, children::statefulset::build(&desired), true)?,
        rendered(name, ns, children::service::build(&desired), false)?,
    ];
    out.extend(
        children::pdb::build(&desired)
            .map(|c| rendered(name, ns, c, false))
            .transpose()?,
    );
    out.extend(
        children::ingress::build(&desired)
            .map(|c| rendered(name, ns, c, false))
            .transpose()?,
    );
    out.extend(
        children::httproute::build(&desired)
            .map(|c| rendered(name, ns, c, false))
            .transpose()?,
    );
    Ok(RenderedFleet {
        children: out,
        status: status::observation(fleet, &desired, pointer),
    })
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use celld_operator::buckets::pointer;

    /// The deployment pointer the bench publishes for fleet `name`, as the floor reads it.
    pub fn published(name: &str) -> Pointer {
        let body = crate::workload::published_pointer(name).unwrap().unwrap();
        pointer::parse(body.as_bytes())
    }

    #[test]
    fn a_fleet_renders_to_the_operators_six_children_in_its_order() {
        let s3 = crate::workload::tests::s3();
        let fleet = crate::workload::fleet_manifest(3, &s3).unwrap();
        let kinds: Vec<String> = render(&fleet, &Secret::default(), published("f3"))
            .unwrap()
            .children
            .into_iter()
            .map(|r| {
                assert_eq!(
                    r.fleet, "f3",
                    "{} {} names its fleet",
                    r.resource.kind, r.name
                );
                assert_eq!(r.namespace, "bench-0", "{} {}", r.resource.kind, r.name);
                format!("{}/{} {}", r.resource.kind, r.name, r.with_pods)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "NetworkPolicy/f3 true",
                "Service/f3-peer true",
                "StatefulSet/f3 true",
                "Service/f3 false",
                "PodDisruptionBudget/f3 false",
                "Ingress/f3 false"
            ]
        );
    }
}
