//! The fleet's status, computed from what the reconcile observed and applied. Pure: the same
//! observations give the same status, so an unchanged fleet writes no status.

use crate::pointer::Pointer;
use celld_api::conditions::{
    self, DEGRADED, DEPLOYED, PROGRESSING, READY, ROUTE_READY, STORAGE_RESOLVED,
};
use celld_api::{CelldFleetStatus, ResolvedStorage};
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

/// Whether the fleet's storage resolved, and if not why (reason, message).
#[derive(Debug, Clone)]
pub enum Storage<'a> {
    /// Resolved, with the deployment pointer read from it.
    Resolved(&'a ResolvedStorage, &'a Pointer),
    /// Not resolved: (reason, message).
    Failed(&'static str, String),
}

/// Everything the status is computed from.
#[derive(Debug, Clone)]
pub struct Observed<'a> {
    /// The fleet's metadata.generation.
    pub generation: Option<i64>,
    /// The fleet's name (for messages).
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
}

struct Cond {
    type_: &'static str,
    status: Option<bool>,
    reason: &'static str,
    message: String,
}

fn cond(
    type_: &'static str,
    status: Option<bool>,
    reason: &'static str,
    message: impl Into<String>,
) -> Cond {
    Cond {
        type_,
        status,
        reason,
        message: message.into(),
    }
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
    let mut degraded: Option<(&'static str, String)> = None;
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
                "Resolved",
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
                        "Deployed",
                        format!("version {}{script} is deployed", d.version),
                    ));
                    Some(d.clone())
                }
                Pointer::Missing => {
                    conds.push(cond(DEPLOYED, Some(false), "NoDeployment", format!(
                        "no Worker is deployed at {}/deploy/current.json; celld nodes exit at boot without one, so the fleet stays at 0 nodes until `kubectl celld deploy DIR --fleet {}` publishes one",
                        storage.bucket, o.name
                    )));
                    None
                }
                Pointer::Unknown(e) => {
                    conds.push(cond(
                        DEPLOYED,
                        None,
                        "BucketUnreadable",
                        format!("the deployment pointer could not be read: {e}"),
                    ));
                    previous.and_then(|p| p.deployment.clone())
                }
            }
        }
        Storage::Failed(reason, message) => {
            conds.push(cond(STORAGE_RESOLVED, Some(false), reason, message.clone()));
            conds.push(cond(
                DEPLOYED,
                None,
                "StorageUnresolved",
                "the bucket cannot be read until the storage resolves",
            ));
            degraded = Some((reason, message.clone()));
            previous.and_then(|p| p.deployment.clone())
        }
    };

    let route_ok = match o.route {
        Route::None => {
            conds.push(cond(
                ROUTE_READY,
                Some(true),
                "NoRouteRequested",
                "spec.ingress is not set; the fleet is reachable through its Service",
            ));
            true
        }
        Route::Ingress => {
            conds.push(cond(
                ROUTE_READY,
                Some(true),
                "IngressApplied",
                "the Ingress is applied",
            ));
            true
        }
        Route::HttpRoute => {
            conds.push(cond(
                ROUTE_READY,
                Some(true),
                "HTTPRouteApplied",
                "the HTTPRoute is applied",
            ));
            true
        }
        Route::GatewayApiMissing => {
            let msg = "spec.ingress.gatewayRefs needs the Gateway API HTTPRoute CRD (gateway.networking.k8s.io/v1), which this cluster does not serve: install the Gateway API CRDs, or use spec.ingress.ingressClass";
            conds.push(cond(ROUTE_READY, Some(false), "GatewayAPIMissing", msg));
            degraded.get_or_insert(("GatewayAPIMissing", msg.to_string()));
            false
        }
    };

    let rolling = !sts_current || updated < target || ready < target || replicas != target;
    conds.push(if rolling {
        cond(
            PROGRESSING,
            Some(true),
            "RollingOut",
            format!("{ready}/{target} nodes ready, {updated} updated"),
        )
    } else {
        cond(
            PROGRESSING,
            Some(false),
            "Stable",
            format!("{ready}/{target} nodes ready and up to date"),
        )
    });

    conds.push(match &degraded {
        Some((reason, msg)) => cond(DEGRADED, Some(true), reason, msg.clone()),
        None => cond(
            DEGRADED,
            Some(false),
            "AsExpected",
            "nothing keeps the fleet from its spec",
        ),
    });

    let storage_ok = matches!(o.storage, Storage::Resolved(..));
    conds.push(if !storage_ok {
        cond(
            READY,
            Some(false),
            "StorageUnresolved",
            "the object storage does not resolve; see the StorageResolved condition",
        )
    } else if held {
        cond(
            READY,
            Some(false),
            "NoDeployment",
            "no Worker is deployed yet; see the Deployed condition",
        )
    } else if o.desired == 0 {
        cond(READY, Some(false), "ScaledToZero", "spec.replicas is 0")
    } else if !route_ok {
        cond(
            READY,
            Some(false),
            "RouteNotReady",
            "see the RouteReady condition",
        )
    } else if ready < o.desired {
        cond(
            READY,
            Some(false),
            "NodesNotReady",
            format!("{ready}/{} nodes ready", o.desired),
        )
    } else {
        cond(
            READY,
            Some(true),
            "Serving",
            format!("{ready}/{} nodes ready", o.desired),
        )
    });

    let prev: &[Condition] = previous.map_or(&[], |p| p.conditions.as_slice());
    CelldFleetStatus {
        observed_generation: o.generation,
        replicas,
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
                    c.reason,
                    c.message,
                    o.generation,
                    now,
                )
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::{BucketUrl, DeploymentStatus};
    use k8s_openapi::api::apps::v1::StatefulSetStatus;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    fn storage() -> ResolvedStorage {
        ResolvedStorage {
            store: Some("minio".into()),
            bucket: BucketUrl::parse("s3://celld/app").unwrap(),
            endpoint: Some("http://minio:9000".into()),
            region: "us-east-1".into(),
            allow_http: true,
            credentials_secret: "creds".into(),
        }
    }

    fn sts(ready: i32) -> StatefulSet {
        StatefulSet {
            metadata: ObjectMeta {
                generation: Some(2),
                ..ObjectMeta::default()
            },
            spec: None,
            status: Some(StatefulSetStatus {
                observed_generation: Some(2),
                replicas: 2,
                ready_replicas: Some(ready),
                updated_replicas: Some(2),
                ..StatefulSetStatus::default()
            }),
        }
    }

    fn get<'a>(s: &'a CelldFleetStatus, t: &str) -> &'a Condition {
        conditions::find(&s.conditions, t).unwrap()
    }

    fn deployed() -> Pointer {
        Pointer::Deployed(DeploymentStatus {
            version: "0123456789abcdef".into(),
            script_name: Some("hello".into()),
            rollout_percent: Some(100),
        })
    }

    #[test]
    fn serving_fleet_is_ready_and_stable() {
        let (st, p, s) = (storage(), deployed(), sts(2));
        let o = Observed {
            generation: Some(3),
            name: "app",
            desired: 2,
            storage: Storage::Resolved(&st, &p),
            statefulset: Some(&s),
            route: Route::Ingress,
            url: Some("http://a".into()),
        };
        let status = compute(None, &o, Timestamp::UNIX_EPOCH);
        assert_eq!(get(&status, READY).status, "True");
        assert_eq!(get(&status, PROGRESSING).status, "False");
        assert_eq!(get(&status, DEGRADED).status, "False");
        assert_eq!(status.deployment.unwrap().version, "0123456789abcdef");
        assert_eq!(status.storage.unwrap().store.as_deref(), Some("minio"));
    }

    #[test]
    fn missing_pointer_holds_and_explains() {
        let (st, p) = (storage(), Pointer::Missing);
        let o = Observed {
            generation: Some(1),
            name: "app",
            desired: 2,
            storage: Storage::Resolved(&st, &p),
            statefulset: None,
            route: Route::None,
            url: None,
        };
        let status = compute(None, &o, Timestamp::UNIX_EPOCH);
        let deployed = get(&status, DEPLOYED);
        assert_eq!(
            (deployed.status.as_str(), deployed.reason.as_str()),
            ("False", "NoDeployment")
        );
        assert!(
            deployed
                .message
                .contains("kubectl celld deploy DIR --fleet app")
        );
        assert_eq!(get(&status, READY).reason, "NoDeployment");
    }

    #[test]
    fn unresolved_store_is_degraded_and_keeps_last_deployment() {
        let previous = CelldFleetStatus {
            deployment: Some(DeploymentStatus {
                version: "v1".into(),
                ..DeploymentStatus::default()
            }),
            ..CelldFleetStatus::default()
        };
        let o = Observed {
            generation: Some(1),
            name: "app",
            desired: 1,
            storage: Storage::Failed(
                "StoreNotFound",
                "CelldObjectStore 'x' does not exist".into(),
            ),
            statefulset: None,
            route: Route::None,
            url: None,
        };
        let status = compute(Some(&previous), &o, Timestamp::UNIX_EPOCH);
        assert_eq!(get(&status, DEGRADED).reason, "StoreNotFound");
        assert_eq!(get(&status, STORAGE_RESOLVED).status, "False");
        assert_eq!(status.deployment.unwrap().version, "v1");
    }

    #[test]
    fn missing_gateway_api_is_reported() {
        let (st, p, s) = (storage(), deployed(), sts(2));
        let o = Observed {
            generation: Some(1),
            name: "app",
            desired: 2,
            storage: Storage::Resolved(&st, &p),
            statefulset: Some(&s),
            route: Route::GatewayApiMissing,
            url: None,
        };
        let status = compute(None, &o, Timestamp::UNIX_EPOCH);
        assert_eq!(get(&status, ROUTE_READY).reason, "GatewayAPIMissing");
        assert_eq!(get(&status, READY).status, "False");
    }

    #[test]
    fn same_observations_give_the_same_status() {
        let (st, p, s) = (storage(), deployed(), sts(1));
        let o = Observed {
            generation: Some(3),
            name: "app",
            desired: 2,
            storage: Storage::Resolved(&st, &p),
            statefulset: Some(&s),
            route: Route::None,
            url: None,
        };
        let first = compute(None, &o, Timestamp::UNIX_EPOCH);
        let later = Timestamp::from_second(1_000_000).unwrap();
        assert_eq!(compute(Some(&first), &o, later), first);
    }
}
