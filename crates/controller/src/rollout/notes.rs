//! The Events a rollout's status change is worth: one per wave transition (started, baking,
//! passed, failed), a new revision, and the rollout's end or hold. Pure.

use crate::status::note::Note;
use celld_api::rollout::reasons::RolloutReason;
use celld_api::rollout::{CelldRolloutStatus, FleetPhase, RolloutPhase, WavePhase};
use kube::runtime::events::EventType;

fn note(type_: EventType, reason: RolloutReason, text: String) -> Note {
    Note::new(type_, reason.as_str(), text)
}

/// The Events of the change from `previous` to `next`.
pub fn notes(previous: Option<&CelldRolloutStatus>, next: &CelldRolloutStatus) -> Vec<Note> {
    let mut out = Vec::new();
    let before_key = previous.and_then(|p| p.target.as_ref()).map(|t| &t.key);
    let new_revision = next.target.as_ref().filter(|t| Some(&t.key) != before_key);
    if let Some(target) = new_revision {
        let (reason, verb) = match before_key {
            Some(_) => (RolloutReason::Superseded, "superseded the one under way"),
            None => (RolloutReason::Started, "began"),
        };
        out.push(note(
            EventType::Normal,
            reason,
            format!(
                "revision {} {verb}: shipping from wave 1 of {}",
                target.revision,
                next.waves.len()
            ),
        ));
    }
    for wave in &next.waves {
        let was = previous
            .filter(|_| new_revision.is_none())
            .and_then(|p| p.waves.iter().find(|w| w.number == wave.number))
            .map_or(WavePhase::Pending, |w| w.phase);
        if was == wave.phase {
            continue;
        }
        let fleets = wave.fleets.len();
        let (type_, reason, text) = match wave.phase {
            WavePhase::Publishing => (
                EventType::Normal,
                RolloutReason::WaveStarted,
                format!(
                    "wave {} started: {fleets} fleets publish the revision",
                    wave.number
                ),
            ),
            WavePhase::Baking => (
                EventType::Normal,
                RolloutReason::Baking,
                format!(
                    "wave {}: every fleet serves the revision; baking until {}",
                    wave.number,
                    wave.bake_until
                        .as_ref()
                        .map_or_else(String::new, |t| t.0.to_string())
                ),
            ),
            WavePhase::Passed => (
                EventType::Normal,
                RolloutReason::WavePassed,
                format!("wave {} passed its gates ({fleets} fleets)", wave.number),
            ),
            WavePhase::Failed => (
                EventType::Warning,
                RolloutReason::WaveFailed,
                format!(
                    "wave {} failed: {}",
                    wave.number,
                    wave.message.as_deref().unwrap_or_default()
                ),
            ),
            WavePhase::Pending | WavePhase::Checking => continue,
        };
        out.push(note(type_, reason, text));
    }
    let was = previous.map(|p| p.phase);
    if was != Some(next.phase) {
        let rolled_back = next
            .waves
            .iter()
            .flat_map(|w| &w.fleets)
            .filter(|f| f.phase == FleetPhase::RolledBack)
            .count();
        let said = match next.phase {
            RolloutPhase::Succeeded => Some((
                EventType::Normal,
                RolloutReason::Succeeded,
                "every wave passed".to_string(),
            )),
            RolloutPhase::Paused => Some((
                EventType::Normal,
                RolloutReason::Paused,
                "paused: no fleet starts and no wave passes".to_string(),
            )),
            RolloutPhase::WaitingForPromotion => Some((
                EventType::Normal,
                RolloutReason::WaitingForPromotion,
                format!(
                    "wave {} waits for a promotion",
                    next.current_wave.unwrap_or_default()
                ),
            )),
            RolloutPhase::Halted => Some((
                EventType::Warning,
                RolloutReason::Halted,
                "halted: no further wave starts".to_string(),
            )),
            RolloutPhase::RolledBack => Some((
                EventType::Warning,
                RolloutReason::RolledBack,
                format!("rolled back: {rolled_back} fleets pointed back at the versions they had"),
            )),
            RolloutPhase::Aborted => Some((
                EventType::Warning,
                RolloutReason::Aborted,
                "aborted by hand".to_string(),
            )),
            RolloutPhase::Progressing => None,
        };
        if let Some((type_, reason, text)) = said {
            out.push(note(type_, reason, text));
        }
    }
    out
}
