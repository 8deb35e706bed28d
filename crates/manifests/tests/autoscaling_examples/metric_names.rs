//! The operator's metric names a query may use, and the names a PromQL text uses.

/// The operator's fleet gauges (docs/autoscaling.md), labelled `namespace` and `fleet`.
pub const FLEET_GAUGES: &[&str] = &[
    "celld_operator_fleet_capacity_waiting",
    "celld_operator_fleet_activation_waiting",
    "celld_operator_fleet_restoring",
    "celld_operator_fleet_owned_cells",
    "celld_operator_fleet_resident_cells",
    "celld_operator_fleet_rss_bytes",
    "celld_operator_fleet_nodes_read",
    "celld_operator_fleet_nodes_unreadable",
    "celld_operator_fleet_nodes_pressured",
    "celld_operator_fleet_nodes_without_headroom",
    "celld_operator_fleet_capacity_read_timestamp_seconds",
    "celld_operator_fleet_scale_paused",
    "celld_operator_fleet_autoscaler_desired_replicas",
];

/// The operator's other metrics a query may use.
pub const OTHER_METRICS: &[&str] = &[
    "celld_operator_leader",
    "celld_operator_autoscaler_decisions_total",
    "celld_operator_node_state_reads_total",
];

/// The names a PromQL text uses that start like the operator's (`celld_operator_`), each with
/// whether a regular expression continues it (`celld_operator_fleet_.+`: a prefix).
pub fn operator_names(text: &str) -> Vec<(String, bool)> {
    let mut names = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("celld_operator_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        let prefix = tail[end..].starts_with('.');
        names.push((tail[..end].to_owned(), prefix));
        rest = &tail[end..];
    }
    names
}

/// Fails naming every name in `text` that is not one of the operator's metrics (nor, for a
/// regular expression, the start of one); returns how many names it checked.
pub fn assert_known_names(what: &str, text: &str) -> usize {
    let known: Vec<&str> = FLEET_GAUGES.iter().chain(OTHER_METRICS).copied().collect();
    let names = operator_names(text);
    let unknown: Vec<&String> = names
        .iter()
        .filter(|(name, prefix)| {
            !known
                .iter()
                .any(|k| *k == name || (*prefix && k.starts_with(name.as_str())))
        })
        .map(|(name, _)| name)
        .collect();
    assert!(
        unknown.is_empty(),
        "{what} uses {unknown:?}, which the operator does not export (it exports {known:?}):\n{text}"
    );
    names.len()
}
