//! The report's section on nodes that cannot be read: the largest fleet count with no node
//! answering the node reads, beside the same count with its nodes answering, each against a
//! floor measured the same way.

use super::format::{secs, thousands, times};
use crate::results::Scale;
use std::fmt::Write as _;

/// Writes the section for `unreachable`, beside the pair of `scales` of its fleet count (its
/// nodes answering) when there is one.
pub fn section(out: &mut String, unreachable: &Scale, scales: &[Scale]) {
    let answering = scales.iter().find(|s| s.fleets() == unreachable.fleets());
    let fleets = thousands(unreachable.fleets() as u64);
    let _ = writeln!(
        out,
        "\n## Nodes that cannot be read\n\n{fleets} fleets, each with an Ingress (`spec.ingress` with an \
ingressClass) as in every run above, once with a double answering every node's `GET /state` (as \
above) and once with none answering: the operator runs without `--node-api-connect-to`, so it \
dials each node at its name through its fleet's peer Service \
(`<pod>.<peer service>.<namespace>.svc:8081`), which does not resolve outside a cluster, and every \
node read fails, as for an operator run from a workstation. Each against its own floor, whose node \
reads go the same way (in the second, every read fails and its one status per fleet says why, \
computed by the operator's own code). Status patches and Events are counted until the operator \
settled (or its wait for that ran out).\n"
    );
    let _ = writeln!(
        out,
        "| {fleets} fleets | nodes answering | nodes unreachable |"
    );
    let _ = writeln!(out, "|---|---|---|");
    let row = |out: &mut String, label: &str, cell: &dyn Fn(&Scale) -> String| {
        let answered = answering.map_or_else(|| "– (not measured)".to_string(), cell);
        let _ = writeln!(out, "| {label} | {answered} | {} |", cell(unreachable));
    };
    row(out, "**floor**: first create → all fleets Ready", &|s| {
        secs(s.floor.fleets_ready)
    });
    row(
        out,
        "**converge**: first create → all fleets Ready (× its floor's)",
        &|s| {
            format!(
                "{} ({})",
                secs(s.operator.fleets_ready),
                times(s.converge_ratio())
            )
        },
    );
    row(
        out,
        "status patches per fleet until settled (the floor's)",
        &|s| {
            format!(
                "{:.2} ({:.2})",
                s.operator.status_patches_per_fleet(),
                s.floor.status_patches_per_fleet()
            )
        },
    );
    row(
        out,
        "Warning Events per fleet until settled (by reason)",
        &warnings,
    );
    row(out, "Normal Events per fleet until settled", &|s| {
        format!(
            "{:.2}",
            s.operator.events.normal as f64 / s.fleets().max(1) as f64
        )
    });
    row(out, "API requests per fleet until settled (writes)", &|s| {
        let n = s.fleets().max(1) as f64;
        let t = s.operator.to_settle;
        format!("{:.1} ({:.1})", t.requests as f64 / n, t.writes as f64 / n)
    });
    row(out, "first create → settled (no write for 10 s)", &|s| {
        let note = if s.operator.writes_stopped {
            ""
        } else {
            " (writes never stopped)"
        };
        format!("{}{note}", secs(s.operator.settled))
    });
    row(out, "writes per idle minute", &|s| {
        format!("{:.0}", s.operator.idle_writes_per_minute())
    });
}

/// The Warning Events per fleet, and how many of each reason.
fn warnings(s: &Scale) -> String {
    let events = &s.operator.events;
    let per_fleet = format!("{:.2}", s.operator.warnings_per_fleet());
    if events.warnings.is_empty() {
        return per_fleet;
    }
    let reasons: Vec<String> = events
        .warnings
        .iter()
        .map(|(reason, n)| format!("{reason} {}", thousands(*n)))
        .collect();
    format!("{per_fleet} ({})", reasons.join(", "))
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{results, scale};
    use super::super::render;
    use crate::measure::events::EventCounts;
    use crate::results::Scale;

    /// 1,000 fleets with their nodes unreachable: floor 60 s, converge 105 s, 3.4 status
    /// patches, 0.85 Warnings and 2 Normal Events a fleet.
    fn unreachable() -> Scale {
        let mut s = scale(1000, 60, 105, 70 * 1024);
        s.operator
            .by_resource
            .insert(("celldfleets/status".into(), "patch".into()), 3_400);
        s.operator.events = EventCounts {
            normal: 2_000,
            warnings: [
                ("NodeStateUnreadable".to_string(), 800),
                ("Other".to_string(), 50),
            ]
            .into_iter()
            .collect(),
        };
        s.operator.writes_stopped = false;
        s
    }

    #[test]
    fn the_unreachable_nodes_run_stands_beside_the_answering_one_of_its_count() {
        let mut r = results();
        // The answering 1,000-fleet pair: 3 status patches and 1 Normal Event a fleet.
        r.scales[1].operator.events.normal = 1_000;
        r.unreachable = Some(unreachable());
        let md = render(&r);
        let lines: Vec<&str> = md.lines().collect();
        for expected in [
            "## Nodes that cannot be read",
            "| 1,000 fleets | nodes answering | nodes unreachable |",
            "| **floor**: first create → all fleets Ready | 50.0 s | 60.0 s |",
            "| **converge**: first create → all fleets Ready (× its floor's) | 150.0 s (3.00×) | 105.0 s (1.75×) |",
            "| status patches per fleet until settled (the floor's) | 3.00 (1.00) | 3.40 (1.00) |",
            "| Warning Events per fleet until settled (by reason) | 0.00 | 0.85 (NodeStateUnreadable 800, Other 50) |",
            "| Normal Events per fleet until settled | 1.00 | 2.00 |",
            "| API requests per fleet until settled (writes) | 12.3 (1.1) | 12.3 (1.1) |",
            "| first create → settled (no write for 10 s) | 152.0 s | 107.0 s (writes never stopped) |",
        ] {
            assert!(lines.contains(&expected), "{expected}\n{md}");
        }
        // Beside the fleet counts' table, before the fake nodes.
        let at = |s: &str| md.find(s).unwrap();
        assert!(at("| **converge**") < at("## Nodes that cannot be read"));
        assert!(at("## Nodes that cannot be read") < at("### Fake nodes"));
    }

    #[test]
    fn without_an_answering_pair_of_its_count_the_other_column_says_so() {
        let mut r = results();
        r.scales.truncate(1);
        r.unreachable = Some(unreachable());
        let md = render(&r);
        assert!(
            md.lines().any(|l| l
                == "| **converge**: first create → all fleets Ready (× its floor's) | – (not measured) | 105.0 s (1.75×) |"),
            "{md}"
        );
        r.unreachable = None;
        assert!(!render(&r).contains("Nodes that cannot be read"));
    }
}
