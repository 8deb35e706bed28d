//! Which fleets each wave of a rollout would take, and the fleets it would leave alone, with
//! the operator's own pure functions ([`selection::select`] and [`waves::plan`]) over the
//! fleets and rollouts of its namespace; and that plan as text. Pure: the objects and the time
//! are arguments.

use crate::cluster::rollouts::source_name;
use crate::text::table::Table;
use celld_api::rollout::{SkipReason, SkippedFleet, selection, waves};
use celld_api::{CelldFleet, CelldRollout};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// A rollout's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The fleets of each wave, by name, in order.
    pub waves: Vec<Vec<String>>,
    /// How many fleets the selector matches (those left alone included).
    pub matched: usize,
    /// The fleets the selector matches that the rollout leaves alone, and why.
    pub skipped: Vec<SkippedFleet>,
}

impl Plan {
    /// How many fleets the waves take.
    pub fn fleets(&self) -> usize {
        self.waves.iter().map(Vec::len).sum()
    }
}

/// The plan of `rollout` (to be applied at `now`) among the namespace's `fleets` and
/// `rollouts`. A rollout of the same name that exists keeps its age (which decides who owns a
/// fleet two rollouts select); a new one is the youngest.
pub fn plan(
    rollout: &CelldRollout,
    fleets: &[CelldFleet],
    rollouts: &[CelldRollout],
    now: jiff::Timestamp,
) -> Plan {
    let mut candidate = rollout.clone();
    let existing = rollouts
        .iter()
        .find(|r| r.metadata.name == candidate.metadata.name);
    match existing {
        Some(old) => {
            candidate.metadata.uid = old.metadata.uid.clone();
            candidate.metadata.creation_timestamp = old.metadata.creation_timestamp.clone();
        }
        None => candidate.metadata.creation_timestamp = Some(Time(now)),
    }
    let others: Vec<&CelldRollout> = rollouts
        .iter()
        .filter(|r| r.metadata.name != candidate.metadata.name)
        .chain(std::iter::once(&candidate))
        .collect();
    let selection = selection::select(&candidate, fleets, &others);
    let (planned, left) = waves::plan(&candidate.spec.waves, &selection);
    let last = candidate
        .spec
        .waves
        .last()
        .and_then(|w| w.fleets.as_ref())
        .map_or_else(String::new, written);
    let matched = selection.fleets.len() + selection.skipped.len();
    let mut skipped = selection.skipped;
    skipped.extend(left.into_iter().map(|name| SkippedFleet {
        message: format!(
            "no wave takes CelldFleet {name}: the last wave goes up to {last} of the selected fleets; end --waves with 100% to take every one"
        ),
        name,
        reason: SkipReason::NoWave,
    }));
    skipped.sort_by(|a, b| a.name.cmp(&b.name));
    Plan {
        matched,
        waves: planned,
        skipped,
    }
}

/// A wave's count or percentage, as written.
fn written(size: &IntOrString) -> String {
    match size {
        IntOrString::Int(n) => n.to_string(),
        IntOrString::String(s) => s.clone(),
    }
}

fn fleets_word(n: usize) -> String {
    format!("{n} fleet{}", if n == 1 { "" } else { "s" })
}

/// The plan as text: what the rollout ships, each wave with its fleets, and the fleets left
/// alone with why.
pub fn render(rollout: &CelldRollout, plan: &Plan) -> String {
    let name = rollout.metadata.name.as_deref().unwrap_or_default();
    let ns = rollout.metadata.namespace.as_deref().unwrap_or_default();
    let mut out = format!(
        "CelldRollout {ns}/{name} ships {} to {} in {} wave{}:\n",
        source_name(&rollout.spec.source),
        fleets_word(plan.fleets()),
        plan.waves.len(),
        if plan.waves.len() == 1 { "" } else { "s" }
    );
    for (i, (wave, fleets)) in rollout.spec.waves.iter().zip(&plan.waves).enumerate() {
        let upto = wave
            .fleets
            .as_ref()
            .map_or_else(|| "the rest".to_string(), written);
        out.push_str(&format!(
            "Wave {} (up to {upto}, bake {}): {}\n",
            i + 1,
            wave.bake,
            fleets_word(fleets.len())
        ));
        match (fleets.is_empty(), plan.fleets()) {
            (true, 0) => out.push_str("  (none)\n"),
            (true, _) => out.push_str("  (none: the waves before take every fleet it would)\n"),
            (false, _) => {}
        }
        for fleet in fleets {
            out.push_str(&format!("  {fleet}\n"));
        }
    }
    if !plan.skipped.is_empty() {
        out.push_str(&format!("Skipped: {}\n", fleets_word(plan.skipped.len())));
        let mut t = Table::new(&["FLEET", "REASON", "MESSAGE"]);
        for s in &plan.skipped {
            t.row(vec![
                s.name.clone(),
                s.reason.as_str().to_string(),
                s.message.clone(),
            ]);
        }
        out.push_str(&t.render("  "));
    }
    out
}
