//! The replica counts and the selector the scale subresource reads.

use super::*;

fn scaling(desired: i32, sts_replicas: i32) -> CelldFleetStatus {
    let (st, p) = (storage(), deployed());
    let mut s = sts(sts_replicas);
    if let Some(status) = s.status.as_mut() {
        status.replicas = sts_replicas;
        status.updated_replicas = Some(sts_replicas);
    }
    let o_observation = Observation {
        desired,
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        ..at_rest()
    };
    let o = o_observation.observed("app", Some(&s));
    compute(None, &o, Timestamp::UNIX_EPOCH)
}

#[test]
fn replicas_are_the_statefulsets_not_the_specs() {
    let shrinking = scaling(1, 3);
    assert_eq!(shrinking.replicas, 3);
    assert_eq!(get(&shrinking, PROGRESSING).status, "True");
    let growing = scaling(3, 1);
    assert_eq!(growing.replicas, 1);
    assert_eq!(get(&growing, PROGRESSING).status, "True");
    let scaled = scaling(3, 3);
    assert_eq!(scaled.replicas, 3);
    assert_eq!(get(&scaled, PROGRESSING).status, "False");
}

#[test]
fn no_statefulset_means_no_replicas_but_still_a_selector() {
    let failure = Failure::storage(&celld_api::ResolveError::StoreNotFound {
        name: "x".into(),
        namespace: "ns".into(),
    });
    let o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Failed(failure.clone()),
        route: Route::None,
        url: None,
        failures: vec![failure.clone()],
        ..at_rest()
    };
    let o = o_observation.observed("app", None);
    let status = compute(None, &o, Timestamp::UNIX_EPOCH);
    assert_eq!(status.replicas, 0);
    assert_eq!(
        status.selector.as_deref(),
        Some("platform.celld.dev/fleet=app,platform.celld.dev/role=node")
    );
}

#[test]
fn selector_selects_exactly_the_statefulsets_pods() {
    use crate::children::{fixtures, statefulset};
    let fleet = fixtures::fleet(fixtures::FULL);
    let desired = fixtures::desired(&fleet);
    let selector = statefulset::build(&desired).spec.unwrap().selector;
    assert!(selector.match_expressions.is_none());
    let (st, p) = (storage(), deployed());
    let o_observation = Observation {
        generation: Some(1),
        storage: ObservedStorage::Resolved(st.clone(), p.clone()),
        route: Route::None,
        url: None,
        ..at_rest()
    };
    let o = o_observation.observed(&desired.name, None);
    let reported: std::collections::BTreeMap<String, String> =
        compute(None, &o, Timestamp::UNIX_EPOCH)
            .selector
            .unwrap()
            .split(',')
            .map(|pair| {
                let (key, value) = pair.split_once('=').unwrap();
                (key.to_string(), value.to_string())
            })
            .collect();
    assert_eq!(Some(reported), selector.match_labels);
}
