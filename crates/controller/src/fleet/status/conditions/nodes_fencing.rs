//! NodesFencing: the fleet's nodes fenced themselves (celld's exit code 3) at least
//! [`REPEATED`] times within [`WINDOW`]; absent otherwise.

use super::{Cond, cond};
use crate::nodes::fences::{Fence, REPEATED, WINDOW};
use celld_api::conditions::NODES_FENCING;
use celld_api::reasons::Reason;
use std::collections::BTreeMap;

/// The condition, from the nodes' recent fences.
pub fn condition(exits: &[Fence]) -> Option<Cond> {
    let fences: Vec<&Fence> = exits.iter().filter(|f| f.fenced()).collect();
    if fences.len() < REPEATED {
        return None;
    }
    let mut by_node: BTreeMap<&str, usize> = BTreeMap::new();
    for fence in &fences {
        *by_node.entry(fence.node.as_str()).or_default() += 1;
    }
    let nodes: Vec<String> = by_node
        .iter()
        .map(|(node, n)| match n {
            1 => format!("{node} once"),
            n => format!("{node} {n} times"),
        })
        .collect();
    Some(cond(
        NODES_FENCING,
        Some(true),
        Reason::RepeatedFences,
        format!(
            "nodes fenced themselves (exit code 3: celld lost its lease's compare-and-swap and stopped) in the last {} minutes: {}; celld #239: an object store that answers lease renewals with 409 ConditionalRequestConflict makes nodes fence over and over, so check the object store's conditional writes and its load",
            WINDOW.as_secs() / 60,
            nodes.join(", ")
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::jiff::Timestamp;

    fn exit(node: &str, s: i64, exit_code: i32) -> Fence {
        Fence {
            node: node.into(),
            at: Timestamp::from_second(s).unwrap(),
            exit_code,
        }
    }

    fn fence(node: &str, s: i64) -> Fence {
        exit(node, s, 3)
    }

    #[test]
    fn repeated_fences_name_each_node_and_the_cause() {
        assert!(condition(&[fence("web-0", 1)]).is_none(), "one fence");
        assert!(
            condition(&[fence("web-0", 1), exit("web-1", 2, 137)]).is_none(),
            "one fence and a restart of another cause"
        );
        let c = condition(&[fence("web-0", 1), fence("web-1", 2), fence("web-0", 3)]).unwrap();
        assert_eq!((c.status, c.reason), (Some(true), Reason::RepeatedFences));
        assert!(
            c.message
                .contains("in the last 10 minutes: web-0 2 times, web-1 once")
                && c.message.contains("#239"),
            "{}",
            c.message
        );
    }
}
