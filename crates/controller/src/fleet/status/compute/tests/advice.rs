//! What the status tells about settings: idle eviction under autoscaling, `fleet` durability
//! on Ephemeral storage, a setting held for the nodes' image.

use super::*;

#[test]
fn an_autoscaled_fleet_without_idle_eviction_is_told_what_its_new_nodes_miss() {
    use crate::autoscale::decide::{ScaleVerdict, Scaled};
    use crate::fleet::status::observation::AutoscaleObserved;
    use celld_api::conditions::{AUTOSCALING, IDLE_EVICTION};
    use celld_api::reasons::Reason;
    let (st, p, s) = (storage(), deployed(), sts(2));
    let observed = |idle_evict: bool| AutoscaleObserved {
        scaled: Scaled {
            desired: 2,
            status: celld_api::AutoscalingStatus::default(),
            decision: None,
            verdict: ScaleVerdict {
                status: Some(true),
                reason: Reason::Steady,
                message: "2 nodes hold the load".into(),
            },
            wake_at: None,
            paused: false,
        },
        idle_evict,
    };
    let status = |autoscale: &AutoscaleObserved| {
        let o_observation = Observation {
            storage: ObservedStorage::Resolved(st.clone(), p.clone()),
            autoscale: Some(Box::new(autoscale.clone())),
            ..at_rest()
        };
        let o = o_observation.observed("app", Some(&s));
        compute(None, &o, Timestamp::UNIX_EPOCH)
    };

    let unset = status(&observed(false));
    let idle = get(&unset, IDLE_EVICTION);
    assert_eq!(
        (idle.status.as_str(), idle.reason.as_str()),
        ("False", "IdleEvictionUnset")
    );
    assert!(
        idle.message.contains("CELLD_IDLE_EVICT_S") && idle.message.contains("set it"),
        "names the variable and what to do: {}",
        idle.message
    );
    assert_eq!(get(&unset, AUTOSCALING).reason, "Steady");

    let set = status(&observed(true));
    let idle = get(&set, IDLE_EVICTION);
    assert_eq!(
        (idle.status.as_str(), idle.reason.as_str()),
        ("True", "IdleEvictionSet")
    );
}

#[test]
fn fleet_durability_on_ephemeral_storage_is_at_risk_and_warned_about_once() {
    use celld_api::conditions::DURABILITY_AT_RISK;
    use celld_api::{CelldFleetSpec, Durability, LocalStorageType};
    let s = sts(2);
    let status = |previous: Option<&CelldFleetStatus>, durability, type_| {
        let mut spec = CelldFleetSpec::with_bucket("s3://celld/app");
        spec.durability = durability;
        spec.local_storage.type_ = type_;
        let observation = Observation {
            acknowledged: Acknowledged::of(&spec),
            ..at_rest()
        };
        compute(
            previous,
            &observation.observed("app", Some(&s)),
            Timestamp::UNIX_EPOCH,
        )
    };
    let at_risk = |s: &CelldFleetStatus| {
        let c = get(s, DURABILITY_AT_RISK);
        (c.status.clone(), c.reason.clone())
    };
    use Durability::{Bucket, Fleet};
    use LocalStorageType::{Ephemeral, Persistent};
    let safe = status(None, None, Ephemeral);
    assert_eq!(at_risk(&safe), ("False".into(), "BucketDurability".into()));
    assert_eq!(
        at_risk(&status(None, None, Persistent)),
        ("False".into(), "PersistentWorkStorage".into())
    );
    assert_eq!(
        at_risk(&status(None, Some(Bucket), Persistent)),
        ("False".into(), "BucketDurability".into())
    );
    let risky = status(Some(&safe), Some(Fleet), Ephemeral);
    assert_eq!(
        at_risk(&risky),
        ("True".into(), "FleetDurabilityOnEphemeral".into())
    );
    let message = &get(&risky, DURABILITY_AT_RISK).message;
    assert!(
        message.contains("spec.localStorage.type") && message.contains("spec.durability"),
        "names the fields and the fix: {message}"
    );
    // Admitted: the fleet still serves.
    assert_eq!(get(&risky, READY).status, "True");

    let events = |previous: Option<&CelldFleetStatus>, status: &CelldFleetStatus| {
        crate::fleet::status::events::transitions(previous, status, "i", None, &[])
            .into_iter()
            .filter(|n| n.note.starts_with(DURABILITY_AT_RISK))
            .map(|n| (n.type_, n.reason))
            .collect::<Vec<_>>()
    };
    use kube::runtime::events::EventType;
    assert_eq!(events(None, &safe), [], "a new fleet at no risk: nothing");
    assert_eq!(
        events(Some(&safe), &risky),
        [(EventType::Warning, "FleetDurabilityOnEphemeral".to_string())]
    );
    assert_eq!(events(None, &risky).len(), 1, "a new fleet at risk: warned");
    assert_eq!(events(Some(&risky), &risky), [], "once");
}

#[test]
fn a_held_setting_is_said_and_reconciling_while_the_nodes_move_and_stalled_on_an_old_image() {
    use crate::upgrade::held::HeldBack;
    use celld_api::conditions::{RECONCILING, SETTINGS_HELD, STALLED};
    let s = sts(2);
    let status = |held: Option<Vec<HeldBack>>| {
        let observation = Observation { held, ..at_rest() };
        compute(
            None,
            &observation.observed("app", Some(&s)),
            Timestamp::UNIX_EPOCH,
        )
    };
    let pair = |st: &CelldFleetStatus, t: &str| {
        let c = get(st, t);
        (c.status.clone(), c.reason.clone())
    };
    let none = status(None);
    assert!(
        !none.conditions.iter().any(|c| c.type_ == SETTINGS_HELD),
        "absent when spec.env uses no held setting"
    );
    let used = status(Some(Vec::new()));
    assert_eq!(
        pair(&used, SETTINGS_HELD),
        ("False".into(), "SettingsInUse".into())
    );
    assert_eq!(get(&used, RECONCILING).status, "False");

    let back = |on_its_way| {
        HeldBack {
        name: "CELLD_LTX_RETENTION_SECS".into(),
        why: "spec.env's CELLD_LTX_RETENTION_SECS reaches the nodes once every node runs celld v0.6.1 or later: 2 of 3 nodes run it, not yet app-0".into(),
        on_its_way,
    }
    };
    let moving = status(Some(vec![back(true)]));
    assert_eq!(
        pair(&moving, SETTINGS_HELD),
        ("True".into(), "HeldForNodes".into())
    );
    assert!(
        get(&moving, SETTINGS_HELD)
            .message
            .contains("not yet app-0")
    );
    assert_eq!(
        pair(&moving, RECONCILING),
        ("True".into(), "HeldForNodes".into())
    );
    assert_eq!(get(&moving, STALLED).status, "False");

    let stuck = status(Some(vec![back(true), back(false)]));
    assert_eq!(
        pair(&stuck, SETTINGS_HELD),
        ("True".into(), "HeldForImage".into())
    );
    assert_eq!(
        pair(&stuck, STALLED),
        ("True".into(), "HeldForImage".into())
    );
}
