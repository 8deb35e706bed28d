//! Adopted: whether every ready node serves the Worker version the deployment pointer names,
//! from the reconcile's reading of the nodes' states; with each node's standing
//! (status.nodes) and `N/M` (status.deployment.adopted). While the bucket or the storage
//! cannot be read, the nodes last read are kept and the condition is Unknown.

use super::{Cond, NodeCounts, cond};
use crate::buckets::pointer::Pointer;
use crate::fleet::status::observation::{Observed, ObservedStorage};
use crate::nodes::adoption::{Answer, NodeVerdict, Reading};
use crate::nodes::unanswered::Unanswered;
use celld_api::conditions::ADOPTED;
use celld_api::contract::INTERNAL_PORT;
use celld_api::reasons::Reason;
use celld_api::{Adoption, CelldFleetStatus, NodeStatus};

/// The most nodes a message names; the rest are counted.
const MOST_NAMED: usize = 5;

/// What the Adopted condition reports.
pub struct Adopted {
    /// The condition.
    pub condition: Cond,
    /// Every node's standing (status.nodes).
    pub nodes: Vec<NodeStatus>,
    /// `N/M` (status.deployment.adopted), when a Worker is deployed.
    pub ratio: Option<String>,
}

/// The Adopted condition of the fleet `o` observed with `nodes`; `previous` gives the nodes
/// last read while the bucket cannot be read.
pub fn condition(previous: Option<&CelldFleetStatus>, o: &Observed, nodes: &NodeCounts) -> Adopted {
    let kept = |reason: Reason, message: String| Adopted {
        condition: cond(ADOPTED, None, reason, message),
        nodes: previous.map(|p| p.nodes.clone()).unwrap_or_default(),
        ratio: previous
            .and_then(|p| p.deployment.as_ref())
            .and_then(|d| d.adopted.clone()),
    };
    let deployment = match &o.storage {
        ObservedStorage::Failed(_) => {
            return kept(
                Reason::StorageUnresolved,
                "the deployed version cannot be read until the storage resolves".into(),
            );
        }
        ObservedStorage::Resolved(_, Pointer::Missing) => {
            return Adopted {
                condition: cond(
                    ADOPTED,
                    None,
                    Reason::NoDeployment,
                    "no Worker is deployed yet; see the Deployed condition",
                ),
                nodes: Vec::new(),
                ratio: None,
            };
        }
        ObservedStorage::Resolved(_, Pointer::Unknown(_)) => {
            return kept(
                Reason::BucketUnreadable,
                "the deployment pointer could not be read; see the Deployed condition".into(),
            );
        }
        ObservedStorage::Resolved(_, Pointer::NoCredentials(_)) => {
            return kept(
                Reason::NoOperatorCredentials,
                "the deployment pointer could not be read; see the Deployed condition".into(),
            );
        }
        ObservedStorage::Resolved(_, Pointer::Deployed(d)) => d,
    };
    let version = &deployment.version;
    let Some(reading) = o.nodes.as_deref().filter(|r| &r.version == version) else {
        let mut unread = kept(
            Reason::NodeStateUnreadable,
            format!("the nodes were not read since version {version} was deployed"),
        );
        // The nodes last read stay listed, but their count was of another version.
        let same = previous
            .and_then(|p| p.deployment.as_ref())
            .is_some_and(|d| &d.version == version);
        if !same {
            unread.ratio = None;
        }
        return unread;
    };
    if nodes.target == 0 || reading.nodes.is_empty() {
        return Adopted {
            condition: cond(
                ADOPTED,
                None,
                Reason::ScaledToZero,
                format!("no node runs to serve version {version}"),
            ),
            nodes: Vec::new(),
            ratio: Some("0/0".into()),
        };
    }
    let summary = reading.summary(nodes.ready);
    let ratio = summary.ratio();
    let named = |adoption: Adoption| names(&summary.named(adoption));
    let condition = match summary.verdict {
        NodeVerdict::Adopted => {
            let not_ready = summary.named(Adoption::NotReady);
            let others = if not_ready.is_empty() {
                String::new()
            } else {
                format!("; not ready: {}", list(&not_ready, |n| n.name.clone()))
            };
            cond(
                ADOPTED,
                Some(true),
                Reason::Adopted,
                format!("every ready node serves version {version} ({ratio}{others})"),
            )
        }
        NodeVerdict::Refused => cond(
            ADOPTED,
            Some(false),
            Reason::VersionRefused,
            format!(
                "version {version} was refused by {} of {} nodes, which keep serving the version they had: {}. {ratio} nodes serve it; nodes that start or read the pointer later try it too. Deploy a version every node loads (kubectl celld rollback {name} goes back to the one before) and see why with kubectl celld logs {name}",
                summary.named(Adoption::Refused).len(),
                summary.nodes.len(),
                named(Adoption::Refused),
                name = o.name,
            ),
        ),
        NodeVerdict::Unreadable => cond(
            ADOPTED,
            None,
            Reason::NodeStateUnreadable,
            format!(
                "{ratio} nodes serve version {version}; not taken as serving it, since their state could not be read: {}{}",
                named(Adoption::Unreadable),
                if unreachable(reading) {
                    reach()
                } else {
                    String::new()
                },
            ),
        ),
        NodeVerdict::Adopting => cond(
            ADOPTED,
            Some(false),
            Reason::Adopting,
            format!(
                "{ratio} nodes serve version {version}; {}",
                named(Adoption::Adopting)
            ),
        ),
        NodeVerdict::NoneReady => cond(
            ADOPTED,
            Some(false),
            Reason::NodesNotReady,
            format!("no node is ready to serve version {version} yet"),
        ),
    };
    Adopted {
        condition,
        nodes: summary.nodes,
        ratio: Some(ratio),
    }
}

/// What to do when the operator cannot reach a node.
fn reach() -> String {
    format!(
        ". The operator reads each node's state on port {INTERNAL_PORT} of its pod: run it in the cluster and let its pods through the fleet's NetworkPolicy, or point --node-api-connect-to at a forwarding proxy"
    )
}

/// Whether some node of `reading` could not be reached at all.
fn unreachable(reading: &Reading) -> bool {
    reading
        .nodes
        .iter()
        .any(|(_, a)| *a == Answer::Unreadable(Unanswered::Unreachable))
}

/// `NODE (why)` for each of `nodes`, at most [`MOST_NAMED`].
fn names(nodes: &[&NodeStatus]) -> String {
    list(nodes, |n| match &n.message {
        Some(why) => format!("{} ({why})", n.name),
        None => n.name.clone(),
    })
}

/// The first [`MOST_NAMED`] of `nodes` as `show` writes them, and how many more.
fn list(nodes: &[&NodeStatus], show: impl Fn(&NodeStatus) -> String) -> String {
    let mut shown: Vec<String> = nodes.iter().take(MOST_NAMED).map(|n| show(n)).collect();
    if nodes.len() > MOST_NAMED {
        shown.push(format!("and {} more", nodes.len() - MOST_NAMED));
    }
    shown.join("; ")
}
