//! Whether the fleet is in the middle of something that a change of its node count must not
//! cut into: its StatefulSet rolling out (nodes starting, a new pod template), a change of
//! celld image, nodes adopting a Worker version, a publish of spec.source. Read from the live
//! StatefulSet and the status the operator last wrote. Pure.

use celld_api::conditions::{self, ADOPTED, PROGRESSING};
use celld_api::reasons::Reason;
use celld_api::{CelldFleetStatus, PublishPhase};
use k8s_openapi::api::apps::v1::StatefulSet;

/// What the fleet is busy with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Busy {
    /// RolloutInProgress, UpgradeInProgress, AdoptionInProgress or PublishInProgress.
    pub reason: Reason,
    /// What, in words.
    pub message: String,
    /// Whether nodes may still be added: only a change of celld image holds a scale-up too (a
    /// new node would start on one image or the other while celld's upgrade rule is followed).
    pub holds_up: bool,
}

/// What the fleet is busy with, if anything, from its `live` StatefulSet and the `status` last
/// written.
pub fn busy(live: Option<&StatefulSet>, status: Option<&CelldFleetStatus>) -> Option<Busy> {
    let conditions = status.map_or(&[][..], |s| s.conditions.as_slice());
    let upgrading = conditions::find(conditions, PROGRESSING).filter(|c| {
        c.status == "True"
            && [
                Reason::RollingUpgrade,
                Reason::WaitingForRestores,
                Reason::WaitingForSettings,
                Reason::FullStop,
            ]
            .iter()
            .any(|r| r.as_str() == c.reason)
    });
    if let Some(c) = upgrading {
        return Some(Busy {
            reason: Reason::UpgradeInProgress,
            message: format!("a change of celld image is under way ({})", c.message),
            holds_up: true,
        });
    }
    if let Some(why) = live.and_then(rolling) {
        return Some(Busy {
            reason: Reason::RolloutInProgress,
            message: why,
            holds_up: false,
        });
    }
    if let Some(c) = conditions::find(conditions, ADOPTED)
        .filter(|c| c.status == "False" && c.reason == Reason::Adopting.as_str())
    {
        return Some(Busy {
            reason: Reason::AdoptionInProgress,
            message: format!("nodes adopt a Worker version ({})", c.message),
            holds_up: false,
        });
    }
    let publishing = status
        .and_then(|s| s.source.as_ref())
        .and_then(|s| s.last_attempted.as_ref())
        .filter(|a| a.phase == PublishPhase::Running);
    publishing.map(|a| Busy {
        reason: Reason::PublishInProgress,
        message: format!(
            "revision {} of spec.source is being published (Job {})",
            a.revision, a.job
        ),
        holds_up: false,
    })
}

/// Why the StatefulSet is still rolling out, if it is: its controller has not seen its spec
/// yet, pods run an older template, or nodes are missing or not ready.
fn rolling(sts: &StatefulSet) -> Option<String> {
    let wanted = sts.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let Some(status) = sts.status.as_ref() else {
        return Some("the StatefulSet has no status yet".into());
    };
    if status.observed_generation < sts.metadata.generation {
        return Some("the StatefulSet controller has not acted on its spec yet".into());
    }
    if status.update_revision.is_some() && status.current_revision != status.update_revision {
        return Some(format!(
            "nodes move to a new pod template ({} of {wanted} updated)",
            status.updated_replicas.unwrap_or(0)
        ));
    }
    let ready = status.ready_replicas.unwrap_or(0);
    (status.replicas != wanted || ready < wanted)
        .then(|| format!("{ready} of {wanted} nodes are ready"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{StatefulSetSpec, StatefulSetStatus};

    fn sts(replicas: i32, ready: i32, current: &str, update: &str) -> StatefulSet {
        StatefulSet {
            metadata: kube::api::ObjectMeta {
                generation: Some(2),
                ..Default::default()
            },
            spec: Some(StatefulSetSpec {
                replicas: Some(replicas),
                ..Default::default()
            }),
            status: Some(StatefulSetStatus {
                observed_generation: Some(2),
                replicas,
                ready_replicas: Some(ready),
                updated_replicas: Some(ready),
                current_revision: Some(current.into()),
                update_revision: Some(update.into()),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_settled_statefulset_is_not_busy_a_rolling_one_is() {
        assert_eq!(busy(Some(&sts(3, 3, "a", "a")), None), None);
        let starting = busy(Some(&sts(3, 2, "a", "a")), None).unwrap();
        assert_eq!(starting.reason, Reason::RolloutInProgress);
        assert_eq!(starting.message, "2 of 3 nodes are ready");
        assert!(!starting.holds_up);
        let template = busy(Some(&sts(3, 3, "a", "b")), None).unwrap();
        assert!(
            template.message.contains("new pod template"),
            "{template:?}"
        );
    }

    #[test]
    fn an_upgrade_holds_both_ways_a_publish_only_scale_in() {
        let mut status = CelldFleetStatus::default();
        status.conditions.push(conditions::make(
            &[],
            PROGRESSING,
            Some(true),
            Reason::RollingUpgrade.as_str(),
            "node web-2 moves to v0.6.1",
            Some(2),
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        ));
        let upgrade = busy(Some(&sts(3, 3, "a", "a")), Some(&status)).unwrap();
        assert_eq!(upgrade.reason, Reason::UpgradeInProgress);
        assert!(upgrade.holds_up);
        let publishing = CelldFleetStatus {
            source: Some(Box::new(celld_api::SourceStatus {
                last_attempted: Some(celld_api::PublishAttempt {
                    revision: "r1".into(),
                    job: "web-src-1".into(),
                    ..Default::default()
                }),
                ..Default::default()
            })),
            ..Default::default()
        };
        let publish = busy(Some(&sts(3, 3, "a", "a")), Some(&publishing)).unwrap();
        assert_eq!(publish.reason, Reason::PublishInProgress);
        assert!(!publish.holds_up);
    }
}
