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

/// What applying one child (and pruning the others of its kind) did.
#[derive(Debug, Default)]
struct Done {
    /// Children created or changed, as `Kind/name`.
    changed: Vec<String>,
    /// Children deleted, as `Kind/name`.
    pruned: Vec<String>,
    /// What could not be read, applied or pruned.
    failures: Vec<Failure>,
}

impl Done {
    fn failed<K: Child>(name: &str, verb: &str, error: &Error) -> Self {
        Self {
            failures: vec![Failure::child(&kind::<K>(), name, verb, error)],
            ..Self::default()
        }
    }
}

/// Applies the children of one fleet in its namespace.
struct Children<'a> {
    ctx: &'a Context,
    ns: &'a str,
    uid: &'a str,
    selector: String,
}

fn kind<K: Child>() -> String {
    K::kind(&()).to_string()
}

impl Children<'_> {
    fn api<K: Child>(&self) -> Api<K> {
        Api::namespaced(self.ctx.client.clone(), self.ns)
    }

    /// The live child `name` from the cache (from the API server for a kind the controller
    /// does not cache), or the failure to read it.
    async fn read<K: ChildKind>(&self, name: &str) -> Result<Option<K>, Done> {
        if let Some(cache) = K::cache(&self.ctx.caches.children) {
            return Ok(caches::child(cache, self.ns, name));
        }
        ssa::read(&self.api::<K>(), name)
            .await
            .map_err(|e| Done::failed::<K>(name, "read", &e))
    }

    /// Applies `child` over `live` (unconditionally when `force`). Returns the object after
    /// the call, or the live one when the apply failed.
    async fn put<K: Child>(&self, child: K, live: Option<K>, force: bool) -> (Option<K>, Done) {
        let name = child.name_any();
        let basis = if force { None } else { live.as_ref() };
        match ssa::apply(&self.api(), child, basis).await {
            Ok((obj, outcome)) => {
                let mut done = Done::default();
                if outcome == Outcome::Applied {
                    done.changed.push(format!("{}/{name}", kind::<K>()));
                }
                (Some(obj), done)
            }
            Err(e) => (live, Done::failed::<K>(&name, "apply", &e)),
        }
    }

    /// Applies a child the fleet always has.
    async fn always<K: ChildKind>(&self, child: K) -> Done {
        match self.read::<K>(&child.name_any()).await {
            Ok(live) => self.put(child, live, false).await.1,
            Err(failed) => failed,
        }
    }

    /// Applies a Service, first replacing live ports that clash with the wanted ones. The
    /// repair only applies to the version of the Service read: if it changed in between, the
    /// Service is read and repaired again.
    async fn service(&self, child: Service) -> Done {
        let name = child.name_any();
        let api = self.api::<Service>();
        let mut attempts = 0;
        loop {
            attempts += 1;
            let live = match self.read::<Service>(&name).await {
                Ok(live) => live,
                Err(failed) => return failed,
            };
            let repaired = match &live {
                None => false,
                Some(live) => match service_ports::repair(&api, live, &child).await {
                    Ok(repaired) => repaired,
                    Err(e) if attempts < REPAIR_ATTEMPTS && service_ports::raced(&e) => {
                        continue;
                    }
                    Err(e) => return Done::failed::<Service>(&name, "repair the ports of", &e),
                },
            };
            return self.put(child, live, repaired).await.1;
        }
    }

    /// Applies a child the spec may ask for, and deletes the fleet's other objects of its kind.
    async fn optional<K: OptionalKind>(&self, child: Option<K>) -> Done {
        let keep: BTreeSet<String> = child.iter().map(|c| c.name_any()).collect();
        let mut done = match child {
            Some(child) => self.always(child).await,
            None => Done::default(),
        };
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
        done.pruned.extend(
            pruned
                .deleted
                .into_iter()
                .map(|n| format!("{}/{n}", kind::<K>())),
        );
        done.failures.extend(pruned.failures);
        done
    }
}

/// Applies every child of `plan` for the fleet `d` (owner `uid`), whose StatefulSet is `live`
/// (as the inputs read it), and prunes what the plan no longer holds, each independently of
/// the others' success. The children are sent at once, not one after the other: a fleet's
/// reconcile takes the time of its slowest child, and a thousand fleets starting together keep
/// the API server busy rather than waiting on it in turn.
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
    let children = Children {
        ctx,
        ns: &d.namespace,
        uid,
        selector: format!(
            "{}={},app.kubernetes.io/managed-by={MANAGER}",
            labels::FLEET,
            d.name
        ),
    };
    let route = async {
        // HTTPRoute exists as a kind only where the cluster serves the Gateway API.
        if http_routes_served {
            children.optional(http_route).await
        } else {
            Done::default()
        }
    };
    let ((statefulset, sts_done), service, peer_service, network_policy, pdb, ingress, route) = futures::join!(
        children.put(statefulset, live, false),
        children.service(service),
        children.service(peer_service),
        children.always(network_policy),
        children.optional(pod_disruption_budget),
        children.optional(ingress),
        route,
    );
    let mut applied = Applied {
        statefulset,
        changed: Vec::new(),
        pruned: Vec::new(),
        failures: Vec::new(),
    };
    for done in [
        sts_done,
        service,
        peer_service,
        network_policy,
        pdb,
        ingress,
        route,
    ] {
        applied.changed.extend(done.changed);
        applied.pruned.extend(done.pruned);
        applied.failures.extend(done.failures);
    }
    applied
}
