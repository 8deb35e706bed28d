//! One rollout's reconcile: read its fleets and the other rollouts of its namespace from the
//! caches, select and plan ([`selection`]), take a
//! [`progress`] step to see what is due, call the webhooks of a wave being checked and point
//! back the fleets a failure leaves, then publish the step that includes what they answered.

use crate::error::Error;
use crate::rollout::context::Context;
use crate::rollout::input::{Checked, Input, PointedBack};
use crate::rollout::progress;
use crate::rollout::target::{self, NoTarget, TargetNow};
use crate::rollout::{notes, rollback, spacing, webhook};
use crate::shared::resync_grid;
use crate::shared::retry;
use celld_api::CelldFleet;
use celld_api::labels;
use celld_api::rollout::selection::{self, Selection};
use celld_api::rollout::{CelldRollout, CelldRolloutStatus, FleetPhase, RolloutPhase, WavePhase};
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::core::DeserializeGuard;
use kube::runtime::controller::Action;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How often a rollout under way is looked at again when nothing it watches changes (the
/// progress deadline and paused waves are judged on time).
const UNDER_WAY: Duration = Duration::from_secs(10);

/// How long after a bake's end its wave is looked at: the timer's slack, so that the look finds
/// the bake over.
const BAKE_MARGIN: Duration = Duration::from_millis(100);

/// Reconciles one rollout.
pub async fn reconcile(
    guard: Arc<DeserializeGuard<CelldRollout>>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let Some(rollout) = retry::parsed(&guard) else {
        return Ok(Action::await_change());
    };
    let result = reconcile_rollout(rollout, &ctx).await;
    retry::settle(&ctx.shared, &ctx.status, rollout, &result).await;
    result
}

/// What a reconcile read from the caches.
struct Read {
    fleets: BTreeMap<String, CelldFleet>,
    selection: Selection,
    target: Result<TargetNow, NoTarget>,
}

fn read(ctx: &Context, rollout: &CelldRollout, ns: &str) -> Read {
    let caches = &ctx.shared.caches;
    let fleets: BTreeMap<String, CelldFleet> = caches
        .fleets
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|f| f.namespace().as_deref() == Some(ns))
        .map(|f| (f.name_any(), f.clone()))
        .collect();
    let rollouts: Vec<Arc<DeserializeGuard<CelldRollout>>> = caches
        .source
        .rollouts
        .as_ref()
        .map(|store| store.state())
        .unwrap_or_default();
    let siblings: Vec<&CelldRollout> = rollouts
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|r| r.namespace().as_deref() == Some(ns))
        .collect();
    let selection = selection::select(rollout, fleets.values(), &siblings);
    let target = target::now(rollout, |r| caches.source.flux(r.kind, ns, &r.name));
    Read {
        fleets,
        selection,
        target,
    }
}

/// Why `rollout` is paused, if it is: spec.paused or the annotation.
fn paused(rollout: &CelldRollout) -> Option<String> {
    match rollout.annotations().get(labels::ROLLOUT_PAUSED) {
        Some(why) if !why.trim().is_empty() => Some(format!(
            "annotation {}: {}",
            labels::ROLLOUT_PAUSED,
            why.trim()
        )),
        Some(_) => Some(format!("annotation {}", labels::ROLLOUT_PAUSED)),
        None => rollout.spec.paused.then(|| "spec.paused".to_string()),
    }
}

/// The body a webhook gets for wave `number`.
fn webhook_body(
    rollout: &CelldRollout,
    status: &CelldRolloutStatus,
    number: i32,
) -> serde_json::Value {
    let fleets: Vec<serde_json::Value> = status
        .waves
        .iter()
        .filter(|w| w.number == number)
        .flat_map(|w| &w.fleets)
        .filter(|f| f.phase != FleetPhase::Left)
        .map(|f| json!({"name": f.name, "version": f.to, "from": f.from}))
        .collect();
    json!({
        "rollout": rollout.name_any(),
        "namespace": rollout.namespace(),
        "wave": number,
        "revision": status.target.as_ref().map(|t| &t.revision),
        "fleets": fleets,
    })
}

/// Calls, all at once, the webhooks of the wave `status` (as written) checks that are due a
/// call, if a wave is being checked.
async fn check(
    rollout: &CelldRollout,
    status: &CelldRolloutStatus,
    now: Timestamp,
) -> Option<Checked> {
    let wave = status
        .waves
        .iter()
        .find(|w| w.phase == WavePhase::Checking)?;
    let body = webhook_body(rollout, status, wave.number);
    let calls = rollout.spec.gates.webhooks.iter().map(|gate| {
        let last = wave.gates.iter().find(|g| g.name == gate.name);
        webhook::ask(gate, &body, last, now)
    });
    let results: Vec<_> = futures::future::join_all(calls)
        .await
        .into_iter()
        .flatten()
        .collect();
    (!results.is_empty()).then_some(Checked {
        wave: wave.number,
        results,
    })
}

/// When to look at the rollout again.
fn again(status: &CelldRolloutStatus, now: Timestamp, resync: Duration) -> Duration {
    if status.phase.ended() && !status.rolling_back() {
        return resync_grid::aligned(resync);
    }
    let bake_end = status
        .waves
        .iter()
        .filter(|w| w.phase == WavePhase::Baking)
        .filter_map(|w| w.bake_until.as_ref())
        .map(|until| {
            let left = until.0.duration_since(now).as_secs_f64().max(0.0);
            Duration::from_secs_f64(left) + BAKE_MARGIN
        })
        .min();
    bake_end.map_or(UNDER_WAY, |end| end.min(UNDER_WAY))
}

/// What a reconcile holds beside what it read: the annotations and the time.
struct Held<'a> {
    paused: Option<&'a str>,
    promotion: Option<&'a str>,
    aborted: Option<&'a str>,
    now: Timestamp,
}

impl<'a> Held<'a> {
    /// The input of a step over `read`, with what the webhooks and pointer writes did.
    fn input(
        &self,
        rollout: &'a CelldRollout,
        read: &'a Read,
        checked: Option<&'a Checked>,
        pointed_back: &'a BTreeMap<String, PointedBack>,
    ) -> Input<'a> {
        Input {
            rollout,
            selection: &read.selection,
            fleets: &read.fleets,
            target: &read.target,
            paused: self.paused,
            promotion: self.promotion,
            aborted: self.aborted,
            checked,
            pointed_back,
            now: self.now,
        }
    }
}

/// Reads, steps, calls, points back and publishes.
async fn reconcile_rollout(rollout: &CelldRollout, ctx: &Context) -> Result<Action, Error> {
    let ns = rollout.namespace().ok_or(Error::Unnamed("CelldRollout"))?;
    let name = rollout.name_any();
    ctx.shared.caches.ready().await?;
    let read = read(ctx, rollout, &ns);
    let paused = paused(rollout);
    let promotion = rollout
        .annotations()
        .get(labels::PROMOTE_WAVE)
        .map(|v| v.trim().to_string());
    let aborted = rollout
        .annotations()
        .get(labels::ROLLOUT_ABORT)
        .map(|why| match why.trim() {
            "" => "by hand".to_string(),
            why => why.to_string(),
        });
    let now = Timestamp::now();
    let none = BTreeMap::new();
    let held = Held {
        paused: paused.as_deref(),
        promotion: promotion.as_deref(),
        aborted: aborted.as_deref(),
        now,
    };
    let input = |checked, pointed_back| held.input(rollout, &read, checked, pointed_back);
    let latest = ctx.written.newest(rollout);
    let first = progress::step(&input(None, &none), latest.as_ref());
    // Only a wave the status already says is being checked is asked: its waiting is said
    // before any webhook is called, however long it takes to answer.
    let checked = match &latest {
        Some(said) => check(rollout, said, now).await,
        None => None,
    };
    let pointed_back = rollback::due(&ctx.shared, &ns, &name, &first, &read.fleets).await;
    let mut written = first.clone();
    let lock = ctx.status.lock(&rollout.uid().unwrap_or_default());
    let writing = lock.lock().await;
    let update = ctx.status.next(rollout, |previous| {
        let next = progress::step(&input(checked.as_ref(), &pointed_back), previous);
        written = next.clone();
        next
    });
    let mut held = None;
    if let Some(update) = update {
        held = spacing::hold(
            update.previous.as_ref(),
            &update.status,
            ctx.status.since_write(rollout),
        );
        if held.is_none() {
            ctx.status.write(rollout, update, notes::notes).await?;
        }
    }
    drop(writing);
    let wait = again(&written, now, ctx.shared.settings.resync);
    let wait = held.map_or(wait, |held| wait.min(held));
    if written.phase == RolloutPhase::Progressing || !pointed_back.is_empty() {
        tracing::debug!(rollout = %name, namespace = %ns, phase = written.phase.as_str(), "rollout stepped");
    }
    Ok(Action::requeue(wait))
}
