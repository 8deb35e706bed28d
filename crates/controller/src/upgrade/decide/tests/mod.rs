//! The rollout decision's tests: the fixtures here, the rules one file each.

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

mod full_stop;
mod rolling;
mod scale_in;
