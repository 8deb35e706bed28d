//! Applies and prunes one fleet's children, each on its own: a child the API server refuses or
//! cannot take is recorded as a failure and the others are still applied, so one bad object
//! never keeps the rest of the fleet, or its status, from being reconciled.

use crate::cache::caches::{self, ChildKind, OptionalKind};
use crate::children::{Child, Desired, MANAGER};
use crate::error::Error;
use crate::failure::Failure;
use crate::fleet::context::Context;
use crate::fleet::plan::Plan;
use crate::fleet::service_ports;
use crate::fleet::ssa::{self, Outcome};
use celld_api::labels;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Service;
use kube::{Api, ResourceExt};
use std::collections::BTreeSet;

/// How often a Service's ports are read and repaired when it keeps changing in between.
const REPAIR_ATTEMPTS: u32 = 3;

/// What applying a fleet's children did.
#[derive(Debug)]
pub struct Applied {
    /// The StatefulSet as applied, or as it was read when it could not be applied; None when
    /// it does not exist or could not be read.
    pub statefulset: Option<StatefulSet>,
    /// Children created or changed, as `Kind/name`.
    pub changed: Vec<String>,
    /// Children deleted, as `Kind/name`.
    pub pruned: Vec<String>,
    /// What could not be read, applied or pruned, in the order met.
    pub failures: Vec<Failure>,
}

/// Applies the children of one fleet in its namespace.
struct Children<'a> {
    ctx: &'a Context,
    ns: &'a str,
    uid: &'a str,
    selector: String,
    applied: Applied,
}

fn kind<K: Child>() -> String {
    K::kind(&()).to_string()
}

impl Children<'_> {
    fn api<K: Child>(&self) -> Api<K> {
        Api::namespaced(self.ctx.client.clone(), self.ns)
    }

    fn fail<K: Child>(&mut self, name: &str, verb: &str, error: &Error) {
        self.applied
            .failures
            .push(Failure::child(&kind::<K>(), name, verb, error));
    }

    /// The live child `name` from the cache (from the API server for a kind the controller
    /// does not cache), or the failure to read it recorded.
    async fn read<K: ChildKind>(&mut self, name: &str) -> Result<Option<K>, ()> {
        if let Some(cache) = K::cache(&self.ctx.caches.children) {
            return Ok(caches::child(cache, self.ns, name));
        }
        match ssa::read(&self.api::<K>(), name).await {
            Ok(live) => Ok(live),
            Err(e) => {
                self.fail::<K>(name, "read", &e);
                Err(())
            }
        }
    }

    /// Applies `child` over `live` (unconditionally when `force`). Returns the object after
    /// the call, or the live one when the apply failed.
    async fn put<K: Child>(&mut self, child: K, live: Option<K>, force: bool) -> Option<K> {
        let name = child.name_any();
        let basis = if force { None } else { live.as_ref() };
        match ssa::apply(&self.api(), child, basis).await {
            Ok((obj, outcome)) => {
                if outcome == Outcome::Applied {
                    self.applied.changed.push(format!("{}/{name}", kind::<K>()));
                }
                Some(obj)
            }
            Err(e) => {
                self.fail::<K>(&name, "apply", &e);
                live
            }
        }
    }

    /// Applies a child the fleet always has.
    async fn always<K: ChildKind>(&mut self, child: K) -> Option<K> {
        let live = self.read::<K>(&child.name_any()).await.ok()?;
        self.put(child, live, false).await
    }

    /// Applies a Service, first replacing live ports that clash with the wanted ones. The
    /// repair only applies to the version of the Service read: if it changed in between, the
    /// Service is read and repaired again.
    async fn service(&mut self, child: Service) {
        let name = child.name_any();
        let api = self.api::<Service>();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let Ok(live) = self.read::<Service>(&name).await else {
                return;
            };
            let repaired = match &live {
                None => false,
                Some(live) => match service_ports::repair(&api, live, &child).await {
                    Ok(repaired) => repaired,
                    Err(e) if attempts < REPAIR_ATTEMPTS && service_ports::raced(&e) => {
                        continue;
                    }
                    Err(e) => {
                        self.fail::<Service>(&name, "repair the ports of", &e);
                        return;
                    }
                },
            };
            self.put(child, live, repaired).await;
            return;
        }
    }

    /// Applies a child the spec may ask for, and deletes the fleet's other objects of its kind.
    async fn optional<K: OptionalKind>(&mut self, child: Option<K>) {
        let keep: BTreeSet<String> = child.iter().map(|c| c.name_any()).collect();
        if let Some(child) = child {
            self.always(child).await;
        }
        let api = self.api::<K>();
        let pruned = match K::owned(&self.ctx.caches.children) {
            Some(owned) => {
                let unwanted = caches::owned_by(owned, self.ns, self.uid)
                    .into_iter()
                    .filter(|name| !keep.contains(name));
                ssa::delete_all(&api, unwanted).await
            }
            None => ssa::prune(&api, &self.selector, self.uid, &keep).await,
        };
        self.applied.pruned.extend(
            pruned
                .deleted
                .into_iter()
                .map(|n| format!("{}/{n}", kind::<K>())),
        );
        self.applied.failures.extend(pruned.failures);
    }
}

/// Applies every child of `plan` for the fleet `d` (owner `uid`), whose StatefulSet is `live`
/// (as the inputs read it), and prunes what the plan no longer holds, each independently of
/// the others' success.
pub async fn apply(
    ctx: &Context,
    d: &Desired<'_>,
    plan: Plan,
    live: Option<StatefulSet>,
    uid: &str,
) -> Applied {
    let Plan {
        statefulset,
        service,
        peer_service,
        network_policy,
        pod_disruption_budget,
        ingress,
        http_route,
        http_routes_served,
    } = plan;
    let mut children = Children {
        ctx,
        ns: &d.namespace,
        uid,
        selector: format!(
            "{}={},app.kubernetes.io/managed-by={MANAGER}",
            labels::FLEET,
            d.name
        ),
        applied: Applied {
            statefulset: None,
            changed: Vec::new(),
            pruned: Vec::new(),
            failures: Vec::new(),
        },
    };
    // The pods' fence and their peers' names come before the pods: the NetworkPolicy keeps
    // the internal port (peer traffic and celld's unauthenticated operator API) inside the
    // fleet from a pod's first moment, and the peer Service gives each pod the DNS name it
    // advertises. A StatefulSet applied first would start pods without either.
    children.always(network_policy).await;
    children.service(peer_service).await;
    children.applied.statefulset = children.put(statefulset, live, false).await;
    children.service(service).await;
    children.optional(pod_disruption_budget).await;
    children.optional(ingress).await;
    // HTTPRoute exists as a kind only where the cluster serves the Gateway API.
    if http_routes_served {
        children.optional(http_route).await;
    }
    children.applied
}
