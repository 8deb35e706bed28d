use super::*;

fn rules(v: &str) -> Rules {
    Rules::of(&Version::parse(v).unwrap())
}

#[test]
fn the_table_is_in_release_order_without_repeats() {
    for pair in RELEASES.windows(2) {
        assert!(pair[0].version < pair[1].version, "{pair:?}");
    }
}

#[test]
fn each_version_follows_every_change_up_to_it() {
    let v040 = rules("0.4.0");
    assert_eq!(v040.release, (0, 4, 0));
    assert!(v040.refused.is_empty());
    assert_eq!(v040.gate, Gate::FallsOpen { after_s: 120 });
    assert_eq!(v040.shutdown, Shutdown::Total);

    let v041 = rules("0.4.1");
    assert!(v041.refused.is_empty());
    assert_eq!(v041.shutdown, Shutdown::TokenWaitWithinThreeQuarters);
    assert_eq!(v041.gate, Gate::FallsOpen { after_s: 120 });

    for v in ["0.5.0", "0.5.1"] {
        let r = rules(v);
        assert_eq!(r.refused.len(), 17, "{v}");
        assert_eq!(r.gate, Gate::HeldUntilSettled, "{v}");
        assert_eq!(r.shutdown, Shutdown::Derived, "{v}");
        assert!(r.refusal("CELLD_OTEL_SINK").is_some(), "{v}");
        assert!(r.refusal("CELLD_VARS_FILE").is_none(), "{v}");
        assert!(r.features.is_empty(), "{v}");
    }

    for v in ["0.6.0", "0.6.1", "0.7.3", "1.0.0"] {
        let r = rules(v);
        assert_eq!(r.refused.len(), 21, "{v}");
        assert!(r.refusal("CELLD_VAR_API_KEY").is_some(), "{v}");
        assert!(r.refusal("CELLD_VARS_FILE").is_some(), "{v}");
        assert!(r.refusal("CELLD_VARIANT").is_none(), "{v}");
        assert_eq!(r.features, [FEATURE_CONTAINERS], "{v}");
    }
    // A release newer than the table follows its newest release.
    assert_eq!(rules("0.9.0").release, (0, 6, 2));
    // A pre-release is its release's line.
    assert_eq!(rules("0.5.0-rc.1").gate, Gate::HeldUntilSettled);
}

#[test]
fn the_first_release_to_refuse_a_variable_is_named() {
    assert_eq!(
        first_refusal("CELLD_OTEL_SINK").map(|(v, _)| v),
        Some((0, 5, 0))
    );
    assert_eq!(
        first_refusal("CELLD_VAR_TOKEN").map(|(v, _)| v),
        Some((0, 6, 0))
    );
    assert_eq!(first_refusal("CELLD_MAX_RSS_MB"), None);
    let (_, otel) = first_refusal("CELLD_OTEL_SINK").unwrap();
    assert!(otel.instead.contains("CELLD_OTEL=1"), "{}", otel.instead);
    assert!(
        first_refusal("CELLD_WORKER_LOADER")
            .unwrap()
            .1
            .empty_tolerated,
        "an empty CELLD_WORKER_LOADER is tolerated"
    );
}

#[test]
fn versions_display_as_tags() {
    assert_eq!(display((0, 6, 1)), "v0.6.1");
}
