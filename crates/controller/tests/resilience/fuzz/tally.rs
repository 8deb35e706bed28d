//! The fuzz's figures: verdicts per kind, field family and kind of value, how the reconciled
//! fleets and rollouts ended, written to the report.

use super::batches::{MAX_WAIT, MIN_WAIT, Outcome, QUIET, Verdict};
use super::families::Family;
use super::values::Class;
use crate::leaks::LeakScan;
use crate::timing::{measured, median_max, seconds};
use celld_testkit::faults::ReportSection;
use std::collections::BTreeMap;
use std::time::Duration;

/// Verdict counts of a group of cases.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    cases: usize,
    refused: usize,
    refused_unnamed: usize,
    reconciled: usize,
    silent: usize,
    forbidden: usize,
    unreadable: usize,
    failed: usize,
}

impl Counts {
    fn add(&mut self, verdict: Verdict) {
        self.cases += 1;
        match verdict {
            Verdict::Refused => self.refused += 1,
            Verdict::RefusedUnnamed => self.refused_unnamed += 1,
            Verdict::Reconciled => self.reconciled += 1,
            Verdict::Silent => self.silent += 1,
            Verdict::AdmittedForbidden => self.forbidden += 1,
            Verdict::Unreadable => self.unreadable += 1,
            Verdict::ApplyFailed => self.failed += 1,
        }
    }

    fn row(&self, label: String) -> Vec<String> {
        vec![
            label,
            self.cases.to_string(),
            self.refused.to_string(),
            self.reconciled.to_string(),
            self.silent.to_string(),
            self.forbidden.to_string(),
            self.refused_unnamed.to_string(),
            self.unreadable.to_string(),
            self.failed.to_string(),
        ]
    }
}

const HEADER: [&str; 9] = [
    "",
    "cases",
    "refused, naming the field",
    "reconciled",
    "silent",
    "admitted against its rules",
    "refused without naming a field",
    "request unreadable (YAML)",
    "apply failed",
];

/// Everything the fuzz section reports.
pub struct Summary<'a> {
    pub seed: u64,
    pub outcomes: &'a [&'a Outcome],
    pub namespaces: usize,
    pub batch: usize,
    pub crashes: &'a [String],
    pub panics: &'a [String],
    pub leaks: &'a LeakScan,
    pub stalled_polls: usize,
    /// Calls the fuzz's webhook gate answered.
    pub gate_calls: usize,
    pub runtime: Duration,
}

/// Whether `o` is a rollout case.
fn is_rollout(o: &Outcome) -> bool {
    o.case.kind_label() == "CelldRollout"
}

/// How the reconciled rollout cases (or the others) ended, with how many, most first.
fn endings(outcomes: &[&Outcome], rollouts: bool, none: &str) -> Vec<Vec<String>> {
    let mut endings: BTreeMap<&str, usize> = BTreeMap::new();
    for o in outcomes
        .iter()
        .filter(|o| o.verdict == Verdict::Reconciled && is_rollout(o) == rollouts)
    {
        *endings
            .entry(o.ending.as_deref().unwrap_or(none))
            .or_default() += 1;
    }
    let mut rows: Vec<Vec<String>> = endings
        .iter()
        .map(|(e, n)| vec![(*e).to_string(), n.to_string()])
        .collect();
    rows.sort_by_key(|r| std::cmp::Reverse(r[1].parse::<usize>().unwrap_or(0)));
    rows
}

/// The median and longest time from a batch's apply to the statuses of the rollout cases (or
/// the others).
fn times(outcomes: &[&Outcome], rollouts: bool) -> String {
    median_max(
        outcomes
            .iter()
            .filter(|o| is_rollout(o) == rollouts)
            .filter_map(|o| o.time_to_status),
    )
}

/// Writes the fuzz section of the report.
pub fn report(s: &Summary) {
    let mut total = Counts::default();
    let mut by_kind: BTreeMap<String, Counts> = BTreeMap::new();
    let mut by_family: BTreeMap<(&'static str, Family), Counts> = BTreeMap::new();
    let mut by_class: BTreeMap<Class, Counts> = BTreeMap::new();
    for o in s.outcomes {
        total.add(o.verdict);
        by_kind
            .entry(o.case.kind().to_string())
            .or_default()
            .add(o.verdict);
        let class = o
            .case
            .mutations
            .iter()
            .map(|m| m.class)
            .max()
            .unwrap_or(Class::Valid);
        by_class.entry(class).or_default().add(o.verdict);
        let mut families: Vec<Family> = o.case.mutations.iter().map(|m| m.family).collect();
        families.sort();
        families.dedup();
        for family in families {
            by_family
                .entry((o.case.kind_label(), family))
                .or_default()
                .add(o.verdict);
        }
    }
    let mut kind_rows: Vec<Vec<String>> = by_kind.iter().map(|(k, c)| c.row(k.clone())).collect();
    kind_rows.push(total.row("all".into()));
    let family_rows: Vec<Vec<String>> = by_family
        .iter()
        .map(|((kind, family), c)| c.row(format!("{kind}: {}", family.as_str())))
        .collect();
    let class_rows: Vec<Vec<String>> = by_class
        .iter()
        .map(|(class, c)| c.row(format!("worst value {}", class.as_str())))
        .collect();
    let mut family_header = HEADER;
    family_header[0] = "field family";
    let mut kind_header = HEADER;
    kind_header[0] = "manifest";
    let mut class_header = HEADER;
    class_header[0] = "values";

    let ending_rows = endings(s.outcomes, false, "store only");
    let rollout_rows = endings(s.outcomes, true, "no status");
    let mut silent: Vec<String> = s
        .outcomes
        .iter()
        .filter(|o| {
            !matches!(
                o.verdict,
                Verdict::Refused | Verdict::Reconciled | Verdict::Unreadable
            )
        })
        .map(|o| format!("{:?}: {} — {}", o.verdict, o.case.describe(), o.detail))
        .collect();
    let more = silent.len().saturating_sub(15);
    silent.truncate(15);
    if more > 0 {
        silent.push(format!("... and {more} more"));
    }

    let rollouts = s.outcomes.iter().filter(|o| is_rollout(o)).count();
    let mut section = ReportSection::new("20-admission-fuzz", "Admission fuzz");
    section
        .paragraph(measured("fuzz"))
        .paragraph(format!(
            "Seed {} (`CELLD_FUZZ_SEED` replays another): {} manifests ({} fleet and store cases, and {} rollout cases spread among them) generated from valid ones by mutating one to three fields each (70% one, 20% two, 10% three; values valid, at a boundary, or hostile), applied with server-side apply to the real API server of a private control plane, spread over {} namespaces watched by one operator, {} cases per namespace and batch. A refused case must name its field (`spec.…` or `metadata.…`). An admitted fleet (for a store case, the store and a fleet that uses it) must get a status for its generation with Ready True or False and a reason, and either all its children or a Degraded=True or StorageResolved=False condition saying why not. Silent: no such status {} after its batch was applied and {} after the last object of the batch got one while the API server answered (at most {}). Most fleets have no deployed Worker, so they are held at 0 nodes with Ready=False/NoDeployment; that counts as reconciled. A request the API server cannot read at all (server-side apply sends YAML, which cannot carry some control characters) reaches no admission rule; it is counted apart and does not fail the test.",
            s.seed,
            s.outcomes.len(),
            s.outcomes.len() - rollouts,
            rollouts,
            s.namespaces,
            s.batch,
            seconds(MIN_WAIT),
            seconds(QUIET),
            seconds(MAX_WAIT)
        ))
        .paragraph("A rollout case applies a fleet labelled for it, then a CelldRollout that (before its mutations) ships an image to the fleets with that label in two waves, asking the fuzz's own webhook gate (which answers 200) after each; one case in ten pins that fleet, gives it a source of its own, or does not make it. An admitted rollout (and its fleet) must get a status for its generation whose Ready condition has a reason and a message and, unless Ready is True, exactly one of Reconciling and Stalled True with a reason and a message. It must also hold nothing its CRD's rules promise to refuse (admitted against its rules): a wave's fleets that the operator cannot count with, a duration out of its bounds, a webhook URL that names a link-local address or a cloud metadata endpoint, also as a resolver reads a host (`2852039166` is 169.254.169.254).")
        .table(&kind_header, &kind_rows)
        .table(&class_header, &class_rows)
        .paragraph("A case counts once under each field family it mutated.")
        .table(&family_header, &family_rows)
        .paragraph("How the reconciled fleets ended (their Ready condition, and Degraded when True):")
        .table(&["conditions", "fleets"], &ending_rows)
        .paragraph("How the reconciled rollouts ended (their phase, and the condition that is True: Ready, else Stalled, else Reconciling):")
        .table(&["phase and condition", "rollouts"], &rollout_rows)
        .bullets(&[
            format!("Time from a batch's apply to each fleet's status (median / max): {}", times(s.outcomes, false)),
            format!("Time from a batch's apply to each rollout's status, and its fleet's (median / max): {}", times(s.outcomes, true)),
            format!("Calls the fuzz's webhook gate answered: {}", s.gate_calls),
            format!("Operator processes still running at the end: {}; crashes: {}; panics in their logs: {}", s.crashes.is_empty(), s.crashes.len(), s.panics.len()),
            format!("Credential values found outside their Secrets: {} (searched {})", s.leaks.findings.len(), s.leaks.summary()),
            format!("Polls of a batch that found the API server stalled (no answer, or slower than 5 s; the wait for statuses does not run down meanwhile): {}", s.stalled_polls),
            format!("Runtime: {}", seconds(s.runtime)),
        ]);
    if !silent.is_empty() {
        section
            .paragraph("Cases that were not refused naming a field nor reconciled (or were admitted against their rules):")
            .bullets(&silent);
    }
    section.write().expect("the report section written");
}
