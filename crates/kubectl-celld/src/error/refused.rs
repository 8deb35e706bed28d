//! A version the bucket's pointers name but some node refused to adopt: `POST /reload` answered
//! HTTP 422 (celld v0.4: the node failed to load the version and keeps serving the one it had).
//! `deploy` and `rollback` then fail with [`REFUSED_EXIT_CODE`] after their report.

/// The exit code of a `deploy` or `rollback` whose version a node refused: distinct from 1 (the
/// command failed, nothing changed), since the pointers do name the new version.
pub const REFUSED_EXIT_CODE: u8 = 3;

/// How to go back to the version the fleet served before.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GoBack {
    /// After a deploy: to the version uploaded before it.
    Previous,
    /// After a rollback: to the version it rolled back from.
    To(String),
}

/// One or more nodes answered the reload with HTTP 422.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} of fleet {namespace}/{fleet} refused {what} (the reload got HTTP 422: {}) and {} serving the version {} had; the bucket's pointers name the refused version, so nodes that start or poll later try it too. See why with: kubectl celld logs {fleet} -n {namespace}; go back with: {}",
    nodes_phrase(.nodes),
    messages(.nodes),
    if .nodes.len() == 1 { "keeps" } else { "keep" },
    if .nodes.len() == 1 { "it" } else { "they" },
    undo_command(.fleet, .namespace, .go_back)
)]
pub struct ReloadRefused {
    /// The fleet.
    pub fleet: String,
    /// Its namespace.
    pub namespace: String,
    /// What was refused: `the new version`, or `version V of script S`.
    pub what: String,
    /// Each refusing node's pod name and celld's message.
    pub nodes: Vec<(String, String)>,
    /// How to undo.
    pub go_back: GoBack,
}

fn nodes_phrase(nodes: &[(String, String)]) -> String {
    let names: Vec<&str> = nodes.iter().map(|(name, _)| name.as_str()).collect();
    match names.as_slice() {
        [one] => format!("node {one}"),
        _ => format!("nodes {}", names.join(", ")),
    }
}

fn messages(nodes: &[(String, String)]) -> String {
    match nodes {
        [(_, message)] => message.clone(),
        _ => nodes
            .iter()
            .map(|(name, message)| format!("{name}: {message}"))
            .collect::<Vec<_>>()
            .join("; "),
    }
}

fn undo_command(fleet: &str, namespace: &str, how: &GoBack) -> String {
    match how {
        GoBack::Previous => format!("kubectl celld rollback {fleet} -n {namespace}"),
        GoBack::To(version) => {
            format!("kubectl celld rollback {fleet} -n {namespace} --to {version}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_message_names_the_nodes_the_logs_and_the_way_back() {
        let one = ReloadRefused {
            fleet: "web".into(),
            namespace: "apps".into(),
            what: "the new version".into(),
            nodes: vec![("web-2".into(), "module not found: ./missing.js".into())],
            go_back: GoBack::Previous,
        };
        insta::assert_snapshot!("one_node_after_a_deploy", one.to_string());
        let error = crate::error::Error::from(Box::new(one.clone()));
        assert_eq!(error.exit_code(), REFUSED_EXIT_CODE);
        assert_eq!(error.to_string(), one.to_string());
        let two = ReloadRefused {
            what: "version 0123456789abcdef of script hello".into(),
            nodes: vec![
                ("web-0".into(), "SyntaxError: x".into()),
                ("web-1".into(), "SyntaxError: x".into()),
            ],
            go_back: GoBack::To("fedcba9876543210".into()),
            ..one
        };
        insta::assert_snapshot!("two_nodes_after_a_rollback", two.to_string());
    }
}
