//! What a reconcile probed for a rollout (the nodes' `/state`, the fleet's pods left), and what
//! the rollout asks it to probe next. The [`decide`](super::decide) step reads them.

use k8s_openapi::jiff::Timestamp;

/// What the reconcile must look at before the rollout can go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// Every node's `/state`: may the next node update?
    NodeStates,
    /// The fleet's pods: is every old node gone?
    PodsLeft,
}

/// What the nodes' `/state` and their pods said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Restores {
    /// Each node that restores cells or whose `/state` did not answer, with the sentence.
    pub busy: Vec<(String, String)>,
    /// Each node whose pod is not Ready, or does not exist.
    pub unready: Vec<String>,
}

impl Restores {
    /// Why no node but those of `except` may be replaced now: another node is not Ready or
    /// restores cells (or its state could not be read). None when every other one is serving.
    pub fn holding(&self, except: &[String]) -> Option<String> {
        let other = |node: &String| !except.contains(node);
        let unready: Vec<&str> = self
            .unready
            .iter()
            .filter(|n| other(n))
            .map(String::as_str)
            .collect();
        if !unready.is_empty() {
            return Some(format!(
                "{} not ready; no node is replaced while another is down",
                unready.join(", ")
            ));
        }
        self.busy
            .iter()
            .find(|(node, _)| other(node))
            .map(|(_, why)| why.clone())
    }
}

/// What the reconcile probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probed {
    /// The nodes' restores, when probed.
    pub restores: Option<Restores>,
    /// Pods of the fleet that still exist, when probed.
    pub pods_left: Option<usize>,
    /// When it probed.
    pub at: Timestamp,
}

impl Default for Probed {
    fn default() -> Self {
        Self {
            restores: None,
            pods_left: None,
            at: Timestamp::UNIX_EPOCH,
        }
    }
}
