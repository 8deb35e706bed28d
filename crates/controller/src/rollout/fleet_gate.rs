//! Where one fleet of a wave stands with the rollout's revision, read from the fleet's own
//! status as the fleet controller wrote it: published (status.source), served by every node
//! (status.deployment, Adopted, Ready), or failed (a publish failed for good, a node refused the
//! version, a new Degraded reason, a node restarted or fenced since the wave started, the
//! progress deadline). Pure.

use celld_api::conditions::{ADOPTED, DEGRADED, NODES_FENCING, READY};
use celld_api::contract::lease::FENCE_EXIT_CODE;
use celld_api::rollout::RolloutTarget;
use celld_api::rollout::reasons::RolloutReason;
use celld_api::{Adoption, CelldFleet, PublishPhase};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;

/// What a fleet's status says about the revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    /// Not published yet, or not every node serves it yet.
    Publishing {
        /// The version the revision became in its bucket, once published.
        to: Option<String>,
        /// Nodes serving it, N/M.
        adopted: Option<String>,
        /// What it waits for.
        waiting: String,
    },
    /// Every node serves it and the fleet is Ready.
    Adopted {
        /// The version.
        to: String,
        /// Nodes serving it, N/M.
        adopted: Option<String>,
    },
    /// It failed a gate.
    Failed {
        /// Why.
        reason: RolloutReason,
        /// What a person reads.
        message: String,
        /// The version, when published.
        to: Option<String>,
    },
}

/// What the gate needs to judge one fleet.
pub struct Judged<'a> {
    /// The rollout's name (the fleet's status.source.rollout names it).
    pub rollout: &'a str,
    /// The revision shipped.
    pub target: &'a RolloutTarget,
    /// The fleet's Degraded reason when it started, if it was Degraded.
    pub degraded_before: Option<&'a str>,
    /// When the fleet started publishing.
    pub started_at: Option<Timestamp>,
    /// How long it may take to serve the revision.
    pub deadline: std::time::Duration,
    /// Now.
    pub now: Timestamp,
}

fn condition<'a>(fleet: &'a CelldFleet, type_: &str) -> Option<&'a Condition> {
    fleet
        .status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
}

fn is_true(fleet: &CelldFleet, type_: &str) -> bool {
    condition(fleet, type_).is_some_and(|c| c.status == "True")
}

/// The fleet's Degraded reason, if it is Degraded.
pub fn degraded_reason(fleet: &CelldFleet) -> Option<String> {
    condition(fleet, DEGRADED)
        .filter(|c| c.status == "True")
        .map(|c| c.reason.clone())
}

/// What stops `fleet` from passing now: a node refusing the revision's version `to` once the
/// bucket names it, a new Degraded reason, fenced nodes.
fn broken(fleet: &CelldFleet, to: Option<&str>, j: &Judged) -> Option<(RolloutReason, String)> {
    let status = fleet.status.as_ref()?;
    let deployed = status.deployment.as_ref().map(|d| d.version.as_str());
    let refused: Vec<String> = status
        .nodes
        .iter()
        .filter(|n| to.is_some() && deployed == to && n.adoption == Adoption::Refused)
        .map(|n| match &n.message {
            Some(m) => format!("{} ({m})", n.name),
            None => n.name.clone(),
        })
        .collect();
    if !refused.is_empty() {
        return Some((
            RolloutReason::VersionRefused,
            format!(
                "nodes refused the version and keep serving the one they had: {}",
                refused.join(", ")
            ),
        ));
    }
    if let Some(c) = condition(fleet, DEGRADED).filter(|c| c.status == "True")
        && Some(c.reason.as_str()) != j.degraded_before
    {
        return Some((
            RolloutReason::NewDegradedReason,
            format!("the fleet became Degraded ({}): {}", c.reason, c.message),
        ));
    }
    let restarted: Vec<String> = status
        .nodes
        .iter()
        .filter_map(|n| Some((n, n.last_restart.as_ref()?)))
        .filter(|(_, r)| j.started_at.is_some_and(|started| r.at.0 >= started))
        .map(|(n, r)| {
            let fence = if r.exit_code == FENCE_EXIT_CODE {
                ": it fenced itself, having lost its lease"
            } else {
                ""
            };
            format!(
                "{} at {} (exit code {}{fence})",
                n.name, r.at.0, r.exit_code
            )
        })
        .collect();
    if !restarted.is_empty() {
        return Some((
            RolloutReason::NodeRestarted,
            format!(
                "nodes restarted since the fleet's wave started: {}",
                restarted.join(", ")
            ),
        ));
    }
    if let Some(c) = condition(fleet, NODES_FENCING).filter(|c| c.status == "True") {
        return Some((RolloutReason::NodeRestarted, c.message.clone()));
    }
    None
}

/// Where `fleet` stands with the revision `j` judges.
pub fn judge(fleet: &CelldFleet, j: &Judged) -> Seen {
    let status = fleet.status.clone().unwrap_or_default();
    let source = status
        .source
        .as_deref()
        .filter(|s| s.rollout.as_deref() == Some(j.rollout));
    let published = source
        .and_then(|s| s.last_published.as_ref())
        .filter(|p| p.revision == j.target.revision);
    let to = published.and_then(|p| p.version.clone());
    if let Some((reason, message)) = broken(fleet, to.as_deref(), j) {
        return Seen::Failed {
            reason,
            message,
            to,
        };
    }
    if published.is_none()
        && let Some(attempt) = source
            .and_then(|s| s.last_attempted.as_ref())
            .filter(|a| a.revision == j.target.revision && a.phase == PublishPhase::Failed)
            .filter(|a| a.failures >= j.target.source.retries)
    {
        return Seen::Failed {
            reason: RolloutReason::PublishFailed,
            message: format!(
                "publishing the revision failed {} times (spec.source.retries), last with Job {}: {}",
                attempt.failures,
                attempt.job,
                attempt.message.as_deref().unwrap_or("no message")
            ),
            to,
        };
    }
    let deployment = status.deployment.as_ref();
    let adopted = deployment
        .filter(|d| Some(&d.version) == to.as_ref())
        .and_then(|d| d.adopted.clone());
    let serving = to.is_some()
        && deployment.map(|d| &d.version) == to.as_ref()
        && is_true(fleet, ADOPTED)
        && is_true(fleet, READY);
    if let (true, Some(version)) = (serving, &to) {
        return Seen::Adopted {
            to: version.clone(),
            adopted,
        };
    }
    let waiting = waiting_for(fleet, to.as_deref());
    let late = j.started_at.is_some_and(|started| {
        j.now.duration_since(started).as_secs()
            > i64::try_from(j.deadline.as_secs()).unwrap_or(i64::MAX)
    });
    if late {
        return Seen::Failed {
            reason: RolloutReason::ProgressDeadlineExceeded,
            message: format!(
                "did not serve the revision within spec.gates.progressDeadline ({}s): {waiting}",
                j.deadline.as_secs()
            ),
            to,
        };
    }
    Seen::Publishing {
        to,
        adopted,
        waiting,
    }
}

/// What a fleet not yet serving the revision waits for, from its conditions.
fn waiting_for(fleet: &CelldFleet, to: Option<&str>) -> String {
    let message = |type_: &str| {
        condition(fleet, type_)
            .filter(|c| c.status != "True")
            .map(|c| format!("{type_}: {}", c.message))
    };
    match to {
        None => message(celld_api::conditions::SOURCE_SYNCED)
            .unwrap_or_else(|| "waiting for the revision to be published".to_string()),
        Some(version) => message(ADOPTED)
            .or_else(|| message(READY))
            .unwrap_or_else(|| format!("waiting for every node to serve version {version}")),
    }
}
