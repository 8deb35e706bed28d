//! `rollout promote NAME [--wave N]`: the annotation `platform.celld.dev/promote-wave` set to
//! N and the time (each promotion a new value, which the operator takes once) with a merge
//! patch. The operator lets every wave up to N start without waiting for
//! approval, and ends the bake of a wave up to N now (its other gates still apply). Without
//! `--wave`: the wave waiting for approval, else the one after the current wave.

use super::report;
use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::cluster::rollouts;
use crate::error::Result;
use crate::error::rollout::RolloutError;
use crate::text::output;
use celld_api::CelldRollout;
use celld_api::labels::PROMOTE_WAVE;
use celld_api::rollout::{RolloutPhase, WavePhase};
use clap::Args;

/// `rollout promote`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Start the wave waiting for approval; or end the current wave's bake and start the next
  kubectl celld rollout promote web -n tenants

  # Let every wave up to the third start without approval
  kubectl celld rollout promote web --wave 3",
    override_usage = "kubectl celld rollout promote [OPTIONS] <NAME>"
)]
pub struct PromoteArgs {
    /// The rollout
    #[arg(value_name = "NAME", add = crate::cluster::complete::rollouts())]
    pub name: String,

    /// The highest wave (from 1) that may start without approval and whose bake ends now
    /// [default: the wave waiting for approval, else the one after the current wave]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub wave: Option<u32>,
}

/// The wave a promotion goes up to by default: the first pending wave while the rollout waits
/// for approval, else the one after the current wave (the last wave at most), else the first.
pub fn default_wave(rollout: &CelldRollout) -> u32 {
    let waves = u32::try_from(rollout.spec.waves.len())
        .unwrap_or(u32::MAX)
        .max(1);
    let status = rollout.status.as_ref();
    let waiting = status
        .filter(|s| s.phase == RolloutPhase::WaitingForPromotion)
        .and_then(|s| s.waves.iter().find(|w| w.phase == WavePhase::Pending))
        .and_then(|w| u32::try_from(w.number).ok());
    let after_current = status
        .and_then(|s| s.current_wave)
        .and_then(|c| u32::try_from(c).ok())
        .map(|c| c.saturating_add(1));
    waiting.or(after_current).unwrap_or(1).clamp(1, waves)
}

/// The wave promoting `rollout` goes up to: `asked`, else the default wave; an error for a
/// rollout that has ended and for a wave it does not have.
pub fn decide(rollout: &CelldRollout, asked: Option<u32>) -> Result<u32, RolloutError> {
    let r = report::build(rollout);
    if let (true, Some(phase)) = (r.ended, r.phase) {
        return Err(RolloutError::Ended {
            name: r.name,
            namespace: r.namespace,
            phase: phase.as_str(),
            revision: r.revision.unwrap_or(r.source),
            verb: "promote",
        });
    }
    let waves = rollout.spec.waves.len();
    match asked {
        Some(wave) if usize::try_from(wave).map_or(true, |w| w > waves) => {
            Err(RolloutError::NoSuchWave {
                name: r.name,
                namespace: r.namespace,
                wave,
                waves,
            })
        }
        Some(wave) => Ok(wave),
        None => Ok(default_wave(rollout)),
    }
}

/// The annotation's value promoting up to `wave` at `at`: the wave, then the time, so each
/// promotion is a new value (the operator takes each value once).
pub fn value(wave: u32, at: jiff::Timestamp) -> String {
    let at = at.round(jiff::Unit::Second).unwrap_or(at);
    format!("{wave} {at}")
}

/// What `promote` tells once the annotation promotes up to `wave`.
pub fn message(name: &str, ns: &str, wave: u32, paused: bool) -> String {
    let mut out = format!(
        "CelldRollout {ns}/{name} promoted up to wave {wave} ({PROMOTE_WAVE}): every wave up to {wave} starts without waiting for approval, and one that bakes ends its bake now (its other gates still apply). Follow it with: kubectl celld rollout status {name} -n {ns} -w\n"
    );
    if paused {
        out.push_str(&format!(
            "It is paused: nothing moves until it is resumed (kubectl celld rollout status {name} -n {ns} says by what)\n"
        ));
    }
    out
}

/// Runs `rollout promote`.
pub async fn run(cluster: &ConnectArgs, args: PromoteArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let rollout = rollouts::get(&target, &args.name).await?;
    let wave = decide(&rollout, args.wave)?;
    let value = value(wave, jiff::Timestamp::now());
    rollouts::annotate(&target, &args.name, PROMOTE_WAVE, Some(&value)).await?;
    let paused = report::build(&rollout).paused.is_some();
    output::print(&message(&args.name, &target.namespace, wave, paused))?;
    Ok(0)
}
