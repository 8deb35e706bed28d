//! Whether an admitted rollout says what is going on: its status describes its generation, and
//! its conditions follow kstatus, each with a reason and a message: Ready, and while it is not
//! True, either Reconciling (a wave under way, waiting for a promotion or a pause, or for its
//! source) or Stalled (halted, rolled back, aborted: a person decides), never both.

use crate::conditions::{find, summary};
use serde_json::Value;

/// Whether the condition `type_` is there with `status` True or False, a reason and a message;
/// what is wrong with it otherwise.
fn explained(rollout: &Value, type_: &str, generation: i64) -> Result<bool, String> {
    let Some(c) = find(rollout, type_) else {
        return Err(format!("no {type_} condition"));
    };
    let said = |key: &str| c[key].as_str().is_some_and(|s| !s.trim().is_empty());
    if !said("reason") || !said("message") {
        return Err(format!("{type_} has no reason or no message"));
    }
    if c["observedGeneration"]
        .as_i64()
        .is_some_and(|g| g < generation)
    {
        return Err(format!(
            "{type_} describes generation {}, not {generation}",
            c["observedGeneration"]
        ));
    }
    match c["status"].as_str() {
        Some("True") => Ok(true),
        Some("False") => Ok(false),
        other => Err(format!("{type_} is {other:?}, neither True nor False")),
    }
}

/// Why an admitted rollout does not count as reconciled yet; `None` when it does.
pub fn rollout_pending(rollout: Option<&Value>, generation: i64) -> Option<String> {
    let Some(rollout) = rollout else {
        return Some("the rollout is gone".into());
    };
    let observed = rollout["status"]["observedGeneration"]
        .as_i64()
        .unwrap_or(0);
    if observed < generation {
        return Some(format!(
            "rollout status describes generation {observed}, not {generation} ({})",
            summary(rollout)
        ));
    }
    let problem = |e: String| Some(format!("rollout: {e} ({})", summary(rollout)));
    let ready = match explained(rollout, "Ready", generation) {
        Ok(ready) => ready,
        Err(e) => return problem(e),
    };
    let holding = |type_| {
        find(rollout, type_)
            .map(|_| explained(rollout, type_, generation))
            .unwrap_or(Ok(false))
    };
    match (ready, holding("Reconciling"), holding("Stalled")) {
        (_, Err(e), _) | (_, _, Err(e)) => problem(e),
        (_, Ok(true), Ok(true)) => problem("Reconciling and Stalled are both True".into()),
        (true, Ok(false), Ok(false))
        | (false, Ok(true), Ok(false))
        | (false, Ok(false), Ok(true)) => None,
        (false, Ok(false), Ok(false)) => {
            problem("Ready is False, and neither Reconciling nor Stalled says why".into())
        }
        (true, _, _) => problem("Ready is True while Reconciling or Stalled is too".into()),
    }
}

/// How a reconciled rollout ended: its phase and the conditions that are True (Ready=False
/// with its reason otherwise): `Progressing: Reconciling=True/WaveStarted`.
pub fn rollout_ending(rollout: Option<&Value>) -> String {
    let Some(rollout) = rollout else {
        return "no rollout".into();
    };
    let phase = rollout["status"]["phase"].as_str().unwrap_or("no phase");
    let reason = |type_: &str| {
        find(rollout, type_)
            .filter(|c| c["status"] == "True")
            .map(|c| format!("{type_}=True/{}", c["reason"].as_str().unwrap_or("?")))
    };
    let said = reason("Ready")
        .or_else(|| reason("Stalled"))
        .or_else(|| reason("Reconciling"))
        .unwrap_or_else(|| "nothing True".into());
    format!("{phase}: {said}")
}
