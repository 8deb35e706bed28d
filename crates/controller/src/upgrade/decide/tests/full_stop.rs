//! Changes that stop every old node first, unknown versions, a forbidden downgrade, and the version table's moves.

use super::*;

#[test]
fn a_non_rollable_change_stops_every_old_node_first() {
    let s = spec(V40);
    let up = decide_with(&s, &live(V3), &Probed::default());
    assert_eq!((up.image.as_str(), up.stopped, up.probe), (V3, true, None));
    assert!(matches!(up.progress, Progress::FullStop { left: 3, .. }));

    let mut scaled_down = live(V3);
    scaled_down.replicas = 0;
    scaled_down.pods = 0;
    scaled_down.ready = 0;
    let up = decide_with(&s, &scaled_down, &Probed::default());
    assert_eq!((up.stopped, up.probe), (true, Some(Probe::PodsLeft)));

    let terminating = Probed {
        pods_left: Some(1),
        ..Probed::default()
    };
    let up = decide_with(&s, &scaled_down, &terminating);
    assert_eq!((up.image.as_str(), up.stopped), (V3, true));
    assert!(matches!(up.progress, Progress::FullStop { left: 1, .. }));

    // Every old pod gone: their leases expire before the new image starts.
    let at = |s: i64| Timestamp::from_second(1_000_000 + s).unwrap();
    let gone = |seconds| Probed {
        pods_left: Some(0),
        at: at(seconds),
        ..Probed::default()
    };
    let up = decide_with(&s, &scaled_down, &gone(0));
    assert_eq!((up.image.as_str(), up.stopped), (V3, true));
    assert_eq!(up.stopped_at, Some(at(0)), "the lease's clock starts");
    assert_eq!(up.probe, Some(Probe::PodsLeft));
    assert!(
        matches!(up.progress, Progress::FullStop { left: 0, starts_at: Some(t), .. } if t == at(10)),
        "{:?}",
        up.progress
    );
    scaled_down
        .annotations
        .insert(labels::STOPPED_AT.into(), at(0).to_string());
    let up = decide_with(&s, &scaled_down, &gone(9));
    assert_eq!((up.image.as_str(), up.stopped), (V3, true), "9 s later");
    assert_eq!(
        up.stopped_at,
        Some(at(0)),
        "the clock is kept, not restarted"
    );
    let up = decide_with(&s, &scaled_down, &gone(10));
    assert_eq!(
        (up.image.as_str(), up.stopped, up.partition, up.stopped_at),
        (V40, false, 0, None),
        "one lease lifetime later"
    );
    assert_eq!(up.highest, Some(Version::new(0, 4, 0)));

    // spec.env's CELLD_TTL_MS lengthens the wait, never shortens it.
    let mut longer = s.clone();
    longer.env.push(k8s_openapi::api::core::v1::EnvVar {
        name: "CELLD_TTL_MS".into(),
        value: Some("30000".into()),
        ..Default::default()
    });
    assert!(decide_with(&longer, &scaled_down, &gone(29)).stopped);
    assert!(!decide_with(&longer, &scaled_down, &gone(30)).stopped);

    // A pod that appears again (someone scaled the StatefulSet) starts the clock over.
    let up = decide_with(&s, &scaled_down, &terminating);
    assert_eq!((up.stopped, up.stopped_at), (true, None));
}

#[test]
fn unknown_versions_stop_and_strategies_override_the_table_where_celld_allows() {
    let latest = spec("ghcr.io/denoland/celld:latest");
    let up = decide_with(&latest, &live(V40), &Probed::default());
    assert!(up.stopped);

    // Rolling rolls where the version cannot be read...
    let mut rolling = spec("ghcr.io/denoland/celld:latest");
    rolling.upgrade_strategy = UpgradeStrategy::Rolling;
    let up = decide_with(&rolling, &live(V40), &Probed::default());
    assert_eq!((up.stopped, up.partition), (false, 3));
    assert!(up.rolling_from.is_some(), "rolled, not stopped");
    // ...never across a pair celld forbids rolling.
    let mut across = spec(V40);
    across.upgrade_strategy = UpgradeStrategy::Rolling;
    let up = decide_with(&across, &live(V3), &Probed::default());
    assert!(up.stopped, "{up:?}");
    assert!(
        matches!(up.progress, Progress::FullStop { ref why, .. } if why.contains("Rolling does not roll a pair celld forbids")),
        "{:?}",
        up.progress
    );

    let mut full_stop = spec(V41);
    full_stop.upgrade_strategy = UpgradeStrategy::FullStop;
    let up = decide_with(&full_stop, &live(V40), &Probed::default());
    assert!(up.stopped);
}

#[test]
fn a_change_mid_roll_must_suit_the_nodes_still_on_the_old_image() {
    // v0.3 → v0.4.0 was forced to roll and is half way; v0.4.1 must not roll next to v0.3.
    let up = decide_with(
        &spec(V41),
        &live(V40).rolling_from(V3, 1, 2),
        &Probed::default(),
    );
    assert!(up.stopped, "{up:?}");
}

#[test]
fn a_forbidden_downgrade_keeps_the_running_image() {
    let up = decide_with(&spec(V40), &live(V41), &Probed::default());
    assert_eq!((up.image.as_str(), up.stopped), (V41, false));
    let Progress::Refused(why) = &up.progress else {
        panic!("{up:?}");
    };
    assert!(
        why.contains("spec.image ghcr.io/denoland/celld:v0.4.0 is refused"),
        "{why}"
    );
    assert!(!up.progress.under_way());

    // The highest version survives an image whose version is unknown.
    let mut unknown = live("ghcr.io/denoland/celld:latest");
    unknown
        .annotations
        .insert(labels::HIGHEST_VERSION.into(), "0.4.1".into());
    let up = decide_with(&spec(V40), &unknown, &Probed::default());
    assert!(matches!(up.progress, Progress::Refused(_)), "{up:?}");
}

#[test]
fn a_fleet_on_the_old_default_moves_to_the_new_default_by_the_table() {
    // Fleets created before the default moved keep v0.4.0 in their spec; setting the new
    // default (v0.6.0, pinned by digest) crosses v0.4.1 → v0.5.0, which is a full stop
    // whatever the durability (v0.4.1 cannot read v0.5.0's alarm discovery entries).
    for durability in [None, Some(celld_api::Durability::Bucket)] {
        let mut to_default = spec(celld_api::DEFAULT_IMAGE);
        to_default.durability = durability;
        let up = decide_with(&to_default, &live(V40), &Probed::default());
        let Progress::FullStop { why, .. } = &up.progress else {
            panic!("expected a full stop, got {:?}", up.progress);
        };
        assert!(
            why.contains("celld before v0.5.0 and v0.5.0 or later"),
            "{why}"
        );
        assert!(up.stopped, "{up:?}");
    }
}

#[test]
fn v0_6_0_rolls_in_only_when_the_running_and_the_wanted_nodes_both_use_bucket_durability() {
    use celld_api::{LocalStorageType::Persistent, contract::durability::Durability::*};
    const V51: &str = "ghcr.io/denoland/celld:v0.5.1";
    const V60: &str = "ghcr.io/denoland/celld:v0.6.0";
    // (the running template's CELLD_DURABILITY, spec.durability, Persistent work storage)
    for (running, asked, persistent, rolls) in [
        (Some("bucket"), None, false, true),
        (Some("bucket"), Some(Bucket), true, true),
        (Some("bucket"), None, true, false),
        (Some("bucket"), Some(Fleet), false, false),
        (None, None, false, false),
        (Some("fleet"), Some(Bucket), false, false),
    ] {
        let mut wanted = spec(V60);
        wanted.durability = asked;
        if persistent {
            wanted.local_storage.type_ = Persistent;
        }
        let mut running_sts = live(V51);
        running_sts.durability = running;
        let up = decide_with(&wanted, &running_sts, &Probed::default());
        let case = format!(
            "{running:?} {asked:?} persistent={persistent}: {:?}",
            up.progress
        );
        assert_eq!(
            matches!(up.progress, Progress::Rolling { .. }),
            rolls,
            "{case}"
        );
        assert_eq!(up.stopped, !rolls, "{case}");
    }
}
