//! The fleet's status, computed from what the reconcile observed and applied. Pure: the same
//! observations give the same status, so an unchanged fleet writes no status.

use crate::failure::{self, Failure};
use crate::reason::Reason;
use crate::storage::pointer::Pointer;
use crate::upgrade::decide::Progress;
use celld_api::conditions::{
    self, DEGRADED, DEPLOYED, PROGRESSING, READY, ROUTE_READY, STORAGE_RESOLVED,
};
use celld_api::{CelldFleetStatus, ResolvedStorage, labels};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

/// What happened to the fleet's route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// The spec asks for no route.
    None,
    /// An Ingress was applied.
    Ingress,
    /// An HTTPRoute was applied.
    HttpRoute,
    /// gatewayRefs is set but the cluster does not serve HTTPRoute.
    GatewayApiMissing,
}

/// Whether the fleet's storage resolved, and if not why.
#[derive(Debug, Clone)]
pub enum Storage<'a> {
    /// Resolved, with the deployment pointer read from it.
    Resolved(&'a ResolvedStorage, &'a Pointer),
    /// Not resolved: the failure says why.
    Failed(&'a Failure),
}

/// Everything the status is computed from.
#[derive(Debug, Clone)]
pub struct Observed<'a> {
    /// The fleet's metadata.generation.
    pub generation: Option<i64>,
    /// The fleet's name (for messages and the selector of its node pods).
    pub name: &'a str,
    /// spec.replicas.
    pub desired: i32,
    /// Storage resolution and the pointer.
    pub storage: Storage<'a>,
    /// The live StatefulSet, if any.
    pub statefulset: Option<&'a StatefulSet>,
    /// The route outcome.
    pub route: Route,
    /// The public URL.
    pub url: Option<String>,
    /// Every failure the reconcile met (storage, bucket, children), in the order met.
    pub failures: &'a [Failure],
    /// Where a change of celld image stands.
    pub upgrade: &'a Progress,
}

struct Cond {
    type_: &'static str,
    status: Option<bool>,
    reason: Reason,
    message: String,
}

fn cond(
    type_: &'static str,
    status: Option<bool>,
    reason: Reason,
    message: impl Into<String>,
) -> Cond {
    Cond {
        type_,
        status,
        reason,
        message: message.into(),
    }
}

/// The Progressing condition of a change of celld image under way.
fn upgrade_progress(progress: &Progress) -> Option<Cond> {
    let (reason, message) = match progress {
        Progress::Idle | Progress::Refused(_) => return None,
        Progress::Rolling {
            from,
            to,
            updated,
            of,
        } => (
            Reason::RollingUpgrade,
            format!("rolling from {from} to {to} one node at a time: {updated}/{of} nodes updated"),
        ),
        Progress::WaitingForRestores { why } => (Reason::WaitingForRestores, why.clone()),
        Progress::FullStop {
            from,
            to,
            left,
            why,
        } => (
            Reason::FullStop,
            if *left > 0 {
                format!("stopping every node of {from} before {to} starts ({left} left): {why}")
            } else {
                format!("every node of {from} stopped; starting {to}: {why}")
            },
        ),
    };
    Some(cond(PROGRESSING, Some(true), reason, message))
}

/// Computes the status; `previous` keeps transition times and the last known deployment.
pub fn compute(
    previous: Option<&CelldFleetStatus>,
    o: &Observed,
    now: Timestamp,
) -> CelldFleetStatus {
    let sts_status = o.statefulset.and_then(|s| s.status.as_ref());
    let replicas = sts_status.map_or(0, |s| s.replicas);
    let ready = sts_status.and_then(|s| s.ready_replicas).unwrap_or(0);
    let updated = sts_status.and_then(|s| s.updated_replicas).unwrap_or(0);
    let sts_current = o.statefulset.is_some_and(|s| {
        s.status.as_ref().and_then(|st| st.observed_generation) == s.metadata.generation
    });
    let held = matches!(o.storage, Storage::Resolved(_, Pointer::Missing));
    let target = if held { 0 } else { o.desired };

    let mut conds = Vec::new();
    let mut degraded: Option<(Reason, String)> = o
        .failures
        .first()
        .map(|f| (f.reason, failure::summary(o.failures)));
    let child_failure = o.failures.iter().find(|f| f.is_any_child());
    let deployment = match &o.storage {
        Storage::Resolved(storage, pointer) => {
            let via = storage
                .store
                .as_ref()
                .map_or(String::from("inline connection"), |s| {
                    format!("CelldObjectStore {s}")
                });
            conds.push(cond(
                STORAGE_RESOLVED,
                Some(true),
                Reason::Resolved,
                format!("{} through the {via}", storage.bucket),
            ));
            match pointer {
                Pointer::Deployed(d) => {
                    let script = d
                        .script_name
                        .as_ref()
                        .map_or(String::new(), |s| format!(" of {s}"));
                    conds.push(cond(
                        DEPLOYED,
                        Some(true),
                        Reason::Deployed,
                        format!("version {}{script} is deployed", d.version),
                    ));
                    Some(d.clone())
                }
                Pointer::Missing => {
                    conds.push(cond(DEPLOYED, Some(false), Reason::NoDeployment, format!(
                        "no Worker is deployed at {}/deploy/current.json; celld nodes exit at boot without one, so the fleet stays at 0 nodes until `kubectl celld deploy DIR --fleet {}` publishes one",
                        storage.bucket, o.name
                    )));
                    None
                }
                Pointer::Unknown(e) => {
                    conds.push(cond(
                        DEPLOYED,
                        None,
                        Reason::BucketUnreadable,
                        format!("the deployment pointer could not be read: {e}"),
                    ));
                    previous.and_then(|p| p.deployment.clone())
                }
                Pointer::NoCredentials(e) => {
                    conds.push(cond(
                        DEPLOYED,
                        None,
                        Reason::NoOperatorCredentials,
                        e.clone(),
                    ));
                    previous.and_then(|p| p.deployment.clone())
                }
            }
        }
        Storage::Failed(f) => {
            conds.push(cond(
                STORAGE_RESOLVED,
                Some(false),
                f.reason,
                f.message.clone(),
            ));
            conds.push(cond(
                DEPLOYED,
                None,
                Reason::StorageUnresolved,
                "the bucket cannot be read until the storage resolves",
            ));
            degraded.get_or_insert((f.reason, f.message.clone()));
            previous.and_then(|p| p.deployment.clone())
        }
    };

    let route_kind = match o.route {
        Route::Ingress => "Ingress",
        Route::HttpRoute => "HTTPRoute",
        Route::None | Route::GatewayApiMissing => "",
    };
    let route_failure = o.failures.iter().find(|f| f.is_child(route_kind));
    let route_ok = match (&o.route, route_failure) {
        (_, Some(f)) => {
            conds.push(cond(
                ROUTE_READY,
                Some(false),
                f.reason,
                format!("the {route_kind} could not be applied; see the Degraded condition"),
            ));
            false
        }
        (Route::None, None) => {
            conds.push(cond(
                ROUTE_READY,
                Some(true),
                Reason::NoRouteRequested,
                "spec.ingress is not set; the fleet is reachable through its Service",
            ));
            true
        }
        (Route::Ingress, None) => {
            conds.push(cond(
                ROUTE_READY,
                Some(true),
                Reason::IngressApplied,
                "the Ingress is applied",
            ));
            true
        }
        (Route::HttpRoute, None) => {
            conds.push(cond(
                ROUTE_READY,
                Some(true),
                Reason::HTTPRouteApplied,
                "the HTTPRoute is applied",
            ));
            true
        }
        (Route::GatewayApiMissing, None) => {
            let msg = "spec.ingress.gatewayRefs needs the Gateway API HTTPRoute CRD (gateway.networking.k8s.io/v1), which this cluster does not serve: install the Gateway API CRDs, or use spec.ingress.ingressClass";
            conds.push(cond(
                ROUTE_READY,
                Some(false),
                Reason::GatewayAPIMissing,
                msg,
            ));
            degraded.get_or_insert((Reason::GatewayAPIMissing, msg.to_string()));
            false
        }
    };

    let rolling = !sts_current || updated < target || ready < target || replicas != target;
    conds.push(if let Some(upgrading) = upgrade_progress(o.upgrade) {
        upgrading
    } else if rolling {
        cond(
            PROGRESSING,
            Some(true),
            Reason::RollingOut,
            format!("{ready}/{target} nodes ready, {updated} updated"),
        )
    } else {
        cond(
            PROGRESSING,
            Some(false),
            Reason::Stable,
            format!("{ready}/{target} nodes ready and up to date"),
        )
    });

    conds.push(match &degraded {
        Some((reason, msg)) => cond(DEGRADED, Some(true), *reason, msg.clone()),
        None => cond(
            DEGRADED,
            Some(false),
            Reason::AsExpected,
            "nothing keeps the fleet from its spec",
        ),
    });

    let storage_ok = matches!(o.storage, Storage::Resolved(..));
    conds.push(if !storage_ok {
        cond(
            READY,
            Some(false),
            Reason::StorageUnresolved,
            "the object storage does not resolve; see the StorageResolved condition",
        )
    } else if let Some(f) = child_failure {
        cond(
            READY,
            Some(false),
            f.reason,
            format!(
                "the operator could not reconcile {}; see the Degraded condition",
                f.subject
            ),
        )
    } else if held {
        cond(
            READY,
            Some(false),
            Reason::NoDeployment,
            "no Worker is deployed yet; see the Deployed condition",
        )
    } else if o.desired == 0 {
        cond(
            READY,
            Some(false),
            Reason::ScaledToZero,
            "spec.replicas is 0",
        )
    } else if !route_ok {
        cond(
            READY,
            Some(false),
            Reason::RouteNotReady,
            "see the RouteReady condition",
        )
    } else if ready < o.desired {
        cond(
            READY,
            Some(false),
            Reason::NodesNotReady,
            format!("{ready}/{} nodes ready", o.desired),
        )
    } else {
        cond(
            READY,
            Some(true),
            Reason::Serving,
            format!("{ready}/{} nodes ready", o.desired),
        )
    });

    let prev: &[Condition] = previous.map_or(&[], |p| p.conditions.as_slice());
    CelldFleetStatus {
        observed_generation: o.generation,
        replicas,
        selector: Some(labels::node_selector_string(o.name)),
        ready_replicas: ready,
        updated_replicas: updated,
        url: o.url.clone(),
        storage: match &o.storage {
            Storage::Resolved(s, _) => Some(s.to_status()),
            Storage::Failed(..) => previous.and_then(|p| p.storage.clone()),
        },
        deployment,
        conditions: conds
            .into_iter()
            .map(|c| {
                conditions::make(
                    prev,
                    c.type_,
                    c.status,
                    c.reason.as_str(),
                    c.message,
                    o.generation,
                    now,
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests;
