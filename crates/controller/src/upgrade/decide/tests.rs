use super::*;
use celld_api::contract::durability::DURABILITY;
use celld_api::labels;
use k8s_openapi::api::apps::v1::{
    RollingUpdateStatefulSetStrategy, StatefulSetSpec, StatefulSetStatus, StatefulSetUpdateStrategy,
};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::jiff::Timestamp;
use std::collections::BTreeMap;

const V3: &str = "ghcr.io/denoland/celld:v0.3.0";
const V40: &str = "ghcr.io/denoland/celld:v0.4.0";
const V41: &str = "ghcr.io/denoland/celld:v0.4.1";

fn spec(image: &str) -> CelldFleetSpec {
    let mut spec = CelldFleetSpec::with_bucket("s3://b/p");
    spec.image = image.into();
    spec.replicas = 3;
    spec
}

/// A live StatefulSet running `image` whose status is current.
struct LiveSts {
    image: &'static str,
    /// The template's CELLD_DURABILITY.
    durability: Option<&'static str>,
    replicas: i32,
    partition: i32,
    annotations: BTreeMap<String, String>,
    pods: i32,
    ready: i32,
    updated: i32,
    current: bool,
    /// Its update revision is not its current one.
    template_pending: bool,
}

fn live(image: &'static str) -> LiveSts {
    LiveSts {
        image,
        durability: None,
        replicas: 3,
        partition: 0,
        annotations: BTreeMap::new(),
        pods: 3,
        ready: 3,
        updated: 3,
        current: true,
        template_pending: false,
    }
}

impl LiveSts {
    fn rolling_from(mut self, image: &str, partition: i32, updated: i32) -> Self {
        self.annotations
            .insert(labels::ROLLING_FROM.into(), image.into());
        self.partition = partition;
        self.updated = updated;
        self
    }

    fn build(&self) -> StatefulSet {
        let mut sts = StatefulSet::default();
        sts.metadata.name = Some("web".into());
        sts.metadata.generation = Some(4);
        sts.metadata.annotations = Some(self.annotations.clone());
        sts.spec = Some(StatefulSetSpec {
            replicas: Some(self.replicas),
            update_strategy: Some(StatefulSetUpdateStrategy {
                rolling_update: Some(RollingUpdateStatefulSetStrategy {
                    partition: Some(self.partition),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            template: PodTemplateSpec {
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "celld".into(),
                        image: Some(self.image.into()),
                        env: self.durability.map(|d| {
                            vec![k8s_openapi::api::core::v1::EnvVar {
                                name: DURABILITY.into(),
                                value: Some(d.into()),
                                ..Default::default()
                            }]
                        }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        });
        sts.status = Some(StatefulSetStatus {
            observed_generation: Some(if self.current { 4 } else { 3 }),
            replicas: self.pods,
            ready_replicas: Some(self.ready),
            updated_replicas: Some(self.updated),
            current_revision: Some("web-1".into()),
            update_revision: Some(
                if self.template_pending {
                    "web-2"
                } else {
                    "web-1"
                }
                .into(),
            ),
            ..Default::default()
        });
        sts
    }
}

/// The nodes' states with `node` busy as `why`.
fn busy(node: &str, why: &str) -> Restores {
    Restores {
        busy: vec![(node.into(), why.into())],
        unready: Vec::new(),
    }
}

fn decide_with(spec: &CelldFleetSpec, live: &LiveSts, probed: &Probed) -> Upgrade {
    decide(spec, spec.replicas, Some(&live.build()), probed)
}

#[test]
fn a_new_fleet_starts_on_its_image() {
    let up = decide(&spec(V41), 3, None, &Probed::default());
    assert_eq!(up.image, V41);
    // The partition is closed: a later change of the template waits for the operator.
    assert_eq!((up.stopped, up.partition, up.probe), (false, 3, None));
    assert_eq!(up.highest, Some(Version::new(0, 4, 1)));
    assert_eq!(up.progress, Progress::Idle);
}

#[test]
fn a_rollable_change_starts_at_the_last_node_once_no_node_restores() {
    // Nothing moves before the nodes' states are read.
    let up = decide_with(&spec(V41), &live(V40), &Probed::default());
    assert_eq!(up.image, V41);
    assert_eq!((up.partition, up.probe), (3, Some(Probe::NodeStates)));
    assert_eq!(up.rolling_from.as_deref(), Some(V40));
    assert!(matches!(
        up.progress,
        Progress::Rolling {
            updated: 0,
            of: 3,
            ..
        }
    ));
    // A node restores cells (or does not answer: a follower down): no node restarts yet.
    let busy = Probed {
        restores: Some(busy("web-0", "node web-0 did not answer")),
        ..Probed::default()
    };
    let up = decide_with(&spec(V41), &live(V40), &busy);
    assert_eq!((up.image.as_str(), up.partition), (V41, 3));
    assert!(matches!(up.progress, Progress::WaitingForRestores { .. }));
    // Another node not Ready (a follower down): no node restarts.
    let down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-1".into()],
        }),
        ..Probed::default()
    };
    let up = decide_with(&spec(V41), &live(V40), &down);
    assert_eq!(up.partition, 3);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-1 not ready")),
        "{:?}",
        up.progress
    );
    // The next node itself down (a pod that never started): it may be replaced.
    let itself = Probed {
        restores: Some(Restores {
            busy: vec![("web-2".into(), "node web-2 did not answer".into())],
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    assert_eq!(decide_with(&spec(V41), &live(V40), &itself).partition, 2);
    // Every node Ready, none restoring: the last node goes first.
    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    let up = decide_with(&spec(V41), &live(V40), &quiet);
    assert_eq!(up.partition, 2);
}

#[test]
fn any_other_template_change_rolls_through_the_same_gate() {
    let s = spec(V41);
    // At rest the partition is closed.
    assert_eq!(decide_with(&s, &live(V41), &Probed::default()).partition, 3);
    // A new template is pending: it reaches the last node once no node restores.
    let mut pending = live(V41);
    pending.template_pending = true;
    pending.partition = 3;
    pending.updated = 0;
    let up = decide_with(&s, &pending, &Probed::default());
    assert_eq!((up.partition, up.probe), (3, Some(Probe::NodeStates)));
    assert!(matches!(
        up.progress,
        Progress::RollingTemplate { updated: 0, of: 3 }
    ));
    let busy = Probed {
        restores: Some(busy("web-1", "node web-1 restores 4 cells")),
        ..Probed::default()
    };
    let up = decide_with(&s, &pending, &busy);
    assert_eq!(up.partition, 3);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-1"))
    );
    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    assert_eq!(decide_with(&s, &pending, &quiet).partition, 2);
    // The updated node is not Ready yet: the next one waits.
    pending.partition = 2;
    pending.updated = 1;
    pending.ready = 2;
    let updated_down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    assert_eq!(decide_with(&s, &pending, &updated_down).partition, 2);
    // Two nodes down: not even probed.
    pending.ready = 1;
    let up = decide_with(&s, &pending, &Probed::default());
    assert_eq!((up.partition, up.probe), (2, None));
    // None serves (a fleet that never came up): the change, perhaps its fix, goes on.
    pending.ready = 0;
    assert_eq!(decide_with(&s, &pending, &Probed::default()).partition, 1);
    pending.ready = 2;
    // Every node updated: open until the StatefulSet completes the roll, then closed again.
    pending.partition = 0;
    pending.updated = 3;
    pending.ready = 3;
    assert_eq!(decide_with(&s, &pending, &quiet).partition, 0);
    pending.template_pending = false;
    assert_eq!(decide_with(&s, &pending, &quiet).partition, 3);
}

#[test]
fn the_next_node_waits_for_the_updated_one_then_for_restores() {
    let s = spec(V41);
    // The last node is not Ready yet on the new image: the probe names it, the next waits.
    let mut waiting = live(V41).rolling_from(V40, 2, 1);
    waiting.ready = 2;
    let up = decide_with(&s, &waiting, &Probed::default());
    assert_eq!((up.partition, up.probe), (2, Some(Probe::NodeStates)));
    let web2_down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    let up = decide_with(&s, &waiting, &web2_down);
    assert_eq!(up.partition, 2);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-2 not ready")),
        "{:?}",
        up.progress
    );
    // A stale status says nothing about the new partition.
    let mut stale = live(V41).rolling_from(V40, 2, 1);
    stale.current = false;
    assert_eq!(decide_with(&s, &stale, &Probed::default()).probe, None);

    let step_done = live(V41).rolling_from(V40, 2, 1);
    let up = decide_with(&s, &step_done, &Probed::default());
    assert_eq!((up.partition, up.probe), (2, Some(Probe::NodeStates)));

    let busy = Probed {
        restores: Some(busy("web-0", "node web-0 restores 2 cells")),
        ..Probed::default()
    };
    let up = decide_with(&s, &step_done, &busy);
    assert_eq!(up.partition, 2);
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-0"))
    );

    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    let up = decide_with(&s, &step_done, &quiet);
    assert_eq!((up.image.as_str(), up.partition), (V41, 1));
    assert_eq!(up.rolling_from.as_deref(), Some(V40));
}

#[test]
fn the_roll_ends_when_the_first_node_is_updated() {
    let up = decide_with(
        &spec(V41),
        &live(V41).rolling_from(V40, 0, 3),
        &Probed::default(),
    );
    assert_eq!(up, Upgrade::steady(V41, Some(Version::new(0, 4, 1)), 3));
}

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

#[test]
fn removing_nodes_waits_while_a_node_is_down_or_restores() {
    let s = spec(V41);
    let mut three = live(V41);
    // Two wanted, three running, one that stays is not Ready: three are kept.
    three.ready = 2;
    let down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-0".into()],
        }),
        ..Probed::default()
    };
    let up = decide(&s, 2, Some(&three.build()), &down);
    assert_eq!(up.keep_replicas, Some(3));
    assert!(
        matches!(up.progress, Progress::WaitingForRestores { ref why } if why.contains("web-0 not ready")),
        "{:?}",
        up.progress
    );
    // The node removed is the one down: it goes.
    let removed_down = Probed {
        restores: Some(Restores {
            busy: Vec::new(),
            unready: vec!["web-2".into()],
        }),
        ..Probed::default()
    };
    assert_eq!(
        decide(&s, 2, Some(&three.build()), &removed_down).keep_replicas,
        None
    );
    assert_eq!(
        up.partition, 3,
        "no pod of the kept three takes a new template"
    );
    // All Ready: the states are read first, then a restore holds it, then it goes.
    three.ready = 3;
    let up = decide(&s, 2, Some(&three.build()), &Probed::default());
    assert_eq!(
        (up.keep_replicas, up.probe),
        (Some(3), Some(Probe::NodeStates))
    );
    let busy = Probed {
        restores: Some(busy("web-0", "node web-0 restores 1 cells")),
        ..Probed::default()
    };
    assert_eq!(
        decide(&s, 2, Some(&three.build()), &busy).keep_replicas,
        Some(3)
    );
    let quiet = Probed {
        restores: Some(Restores::default()),
        ..Probed::default()
    };
    let up = decide(&s, 2, Some(&three.build()), &quiet);
    assert_eq!((up.keep_replicas, up.partition), (None, 2));
    // Adding nodes, or stopping them all, never waits.
    assert_eq!(
        decide(&s, 4, Some(&three.build()), &Probed::default()).keep_replicas,
        None
    );
    assert_eq!(
        decide(&s, 0, Some(&three.build()), &Probed::default()).keep_replicas,
        None
    );
}
