//! A failure makes the fleet Degraded, the nodes' serving decides Ready, and a failure that
//! clears clears its condition.

use super::*;

fn refused(kind: &str, message: &str) -> Failure {
    Failure::child(
        kind,
        "app",
        "apply",
        &crate::error::Error::kube(
            "applying",
            kube::Error::Api(Box::new(
                kube::core::Status::failure(message, "Invalid").with_code(422),
            )),
        ),
    )
}

#[test]
fn a_refused_child_makes_the_fleet_degraded_and_not_ready() {
    let (st, p, s) = (storage(), deployed(), sts(2));
    let failures = [
        refused("Service", "spec.ports[1].name: Duplicate value"),
        refused("Ingress", "spec.rules[0].host: Invalid value"),
    ];
    let o_observation = Observation {
        generation: Some(4),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        url: None,
        failures: failures.to_vec(),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    let degraded = get(&status, DEGRADED);
    assert_eq!(
        (degraded.status.as_str(), degraded.reason.as_str()),
        ("True", "ChildRejected")
    );
    assert!(
        degraded.message.contains("Service app")
            && degraded.message.contains("spec.ports[1].name")
            && degraded.message.contains("Ingress app")
            && degraded.message.contains("spec.rules[0].host"),
        "{}",
        degraded.message
    );
    let ready = get(&status, READY);
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "ChildRejected")
    );
    assert!(ready.message.contains("Service app"), "{}", ready.message);
    let route = get(&status, ROUTE_READY);
    assert_eq!(
        (route.status.as_str(), route.reason.as_str()),
        ("False", "ChildRejected")
    );
    assert_eq!(get(&status, STORAGE_RESOLVED).status, "True");
}

#[test]
fn an_unreadable_bucket_is_degraded_but_the_nodes_still_serve() {
    let (st, s) = (storage(), sts(2));
    let p = Pointer::Unknown("connection refused".into());
    let failures = [Failure::bucket("connection refused")];
    let o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        failures: failures.to_vec(),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&status, DEGRADED).reason, "BucketUnreadable");
    assert_eq!(get(&status, DEPLOYED).status, "Unknown");
    assert_eq!(get(&status, READY).reason, "Serving");
    assert_eq!(
        kstatus(&status),
        [("True", "BucketUnreadable"), ("False", "AsExpected")],
        "a failure that retrying may end is Reconciling, not Stalled"
    );
}

#[test]
fn a_failure_that_clears_clears_the_condition() {
    let (st, p, s) = (storage(), deployed(), sts(2));
    let failures = [refused("NetworkPolicy", "bad")];
    let mut o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        failures: failures.to_vec(),
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    let failing = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&failing, DEGRADED).status, "True");
    o_observation.failures = Vec::new();
    let o = o_observation.observed("app", Some(&s));
    let healed = compute(Some(&failing), &o, Timestamp::UNIX_EPOCH);
    assert_eq!(get(&healed, DEGRADED).reason, "AsExpected");
    assert_eq!(get(&healed, READY).reason, "Serving");
}
