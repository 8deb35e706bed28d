//! `rollout status` as text: the rollout's phase, revision and progress, a table of its waves,
//! a table of their fleets (from → to, adopted N/M, reason), the fleets it leaves alone, and
//! what to do next. Pure: the report and the time are arguments.

use super::report::{RolloutReport, WaveReport};
use crate::text::human;
use crate::text::table::Table;
use celld_api::rollout::{Approval, RolloutFleet, RolloutPhase};
use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

const LABEL_WIDTH: usize = 12;

fn field(out: &mut String, label: &str, value: &str) {
    out.push_str(&format!("{:<LABEL_WIDTH$} {value}\n", format!("{label}:")));
}

/// How long ago `t` was, or `-`.
fn ago(t: Option<&Time>, now: Timestamp) -> String {
    t.map_or_else(
        || "-".to_string(),
        |t| format!("{} ago", human::duration(now.as_second() - t.0.as_second())),
    )
}

/// How long until `t`, or since it passed, or `-`.
fn until(t: Option<&Time>, now: Timestamp) -> String {
    match t {
        None => "-".to_string(),
        Some(t) if t.0 > now => {
            format!("in {}", human::duration(t.0.as_second() - now.as_second()))
        }
        Some(t) => format!("{} ago", human::duration(now.as_second() - t.0.as_second())),
    }
}

/// The Phase field: the phase, the wave and whether the status is current.
fn phase_line(r: &RolloutReport) -> String {
    let Some(phase) = r.phase else {
        return format!(
            "not reported yet (is celld-operator running and watching namespace {}?)",
            r.namespace
        );
    };
    let mut line = phase.as_str().to_string();
    if let Some(wave) = r.current_wave {
        line.push_str(&format!(", wave {wave}/{}", r.waves.len()));
    }
    if !r.up_to_date {
        line.push_str(" (the operator has not seen the latest change of the rollout yet)");
    }
    line
}

/// The Paused field, when something holds the rollout paused.
fn paused_line(r: &RolloutReport) -> Option<String> {
    let paused = r.paused.as_ref()?;
    let mut why = Vec::new();
    if paused.spec {
        why.push("spec.paused is true".to_string());
    }
    if let Some(reason) = &paused.annotation {
        why.push(format!(
            "annotation {}: {reason}",
            celld_api::labels::ROLLOUT_PAUSED
        ));
    }
    Some(why.join("; "))
}

fn wave_table(waves: &[WaveReport], now: Timestamp) -> String {
    let mut t = Table::new(&[
        "WAVE",
        "PHASE",
        "TAKES",
        "FLEETS",
        "BAKE",
        "APPROVAL",
        "STARTED",
        "BAKE UNTIL",
        "MESSAGE",
    ]);
    for w in waves {
        t.row(vec![
            w.number.to_string(),
            w.phase.as_str().to_string(),
            w.takes.clone(),
            if w.fleets.is_empty() {
                "-".to_string()
            } else {
                w.adopted()
            },
            w.bake.clone(),
            match w.approval {
                Approval::Automatic => "Automatic".to_string(),
                Approval::Manual => "Manual".to_string(),
            },
            ago(w.started_at.as_ref(), now),
            until(w.bake_until.as_ref(), now),
            w.message.clone().unwrap_or_default(),
        ]);
    }
    t.render("  ")
}

/// `from → to` of a fleet, `-` for what is not known.
fn versions(f: &RolloutFleet) -> String {
    format!(
        "{} → {}",
        f.from.as_deref().unwrap_or("-"),
        f.to.as_deref().unwrap_or("-")
    )
}

/// A fleet's reason and message.
fn why(f: &RolloutFleet) -> String {
    match (&f.reason, &f.message) {
        (Some(reason), Some(message)) => format!("{reason}: {message}"),
        (Some(text), None) | (None, Some(text)) => text.clone(),
        (None, None) => String::new(),
    }
}

fn fleet_table(waves: &[WaveReport]) -> String {
    let mut t = Table::new(&["WAVE", "FLEET", "PHASE", "FROM → TO", "ADOPTED", "REASON"]);
    for w in waves {
        for f in &w.fleets {
            t.row(vec![
                w.number.to_string(),
                f.name.clone(),
                f.phase.as_str().to_string(),
                versions(f),
                f.adopted.clone().unwrap_or_else(|| "-".to_string()),
                why(f),
            ]);
        }
    }
    t.render("  ")
}

/// What to do next, when the rollout waits for a person.
fn next(r: &RolloutReport) -> Option<String> {
    let (name, ns) = (&r.name, &r.namespace);
    if let Some(paused) = &r.paused {
        return Some(match (paused.spec, &paused.annotation) {
            (true, Some(_)) => format!(
                "It is paused twice: resume with kubectl celld rollout resume {name} -n {ns}, and set spec.paused: false where the rollout is managed (git)"
            ),
            (true, None) => {
                "It is paused in its spec: set spec.paused: false where the rollout is managed (git)"
                    .to_string()
            }
            _ => format!("Resume it with: kubectl celld rollout resume {name} -n {ns}"),
        });
    }
    match r.phase? {
        RolloutPhase::WaitingForPromotion => Some(format!(
            "The next wave waits for approval: kubectl celld rollout promote {name} -n {ns}"
        )),
        RolloutPhase::Halted | RolloutPhase::RolledBack | RolloutPhase::Aborted if r.ended => {
            Some("It stays so until a new revision (a new image, a new artifact of its Flux source, or a new value of the annotation platform.celld.dev/reconcile-requested-at) starts it again from the first wave".to_string())
        }
        _ => None,
    }
}

/// `rollout status` as text at `now`.
pub fn render(r: &RolloutReport, now: Timestamp) -> String {
    let mut out = String::new();
    field(&mut out, "Name", &r.name);
    field(&mut out, "Namespace", &r.namespace);
    field(&mut out, "Phase", &phase_line(r));
    match &r.revision {
        Some(revision) => field(
            &mut out,
            "Revision",
            &format!("{revision} (began {})", ago(r.started_at.as_ref(), now)),
        ),
        None => field(&mut out, "Revision", "none begun yet"),
    }
    if r.revision.is_none() || r.new_source {
        let note = if r.new_source {
            " (new: the operator starts again from the first wave with it)"
        } else {
            ""
        };
        field(&mut out, "Source", &format!("{}{note}", r.source));
    }
    if let Some(moved) = &r.moved {
        field(&mut out, "Fleets", &format!("{moved} on the new version"));
    }
    if let Some(line) = paused_line(r) {
        field(&mut out, "Paused", &line);
    }
    if let Some(wave) = r.promoted_wave {
        field(&mut out, "Promoted", &format!("up to wave {wave}"));
    }
    if let Some(reason) = &r.abort_requested {
        field(&mut out, "Abort", &format!("asked: {reason}"));
    }
    if let Some(stalled) = &r.stalled {
        field(&mut out, "Stalled", stalled);
    }
    out.push_str("Waves:\n");
    out.push_str(&wave_table(&r.waves, now));
    if r.waves.iter().any(|w| !w.fleets.is_empty()) {
        out.push_str("Fleets:\n");
        out.push_str(&fleet_table(&r.waves));
    }
    if !r.skipped.is_empty() {
        out.push_str("Skipped:\n");
        let mut t = Table::new(&["FLEET", "REASON", "MESSAGE"]);
        for s in &r.skipped {
            t.row(vec![
                s.name.clone(),
                s.reason.as_str().to_string(),
                s.message.clone(),
            ]);
        }
        out.push_str(&t.render("  "));
    }
    if let Some(next) = next(r) {
        out.push_str(&format!("{next}\n"));
    }
    out
}
