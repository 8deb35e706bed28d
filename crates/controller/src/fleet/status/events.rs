//! The Events a fleet's changes are worth, decided here and published by the status
//! [writer](crate::fleet::status::write): children applied or pruned, conditions that changed status or
//! reason, steps of an upgrade, a new Worker version, and one Warning per distinct failure.
//! Pure: nothing here talks to the API server.
//!
//! A failure that persists is published once: the fleet's Degraded condition lists every
//! failure already reported, so the next retry (even by another operator replica) finds it
//! there and stays quiet. kube's Recorder would otherwise patch the Event again on every retry.

use crate::buckets::pointer::Pointer;
use crate::failure::Failure;
use crate::status::note::Note;
use celld_api::reasons::Reason;
use celld_api::{CelldFleetStatus, conditions};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::events::EventType;

/// The Events listing the children created, changed or pruned.
pub fn applied(changed: &[String], pruned: &[String]) -> Vec<Note> {
    let mut notes = Vec::new();
    if !changed.is_empty() {
        notes.push(Note::new(
            EventType::Normal,
            Reason::Applied.as_str(),
            format!("applied {}", changed.join(", ")),
        ));
    }
    if !pruned.is_empty() {
        notes.push(Note::new(
            EventType::Normal,
            Reason::Pruned.as_str(),
            format!("deleted {} (no longer in the spec)", pruned.join(", ")),
        ));
    }
    notes
}

/// The Warning of a drift between a fleet's spec.source and its bucket.
pub fn drifted(warning: String) -> Note {
    Note::new(EventType::Warning, Reason::Drifted.as_str(), warning)
}

/// A change of the node count spec.autoscaling made in `status` (its last decision is not the
/// one `previous` shows): a Normal Event, with the direction and the signal for the metric.
pub fn scaled(
    previous: Option<&CelldFleetStatus>,
    status: &CelldFleetStatus,
) -> Option<(Note, &'static str, String)> {
    let decision = status.autoscaling.as_ref()?.last_decision.as_ref()?;
    let before = previous
        .and_then(|p| p.autoscaling.as_ref())
        .and_then(|a| a.last_decision.as_ref());
    if before == Some(decision) {
        return None;
    }
    let (reason, direction) = if decision.to > decision.from {
        (Reason::ScaledUp, "up")
    } else {
        (Reason::ScaledDown, "down")
    };
    Some((
        Note::new(EventType::Normal, reason.as_str(), decision.message.clone()),
        direction,
        decision.reason.clone(),
    ))
}

/// The failures of `failures` not yet reported in `previous`: those whose fingerprint the
/// previous Degraded=True condition does not carry.
pub fn unreported<'a>(
    previous: Option<&CelldFleetStatus>,
    failures: &'a [Failure],
) -> Vec<&'a Failure> {
    let reported = previous
        .and_then(|p| conditions::find(&p.conditions, conditions::DEGRADED))
        .filter(|c| c.status == "True")
        .map_or("", |c| c.message.as_str());
    failures
        .iter()
        .filter(|f| !reported.contains(f.fingerprint.as_str()))
        .collect()
}

/// One Warning for every failure not reported yet.
pub fn failures(previous: Option<&CelldFleetStatus>, failures: &[Failure]) -> Vec<Note> {
    unreported(previous, failures)
        .into_iter()
        .map(|f| Note::new(EventType::Warning, f.reason.as_str(), f.message.clone()))
        .collect()
}

/// Whether a condition change needs an Event of its own. Progressing flips on every rollout (a
/// rollout past its deadline is worth a Warning all the same), and so does Adopted (a refusal
/// is worth a Warning, and the end of an adoption a Normal Event); a
/// Ready=False that only points at another condition (storage, deployment, route) would repeat
/// that condition's Event; a Degraded=True, or a condition whose reason is one of the current
/// failures', repeats the failures' own Events.
fn worth_an_event(c: &Condition, failures: &[Failure]) -> bool {
    let echo = echoes(c);
    // A drift has its own Warning, naming both versions.
    let drift = c.type_ == conditions::SOURCE_SYNCED && c.reason == Reason::Drifted.as_str();
    let failing = !failures.is_empty()
        && ((c.type_ == conditions::DEGRADED && c.status == "True")
            || (c.status != "True" && failures.iter().any(|f| f.reason.as_str() == c.reason)));
    let stuck = c.reason == Reason::ProgressDeadlineExceeded.as_str();
    // Of Adopted, only a refusal and the end of an adoption: nodes switching, starting or not
    // answering are what a deploy looks like, and the other conditions tell of the bucket.
    let adoption = c.type_ != conditions::ADOPTED
        || [Reason::Adopted, Reason::VersionRefused]
            .iter()
            .any(|r| r.as_str() == c.reason);
    // Reconciling and Stalled restate the other conditions for GitOps tools; a scale has its
    // own Event.
    let restated = c.type_ == conditions::RECONCILING
        || c.type_ == conditions::STALLED
        || (c.type_ == conditions::AUTOSCALING && c.status == "True");
    (c.type_ != conditions::PROGRESSING || stuck)
        && adoption
        && !restated
        && !echo
        && !failing
        && !drift
}

/// Whether `c` is a Ready=False that only points at another condition (storage, deployment,
/// route, source), whose own Events tell of it, and of its end.
fn echoes(c: &Condition) -> bool {
    c.type_ == conditions::READY
        && c.status != "True"
        && [
            Reason::StorageUnresolved,
            Reason::NoDeployment,
            Reason::RouteNotReady,
        ]
        .iter()
        .chain(&SOURCE_REASONS)
        .any(|r| r.as_str() == c.reason)
}

/// The reasons of SourceSynced, which Ready repeats while the bucket does not serve the
/// source's revision.
const SOURCE_REASONS: [Reason; 7] = [
    Reason::Publishing,
    Reason::PublishFailed,
    Reason::Drifted,
    Reason::SourceNotReady,
    Reason::SourceNotFound,
    Reason::ConcurrentWriter,
    Reason::BucketUnreadable,
];

/// Whether a condition is worth a Warning: Degraded, DurabilityAtRisk and NodesFencing when True,
/// SettingsHeld for an image that must change; any
/// other when not True, but for SourceSynced only a publish
/// that failed for good, a source that cannot be found and a second writer (a publish under
/// way, a suspension or a source getting ready are what it looks like at work).
fn warns(c: &Condition) -> bool {
    if [
        conditions::DEGRADED,
        conditions::DURABILITY_AT_RISK,
        conditions::NODES_FENCING,
    ]
    .contains(&c.type_.as_str())
    {
        return c.status == "True";
    }
    // Held until the nodes get there is a step of a rollout; held for an image is not.
    if c.type_ == conditions::SETTINGS_HELD {
        return c.reason == Reason::HeldForImage.as_str();
    }
    if c.type_ == conditions::SOURCE_SYNCED {
        return c.status == "False"
            && [
                Reason::PublishFailed,
                Reason::SourceNotFound,
                Reason::ConcurrentWriter,
            ]
            .iter()
            .any(|r| r.as_str() == c.reason);
    }
    c.status == "False" && c.reason != Reason::NodesNotReady.as_str()
}

const UPGRADE_REASONS: [Reason; 4] = [
    Reason::RollingUpgrade,
    Reason::WaitingForRestores,
    Reason::WaitingForSettings,
    Reason::FullStop,
];

fn upgrading(c: Option<&Condition>) -> bool {
    c.is_some_and(|c| {
        c.type_ == conditions::PROGRESSING && UPGRADE_REASONS.iter().any(|r| r.as_str() == c.reason)
    })
}

/// The Event a change of celld image is worth, if any: each step (a node updated, a node
/// stopped, a wait for restores begins) and the end. `image` is the image the fleet moves to.
fn upgrade_event(
    old: Option<&Condition>,
    new: Option<&Condition>,
    image: &str,
) -> Option<(String, String)> {
    match (upgrading(old), upgrading(new), new) {
        (_, true, Some(c)) => {
            let same_reason = old.is_some_and(|o| o.reason == c.reason);
            let same_step = old.is_some_and(|o| o.message == c.message)
                || c.reason == Reason::WaitingForRestores.as_str();
            (!(same_reason && same_step))
                .then(|| (c.reason.clone(), format!("{}: {}", c.type_, c.message)))
        }
        (true, false, Some(c)) if c.reason == Reason::ProgressDeadlineExceeded.as_str() => None,
        (true, false, _) => Some((
            Reason::UpgradeFinished.as_str().to_string(),
            format!("every node runs {image}"),
        )),
        _ => None,
    }
}

/// The Events for every condition whose status or reason changed, for the steps of a change
/// of celld image (the fleet moves to `image`), and for a new Worker version.
pub fn transitions(
    previous: Option<&CelldFleetStatus>,
    status: &CelldFleetStatus,
    image: &str,
    pointer: Option<&Pointer>,
    failures: &[Failure],
) -> Vec<Note> {
    let mut notes = Vec::new();
    let before = previous.map_or(&[][..], |p| p.conditions.as_slice());
    if let Some((reason, note)) = upgrade_event(
        conditions::find(before, conditions::PROGRESSING),
        conditions::find(&status.conditions, conditions::PROGRESSING),
        image,
    ) {
        notes.push(Note::new(EventType::Normal, reason, note));
    }
    for c in &status.conditions {
        if !worth_an_event(c, failures) {
            continue;
        }
        let old = conditions::find(before, &c.type_);
        if old.is_some_and(|o| o.status == c.status && o.reason == c.reason) {
            continue;
        }
        // Ready again after it only pointed at another condition: that one's Event says so
        // (a publish done is Synced, a store back is Resolved).
        if c.status == "True" && old.is_some_and(echoes) {
            continue;
        }
        // Nodes not ready yet is what a rollout looks like, not a fault.
        let bad = warns(c);
        if old.is_none() && !bad {
            continue;
        }
        let type_ = if bad {
            EventType::Warning
        } else {
            EventType::Normal
        };
        notes.push(Note::new(
            type_,
            c.reason.clone(),
            format!("{}: {}", c.type_, c.message),
        ));
    }
    if let Some(Pointer::Deployed(d)) = pointer {
        let old = previous
            .and_then(|p| p.deployment.as_ref())
            .map(|d| d.version.as_str());
        if old.is_some_and(|v| v != d.version) {
            notes.push(Note::new(
                EventType::Normal,
                Reason::WorkerVersionChanged.as_str(),
                format!("the fleet now serves Worker version {}", d.version),
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use k8s_openapi::jiff::Timestamp;

    fn refused(kind: &str, message: &str) -> Failure {
        Failure::child(
            kind,
            "web",
            "apply",
            &Error::kube(
                "applying",
                kube::Error::Api(Box::new(
                    kube::core::Status::failure(message, "Invalid").with_code(422),
                )),
            ),
        )
    }

    fn unavailable(kind: &str, message: &str) -> Failure {
        Failure::child(
            kind,
            "web",
            "apply",
            &Error::kube(
                "applying",
                kube::Error::Api(Box::new(
                    kube::core::Status::failure(message, "ServiceUnavailable").with_code(503),
                )),
            ),
        )
    }

    fn degraded(failures: &[Failure]) -> CelldFleetStatus {
        let message = crate::failure::summary(failures);
        CelldFleetStatus {
            conditions: vec![conditions::make(
                &[],
                conditions::DEGRADED,
                Some(true),
                failures[0].reason.as_str(),
                message,
                Some(1),
                Timestamp::UNIX_EPOCH,
            )],
            ..CelldFleetStatus::default()
        }
    }

    #[test]
    fn a_failure_is_reported_once() {
        let failing = [refused("Service", "spec.ports[1].name: Duplicate value")];
        assert_eq!(unreported(None, &failing).len(), 1);
        assert!(unreported(Some(&degraded(&failing)), &failing).is_empty());
    }

    #[test]
    fn a_new_failure_next_to_a_reported_one_is_reported() {
        let service = refused("Service", "spec.ports[1].name: Duplicate value");
        let ingress = refused("Ingress", "spec.rules[0].host: Invalid value");
        let before = degraded(std::slice::from_ref(&service));
        let now = [service, ingress.clone()];
        assert_eq!(unreported(Some(&before), &now), vec![&ingress]);
        let other_field = [refused("Service", "spec.type: Unsupported value")];
        assert_eq!(unreported(Some(&before), &other_field).len(), 1);
    }

    #[test]
    fn an_outage_whose_message_changes_is_still_one_failure() {
        let first = [unavailable("StatefulSet", "request 1 timed out")];
        let second = [unavailable("StatefulSet", "request 2 timed out")];
        assert!(unreported(Some(&degraded(&first)), &second).is_empty());
    }

    #[test]
    fn a_failure_reported_before_a_recovery_is_reported_again() {
        let failing = [refused("Service", "spec.ports[1].name: Duplicate value")];
        let mut healed = degraded(&failing);
        healed.conditions[0].status = "False".into();
        assert_eq!(unreported(Some(&healed), &failing).len(), 1);
    }

    #[test]
    fn an_upgrade_publishes_its_steps_and_its_end() {
        let progressing = |reason: Reason, message: &str| {
            conditions::make(
                &[],
                conditions::PROGRESSING,
                Some(true),
                reason.as_str(),
                message,
                Some(1),
                Timestamp::UNIX_EPOCH,
            )
        };
        let stable = progressing(Reason::Stable, "3/3 nodes ready and up to date");
        let one = progressing(Reason::RollingUpgrade, "1/3 nodes updated");
        let two = progressing(Reason::RollingUpgrade, "2/3 nodes updated");
        let wait = progressing(Reason::WaitingForRestores, "node web-0 reports 2 cells");
        let wait_less = progressing(Reason::WaitingForRestores, "node web-0 reports 1 cells");
        let event = |old: &Condition, new: &Condition| upgrade_event(Some(old), Some(new), "img");
        assert_eq!(
            event(&stable, &one).map(|e| e.0).as_deref(),
            Some("RollingUpgrade")
        );
        assert!(event(&one, &one).is_none());
        assert!(event(&one, &two).is_some(), "each node updated is an Event");
        assert_eq!(
            event(&two, &wait).map(|e| e.0).as_deref(),
            Some("WaitingForRestores")
        );
        assert!(event(&wait, &wait_less).is_none(), "a wait is one Event");
        assert_eq!(
            event(&two, &stable),
            Some(("UpgradeFinished".into(), "every node runs img".into()))
        );
        assert!(event(&stable, &stable).is_none());
    }

    #[test]
    fn a_rollout_past_its_deadline_is_one_warning_and_no_upgrade_end() {
        let progressing = |status: bool, reason: Reason, message: &str| CelldFleetStatus {
            conditions: vec![conditions::make(
                &[],
                conditions::PROGRESSING,
                Some(status),
                reason.as_str(),
                message,
                Some(1),
                Timestamp::UNIX_EPOCH,
            )],
            ..CelldFleetStatus::default()
        };
        let rolling = progressing(true, Reason::RollingUpgrade, "1/3 nodes updated");
        let stuck = progressing(
            false,
            Reason::ProgressDeadlineExceeded,
            "the rollout did not finish within 600 s (spec.progressDeadlineSeconds), held by web-1 (not ready): 1/3 nodes updated",
        );
        let notes = transitions(Some(&rolling), &stuck, "img", None, &[]);
        assert_eq!(notes.len(), 1, "{notes:#?}");
        assert_eq!(notes[0].type_, EventType::Warning);
        assert_eq!(notes[0].reason, "ProgressDeadlineExceeded");
        assert!(
            notes[0].note.contains("held by web-1 (not ready)"),
            "{}",
            notes[0].note
        );
        // Still stuck, with other holders: no Event again.
        let still = progressing(
            false,
            Reason::ProgressDeadlineExceeded,
            "the rollout did not finish within 600 s (spec.progressDeadlineSeconds), held by web-2 (not ready): 2/3 nodes updated",
        );
        assert!(transitions(Some(&stuck), &still, "img", None, &[]).is_empty());
    }

    /// The condition `type_` with `status` and `reason`.
    fn cond(type_: &str, status: bool, reason: Reason) -> Condition {
        conditions::make(
            &[],
            type_,
            Some(status),
            reason.as_str(),
            "m",
            Some(1),
            Timestamp::UNIX_EPOCH,
        )
    }

    #[test]
    fn conditions_that_echo_a_failure_publish_nothing_of_their_own() {
        let failing = [refused("Service", "bad")];
        let degraded = cond(conditions::DEGRADED, true, Reason::ChildRejected);
        let ready = cond(conditions::READY, false, Reason::ChildRejected);
        let healed = cond(conditions::DEGRADED, false, Reason::AsExpected);
        assert!(!worth_an_event(&degraded, &failing));
        assert!(!worth_an_event(&ready, &failing));
        assert!(worth_an_event(&healed, &[]));
        assert!(
            worth_an_event(
                &cond(conditions::DEGRADED, true, Reason::GatewayAPIMissing),
                &[]
            ),
            "a Degraded without failures (no Gateway API) keeps its own Event"
        );
    }

    #[test]
    fn ready_again_after_pointing_at_another_condition_is_that_conditions_event_alone() {
        let with = |ready: (bool, Reason), synced: (bool, Reason)| CelldFleetStatus {
            conditions: [
                (conditions::READY, ready),
                (conditions::SOURCE_SYNCED, synced),
            ]
            .into_iter()
            .map(|(type_, (status, reason))| cond(type_, status, reason))
            .collect(),
            ..CelldFleetStatus::default()
        };
        let publishing = with((false, Reason::Publishing), (false, Reason::Publishing));
        let done = with((true, Reason::Serving), (true, Reason::Synced));
        let reasons = |before: &CelldFleetStatus, after: &CelldFleetStatus| {
            transitions(Some(before), after, "img", None, &[])
                .into_iter()
                .map(|n| n.reason)
                .collect::<Vec<_>>()
        };
        assert_eq!(reasons(&publishing, &done), ["Synced"]);
        // Ready=False of its own (nodes not ready) tells of its end.
        let unready = with((false, Reason::NodesNotReady), (true, Reason::Synced));
        assert_eq!(reasons(&unready, &done), ["Serving"]);
    }
}
