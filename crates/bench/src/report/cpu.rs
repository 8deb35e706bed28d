//! The report's table of where the CPU went while the fleets converged, floor and operator side
//! by side: on a machine of few cores, CPU the operator or the bench spends is CPU the API
//! server does not get.

use super::format::{secs, thousands};
use crate::measure::cpu_meter::CpuUse;
use crate::plane::control_plane::BUSY_COMPONENTS;
use crate::results::Scale;
use crate::settings::{BENCH, OPERATOR};
use std::fmt::Write as _;

/// Writes the section, a row per run.
pub fn cpu(out: &mut String, scales: &[Scale]) {
    let cores = scales
        .iter()
        .map(|s| s.operator.cpu.cores)
        .find(|&c| c > 0)
        .unwrap_or(0);
    let _ = writeln!(
        out,
        "\n### CPU during converge\n\nFrom the first create until every fleet was Ready: the share of the \
machine's {cores} cores that was busy (`/proc/stat`), and the CPU seconds (user + system, `/proc/PID/stat`) \
of each process sharing them; the bench is the floor's client tasks, or, in the operator's run, the \
creates, the watches that time the fleets and the nodes' API the operator reads.\n"
    );
    header(out, "converge");
    for s in scales {
        let fleets = thousands(s.fleets() as u64);
        row(out, &format!("floor, {fleets} fleets"), &s.floor.cpu);
        row(out, &format!("operator, {fleets} fleets"), &s.operator.cpu);
    }
}

/// Writes the table's header, the window's column named `window`.
pub(super) fn header(out: &mut String, window: &str) {
    let mut header = format!("| run | {window} | machine busy |");
    let mut rule = String::from("|---|---|---|");
    for name in BUSY_COMPONENTS.iter().chain(&[OPERATOR, BENCH]) {
        let _ = write!(header, " {name} |");
        rule.push_str("---|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
}

/// Writes one run's row.
pub(super) fn row(out: &mut String, run: &str, cpu: &CpuUse) {
    let busy = cpu
        .machine_busy
        .map_or_else(|| "–".to_string(), |b| format!("{:.0} %", b * 100.0));
    let mut line = format!("| {run} | {} | {busy} |", secs(cpu.window));
    for name in BUSY_COMPONENTS.iter().chain(&[OPERATOR, BENCH]) {
        let cell = cpu
            .of(name)
            .map_or_else(|| "–".to_string(), |d| format!("{:.1} s", d.as_secs_f64()));
        let _ = write!(line, " {cell} |");
    }
    let _ = writeln!(out, "{line}");
}
