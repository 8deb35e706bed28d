//! Which Worker version every node serves, against the version the deployment pointer names:
//! from one [`Reading`] of the nodes' states (and the answers of the reloads sent to nodes
//! behind), each node's standing ([`NodeStatus`]) and the fleet's Adopted condition
//! ([`NodeVerdict`]). A state that cannot be read is never taken as adopted. Pure.

use crate::nodes::unanswered::Unanswered;
use celld_api::contract::node_api::NodeState;
use celld_api::contract::node_api::Reload;
use celld_api::{Adoption, NodeStatus};

/// What one node answered.
#[derive(Debug, Clone, PartialEq, Eq)]
#[expect(
    clippy::large_enum_variant,
    reason = "nearly every answer is a state: boxing it would cost an allocation per node read"
)]
pub enum Answer {
    /// Its state, and what it answered to a reload if it was behind and was sent one.
    State(NodeState, Option<Reload>),
    /// Its state could not be read: why.
    Unreadable(Unanswered),
}

/// The states of a fleet's nodes, read for the version the pointer names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reading {
    /// The version the pointer names.
    pub version: String,
    /// Every node the fleet runs (pod name) and its answer, in ordinal order.
    pub nodes: Vec<(String, Answer)>,
}

/// The fleet's Adopted condition, before it is worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeVerdict {
    /// Every ready node serves the version.
    Adopted,
    /// Some nodes still switch to it.
    Adopting,
    /// Some nodes refused it.
    Refused,
    /// Some node's state could not be read.
    Unreadable,
    /// No node is ready.
    NoneReady,
}

/// Each node's standing and the fleet's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Every node, in ordinal order.
    pub nodes: Vec<NodeStatus>,
    /// Nodes serving the version.
    pub adopted: usize,
    /// The fleet's verdict.
    pub verdict: NodeVerdict,
}

impl Summary {
    /// `N/M`: nodes serving the version of all nodes.
    pub fn ratio(&self) -> String {
        format!("{}/{}", self.adopted, self.nodes.len())
    }

    /// The nodes whose standing is `adoption`, with their messages.
    pub fn named(&self, adoption: Adoption) -> Vec<&NodeStatus> {
        self.nodes
            .iter()
            .filter(|n| n.adoption == adoption)
            .collect()
    }
}

impl Reading {
    /// Whether some node should be read again soon: it serves another version and switches to
    /// it, or was told to and said it did.
    pub fn pending(&self) -> bool {
        self.nodes
            .iter()
            .any(|(_, answer)| matches!(standing(&self.version, answer), (Adoption::Adopting, _)))
    }

    /// Each node's standing, with `ready` of the fleet's nodes ready: nodes that did not answer
    /// count as starting or stopping while as many are not ready, as unreadable otherwise.
    pub fn summary(&self, ready: i32) -> Summary {
        let unready = self.nodes.len().saturating_sub(ready.max(0) as usize);
        let silent = self
            .nodes
            .iter()
            .filter(|(_, a)| matches!(a, Answer::Unreadable(_)))
            .count();
        let nodes: Vec<NodeStatus> = self
            .nodes
            .iter()
            .map(|(pod, answer)| {
                let (mut adoption, message) = standing(&self.version, answer);
                if matches!(answer, Answer::Unreadable(_)) && silent <= unready {
                    adoption = Adoption::NotReady;
                }
                let state = match answer {
                    Answer::State(state, _) => Some(state),
                    Answer::Unreadable(_) => None,
                };
                NodeStatus {
                    name: pod.clone(),
                    version: state.and_then(|s| s.version().map(str::to_string)),
                    adoption,
                    message,
                    restoring: state.map(|s| s.restoring),
                    last_restart: None,
                }
            })
            .collect();
        let any = |a: Adoption| nodes.iter().any(|n| n.adoption == a);
        let adopted = nodes
            .iter()
            .filter(|n| n.adoption == Adoption::Adopted)
            .count();
        let verdict = if any(Adoption::Refused) {
            NodeVerdict::Refused
        } else if any(Adoption::Unreadable) {
            NodeVerdict::Unreadable
        } else if any(Adoption::Adopting) {
            NodeVerdict::Adopting
        } else if adopted == 0 {
            NodeVerdict::NoneReady
        } else {
            NodeVerdict::Adopted
        };
        Summary {
            nodes,
            adopted,
            verdict,
        }
    }
}

/// Where the node that gave `answer` stands with `version`, and why when not adopted.
pub fn standing(version: &str, answer: &Answer) -> (Adoption, Option<String>) {
    let (state, reload) = match answer {
        Answer::Unreadable(why) => return (Adoption::Unreadable, Some(why.to_string())),
        Answer::State(state, reload) => (state, reload),
    };
    let serves = state.version();
    if serves == Some(version) {
        return (Adoption::Adopted, None);
    }
    let serving = serves.map_or_else(
        || "it reports no version".to_string(),
        |v| format!("it serves {v}"),
    );
    match reload {
        Some(Reload::Refused(why)) => (
            Adoption::Refused,
            Some(format!("refused {version}: {why}; {serving}")),
        ),
        Some(Reload::NoPointer(why)) => (
            Adoption::Unreadable,
            Some(format!(
                "its reload found no deployment pointer ({why}); {serving}"
            )),
        ),
        Some(Reload::Unexpected(code, what)) => (
            Adoption::Unreadable,
            Some(format!(
                "its reload answered HTTP {code} ({what}); {serving}"
            )),
        ),
        Some(Reload::Adopted | Reload::Unchanged) | None => (
            Adoption::Adopting,
            Some(if state.swapping() {
                format!("{serving} and is switching to {version}")
            } else {
                format!("{serving}; it reads the pointer again within 30 s")
            }),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::contract::node_api::NodeDeployment;

    const V: &str = "00000000000000b2";
    const OLD: &str = "00000000000000a1";

    fn serving(version: &str, swapping: bool) -> Answer {
        Answer::State(
            NodeState {
                restoring: 0,
                deployment: Some(NodeDeployment {
                    version: Some(version.into()),
                    swapping,
                }),
                ..NodeState::default()
            },
            None,
        )
    }

    fn reading(answers: Vec<Answer>) -> Reading {
        Reading {
            version: V.into(),
            nodes: answers
                .into_iter()
                .enumerate()
                .map(|(i, a)| (format!("web-{i}"), a))
                .collect(),
        }
    }

    #[test]
    fn every_node_on_the_version_is_adopted() {
        let r = reading(vec![serving(V, false), serving(V, false)]);
        let s = r.summary(2);
        assert_eq!((s.verdict, s.ratio()), (NodeVerdict::Adopted, "2/2".into()));
        assert_eq!(s.nodes[0].version.as_deref(), Some(V));
        assert!(!r.pending());
    }

    #[test]
    fn a_node_on_the_old_version_is_adopting_and_read_again() {
        let r = reading(vec![serving(V, false), serving(OLD, true)]);
        let s = r.summary(2);
        assert_eq!(
            (s.verdict, s.ratio()),
            (NodeVerdict::Adopting, "1/2".into())
        );
        let message = s.nodes[1].message.clone().unwrap();
        assert!(
            message.contains(OLD) && message.contains("switching"),
            "{message}"
        );
        assert!(r.pending());
    }

    #[test]
    fn a_refusal_names_celld_reason_and_stops_the_polling() {
        let refused = Answer::State(
            NodeState {
                restoring: 0,
                deployment: Some(NodeDeployment {
                    version: Some(OLD.into()),
                    swapping: false,
                }),
                ..NodeState::default()
            },
            Some(Reload::Refused("deployment module digest mismatch".into())),
        );
        let r = reading(vec![serving(V, false), refused, serving(OLD, false)]);
        let s = r.summary(3);
        assert_eq!(s.verdict, NodeVerdict::Refused);
        let named = s.named(Adoption::Refused);
        assert_eq!(named.len(), 1);
        assert_eq!(named[0].name, "web-1");
        assert!(
            named[0]
                .message
                .as_deref()
                .unwrap()
                .contains("digest mismatch")
        );
        assert!(r.pending(), "web-2 is still behind without an answer");
    }

    #[test]
    fn a_silent_node_is_not_ready_only_while_the_fleet_says_so() {
        let r = reading(vec![
            serving(V, false),
            Answer::Unreadable(Unanswered::Unreachable),
        ]);
        let starting = r.summary(1);
        assert_eq!(starting.verdict, NodeVerdict::Adopted);
        assert_eq!(starting.nodes[1].adoption, Adoption::NotReady);
        let silent = r.summary(2);
        assert_eq!(silent.verdict, NodeVerdict::Unreadable);
        assert_eq!(silent.ratio(), "1/2");
        assert!(!r.pending());
    }

    #[test]
    fn a_state_without_a_version_is_never_adopted() {
        let bare = Answer::State(
            NodeState {
                restoring: 2,
                ..NodeState::default()
            },
            Some(Reload::NoPointer("no pointer".into())),
        );
        let s = reading(vec![bare]).summary(1);
        assert_eq!(s.verdict, NodeVerdict::Unreadable);
        assert_eq!(s.nodes[0].restoring, Some(2));
        assert_eq!(s.adopted, 0);
    }

    /// The `GET /state` body of a node of celld `release`, built from the contract's table of
    /// the fields each release reports: each field the release reports, with its value from
    /// `values`; the `deployment` fields left out when the node serves no version yet.
    fn contract_body(
        release: celld_api::contract::releases::Triple,
        version: Option<&str>,
        values: &[(&str, serde_json::Value)],
    ) -> String {
        use celld_api::contract::node_api::state_fields;
        let mut body = serde_json::json!({});
        for field in state_fields(release) {
            if version.is_none() && field.path.starts_with("deployment.") {
                continue;
            }
            let value = values
                .iter()
                .find(|(path, _)| *path == field.path)
                .map(|(_, v)| v.clone())
                .unwrap_or_else(|| panic!("no value for the field {}", field.path));
            let mut at = &mut body;
            let mut keys = field.path.split('.').peekable();
            while let Some(key) = keys.next() {
                if keys.peek().is_none() {
                    at[key] = value.clone();
                } else {
                    if at.get(key).is_none() {
                        at[key] = serde_json::json!({});
                    }
                    at = &mut at[key];
                }
            }
        }
        body.to_string()
    }

    /// A value for every field of the contract's table: a node serving `version`, restoring
    /// `restoring` cells, switching versions when `swapping`, quiet otherwise.
    fn values(
        version: Option<&str>,
        restoring: u64,
        swapping: bool,
    ) -> Vec<(&'static str, serde_json::Value)> {
        use serde_json::json;
        vec![
            ("restoring", json!(restoring)),
            ("deployment.version", json!(version)),
            ("deployment.swapping", json!(swapping)),
            ("residents", json!(3)),
            ("rss", json!(1_000_000)),
            ("owned_cells", json!(12)),
            ("occupied", json!(3)),
            ("capacity_waiting", json!(0)),
            ("activation_waiting", json!(0)),
            ("node_load.pressured", json!(false)),
            ("node_load.memory_headroom", json!(true)),
            ("node_load.rss_bytes", json!(64 << 20)),
            ("node_load.resident_cells", json!(3)),
            ("node_load.owned_cells", json!(12)),
        ]
    }

    #[test]
    fn every_release_state_is_judged_as_the_contract_describes_it() {
        use celld_api::contract::releases::{OLDEST_SUPPORTED, RELEASES, display};
        let releases: Vec<_> = RELEASES
            .iter()
            .filter(|r| r.version >= OLDEST_SUPPORTED)
            .collect();
        assert!(!releases.is_empty());
        for release in releases {
            let name = display(release.version);
            // (version served, restoring, swapping, standing, what its message says)
            let cases = [
                (Some(V), 0, false, Adoption::Adopted, None),
                (
                    Some(OLD),
                    4,
                    false,
                    Adoption::Adopting,
                    Some(format!("it serves {OLD}; it reads the pointer again")),
                ),
                (
                    Some(OLD),
                    4,
                    true,
                    Adoption::Adopting,
                    Some(format!("it serves {OLD} and is switching to {V}")),
                ),
                // It serves the pointer's version: adopted, whatever else it still moves.
                (Some(V), 0, true, Adoption::Adopted, None),
                (
                    None,
                    1,
                    false,
                    Adoption::Adopting,
                    Some("it reports no version".to_string()),
                ),
            ];
            for (version, restoring, swapping, expected, says) in cases {
                let body = contract_body(
                    release.version,
                    version,
                    &values(version, restoring, swapping),
                );
                let state = NodeState::parse(body.as_bytes())
                    .unwrap_or_else(|e| panic!("{name}: {e}: {body}"));
                assert_eq!(state.version(), version, "{name}: {body}");
                assert_eq!(state.restoring, restoring, "{name}: {body}");
                assert_eq!(state.swapping(), swapping, "{name}: {body}");
                let (standing, message) = standing(V, &Answer::State(state, None));
                assert_eq!(standing, expected, "{name}: {body}");
                match (says, message) {
                    (None, None) => {}
                    (Some(says), Some(message)) => {
                        assert!(message.starts_with(&says), "{name}: {message}: {body}");
                    }
                    (says, message) => panic!("{name}: {says:?} against {message:?}: {body}"),
                }
            }
        }
    }

    #[test]
    fn a_node_switching_to_the_version_is_adopting_and_read_again_on_every_release() {
        use celld_api::contract::releases::{OLDEST_SUPPORTED, RELEASES, display};
        for release in RELEASES.iter().filter(|r| r.version >= OLDEST_SUPPORTED) {
            let name = display(release.version);
            let state = |version, swapping| {
                let body = contract_body(
                    release.version,
                    Some(version),
                    &values(Some(version), 0, swapping),
                );
                let state = NodeState::parse(body.as_bytes())
                    .unwrap_or_else(|e| panic!("{name}: {e}: {body}"));
                Answer::State(state, None)
            };
            let r = reading(vec![state(V, false), state(OLD, true)]);
            let s = r.summary(2);
            assert_eq!(
                (s.verdict, s.ratio()),
                (NodeVerdict::Adopting, "1/2".into()),
                "{name}"
            );
            assert_eq!(s.nodes[1].adoption, Adoption::Adopting, "{name}");
            assert_eq!(s.nodes[1].version.as_deref(), Some(OLD), "{name}");
            assert_eq!(
                s.nodes[1].message.as_deref(),
                Some(format!("it serves {OLD} and is switching to {V}").as_str()),
                "{name}"
            );
            assert!(r.pending(), "{name}: a node switching is read again soon");
            // Once it has switched, the fleet has adopted the version and nothing is pending.
            let r = reading(vec![state(V, false), state(V, false)]);
            assert_eq!(r.summary(2).verdict, NodeVerdict::Adopted, "{name}");
            assert!(!r.pending(), "{name}");
        }
    }

    #[test]
    fn no_node_ready_is_not_a_verdict_on_the_version() {
        let s = reading(vec![
            Answer::Unreadable(Unanswered::Unreachable),
            Answer::Unreadable(Unanswered::Unreachable),
        ])
        .summary(0);
        assert_eq!(
            (s.verdict, s.ratio()),
            (NodeVerdict::NoneReady, "0/2".into())
        );
    }
}
