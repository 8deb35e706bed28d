//! Which nodes refused a version: `POST /reload` answered HTTP 422 (celld v0.4: the node failed
//! to load the version and keeps serving the one it had). `deploy` and `rollback` then fail with
//! [`ReloadRefused`](crate::error::refused::ReloadRefused) after their report.

use super::reload::Outcome;
use crate::cluster::fleet_context::Node;

/// The nodes of `results` that refused the version (HTTP 422), with celld's message; None when
/// none did. Other failures (unreachable, 503, unexpected answers) do not count: those nodes
/// read the pointer at their next poll, and the report lists them.
pub fn refusals(results: &[(Node, Outcome)]) -> Option<Vec<(String, String)>> {
    let refused: Vec<(String, String)> = results
        .iter()
        .filter_map(|(node, outcome)| match outcome {
            Outcome::Failed(message) => Some((node.name.clone(), message.clone())),
            _ => None,
        })
        .collect();
    (!refused.is_empty()).then_some(refused)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str) -> Node {
        Node {
            name: name.into(),
            ip: Some("10.0.0.1".into()),
            ready: true,
        }
    }

    #[test]
    fn only_422_answers_are_refusals() {
        let results = vec![
            (node("web-0"), Outcome::Adopted),
            (
                node("web-1"),
                Outcome::Failed("module not found: ./x.js".into()),
            ),
            (node("web-2"), Outcome::NoPointer("no pointer".into())),
            (node("web-3"), Outcome::Unreachable("curl: (7)".into())),
            (node("web-4"), Outcome::Unexpected(500, "oops".into())),
            (node("web-5"), Outcome::Unchanged),
        ];
        assert_eq!(
            refusals(&results),
            Some(vec![("web-1".into(), "module not found: ./x.js".into())])
        );
        assert_eq!(refusals(&results[2..]), None);
        assert_eq!(refusals(&[]), None);
    }
}
