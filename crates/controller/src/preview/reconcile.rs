//! One preview's reconcile: judge it against its fleet, apply its own fleet (or retire it at
//! its TTL or on deletion), publish its status and the Events a change is worth.

use crate::children::MANAGER;
use crate::error::Error;
use crate::fleet::context::Context;
use crate::preview::lifetime::{self, Verdict};
use crate::preview::retire::{self, Retired};
use crate::preview::status::{self, Stage};
use crate::preview::{child, finalizer};
use crate::status::note::Note;
use celld_api::reasons::Reason;
use celld_api::{CelldFleet, CelldPreview, CelldPreviewStatus, PreviewPhase};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::reflector::ObjectRef;
use kube::{Api, Resource, ResourceExt};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tracing::warn;

/// The cached fleet `name` of namespace `ns`, if it parses.
fn cached_fleet(ctx: &Context, ns: &str, name: &str) -> Option<CelldFleet> {
    let guard = ctx.fleets.get(&ObjectRef::new(name).within(ns))?;
    guard.0.as_ref().ok().cloned()
}

/// Reconciles one preview.
pub async fn reconcile(
    guard: Arc<DeserializeGuard<CelldPreview>>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let preview = match &guard.0 {
        Ok(preview) => preview,
        Err(invalid) => {
            warn!(error = %invalid.error, name = ?invalid.metadata.name, "a CelldPreview does not match the schema; waiting for it to change");
            return Ok(Action::await_change());
        }
    };
    let ns = preview.namespace().ok_or(Error::Unnamed("CelldPreview"))?;
    let name = preview.name_any();
    ctx.caches.ready().await?;
    let api: Api<CelldPreview> = Api::namespaced(ctx.client.clone(), &ns);
    let parent = cached_fleet(&ctx, &ns, &preview.spec.fleet);
    let named = cached_fleet(&ctx, &ns, &name);
    let ours = named.as_ref().filter(|f| child::is_ours(f, preview));
    if preview.metadata.deletion_timestamp.is_some() {
        return deleting(&ctx, &api, preview, parent.as_ref(), ours).await;
    }
    let phase = preview.status.as_ref().map(|s| s.phase);
    if phase == Some(PreviewPhase::Expired) {
        return Ok(Action::await_change());
    }
    finalizer::hold(&api, preview).await?;
    let now = Timestamp::now();
    let verdict = lifetime::judge(preview, parent.as_ref(), now);
    let expired = verdict.expires_at().is_some_and(|at| at <= now);
    let retired;
    let stage = if expired {
        retired = retire::retire(&ctx, preview, parent.as_ref(), ours).await?;
        match &retired {
            Retired::Done(removed) => Stage::Expired {
                at: now,
                removed: *removed,
            },
            Retired::Waiting { why, .. } | Retired::Stuck(why) => Stage::Expiring(why),
        }
    } else {
        retired = Retired::Done(0);
        match &verdict {
            Verdict::Live { policy, parent, .. } => {
                if named.is_some() && ours.is_none() {
                    Stage::NameTaken
                } else {
                    let wanted = child::render(parent, policy, preview);
                    if !ours.is_some_and(|live| child::up_to_date(live, &wanted)) {
                        apply(&ctx, &ns, &wanted).await?;
                    }
                    Stage::Serving(ours)
                }
            }
            Verdict::Refused {
                reason, message, ..
            } => Stage::Refused(*reason, message),
        }
    };
    let next = status::compute(preview, &verdict, stage, now);
    publish(&ctx, &api, preview, next).await?;
    Ok(match (&retired, expired) {
        (Retired::Waiting { again, .. }, true) => Action::requeue(*again),
        (Retired::Stuck(_), true) => Action::requeue(ctx.settings.resync),
        (Retired::Done(_), true) => Action::await_change(),
        (_, false) => Action::requeue(until(verdict.expires_at(), now, ctx.settings.resync)),
    })
}

/// How long until `expires_at` (just after it), at most `resync`.
fn until(expires_at: Option<Timestamp>, now: Timestamp, resync: Duration) -> Duration {
    expires_at
        .and_then(|at| Duration::try_from(at.duration_since(now)).ok())
        .map_or(resync, |left| (left + Duration::from_secs(1)).min(resync))
}

/// A deleted preview: retire it, then release the finalizer. A prefix nothing says how to
/// reach is kept, with a Warning Event naming it: the preview does not hang in deletion for it.
async fn deleting(
    ctx: &Context,
    api: &Api<CelldPreview>,
    preview: &CelldPreview,
    parent: Option<&CelldFleet>,
    ours: Option<&CelldFleet>,
) -> Result<Action, Error> {
    if !finalizer::held(preview) {
        return Ok(Action::await_change());
    }
    let already = preview
        .status
        .as_ref()
        .is_some_and(|s| s.phase == PreviewPhase::Expired);
    if !already {
        match retire::retire(ctx, preview, parent, ours).await? {
            Retired::Waiting { again, .. } => return Ok(Action::requeue(again)),
            Retired::Stuck(why) => {
                send(
                    ctx,
                    preview,
                    vec![Note {
                        type_: EventType::Warning,
                        reason: Reason::DataKept.as_str().to_string(),
                        note: format!("the preview was deleted but its data was kept: {why}"),
                    }],
                )
                .await;
            }
            Retired::Done(_) => {}
        }
    }
    finalizer::release(api, preview).await?;
    Ok(Action::await_change())
}

/// Applies the preview's fleet.
async fn apply(ctx: &Context, ns: &str, fleet: &CelldFleet) -> Result<(), Error> {
    let name = fleet.name_any();
    Api::<CelldFleet>::namespaced(ctx.client.clone(), ns)
        .patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(fleet),
        )
        .await
        .map_err(|e| Error::kube(format!("applying CelldFleet {name} for its preview"), e))?;
    Ok(())
}

/// Writes `next` when it differs from the status read, then the Events the change is worth.
async fn publish(
    ctx: &Context,
    api: &Api<CelldPreview>,
    preview: &CelldPreview,
    next: CelldPreviewStatus,
) -> Result<(), Error> {
    if preview.status.as_ref() == Some(&next) {
        return Ok(());
    }
    let name = preview.name_any();
    let patch = json!({
        "apiVersion": CelldPreview::api_version(&()),
        "kind": CelldPreview::kind(&()),
        "status": next,
    });
    api.patch_status(
        &name,
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(&patch),
    )
    .await
    .map_err(|e| Error::kube(format!("writing the status of CelldPreview {name}"), e))?;
    send(ctx, preview, status::notes(preview.status.as_ref(), &next)).await;
    Ok(())
}

/// Publishes `notes` on `preview` (a recorder per Event, as the fleets' status writer does).
async fn send(ctx: &Context, preview: &CelldPreview, notes: Vec<Note>) {
    let reporter = Reporter {
        controller: ctx.settings.reporter.clone(),
        instance: ctx.settings.instance.clone(),
    };
    for note in notes {
        let event = Event {
            type_: note.type_,
            reason: note.reason,
            note: Some(note.note),
            action: "Reconcile".into(),
            secondary: None,
        };
        let recorder = Recorder::new(ctx.client.clone(), reporter.clone());
        if let Err(e) = recorder.publish(&event, &preview.object_ref(&())).await {
            warn!(error = %e, reason = %event.reason, "publishing an Event failed");
        }
    }
}

/// Retries a failed preview reconcile with the shared per-object backoff.
pub fn error_policy(
    guard: Arc<DeserializeGuard<CelldPreview>>,
    error: &Error,
    ctx: Arc<Context>,
) -> Action {
    let key = match &guard.0 {
        Ok(p) => format!(
            "preview:{}/{}",
            p.namespace().unwrap_or_default(),
            p.name_any()
        ),
        Err(invalid) => format!("preview:{:?}", invalid.metadata.name),
    };
    let wait = ctx.backoff(&key);
    warn!(preview = %key, error = %error, retry_in = ?wait, "preview reconcile failed");
    Action::requeue(wait)
}
