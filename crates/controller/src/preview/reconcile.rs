//! One preview's reconcile: judge it against its fleet, apply its own fleet (or retire it at
//! its TTL or on deletion), publish its status and the Events a change is worth.

use crate::children::MANAGER;
use crate::error::Error;
use crate::preview::context::Context;
use crate::preview::lifetime::{self, PreviewVerdict};
use crate::preview::retire::{self, Retired};
use crate::preview::status::{self, Stage};
use crate::preview::{child, claim, finalizer};
use crate::shared::retry;
use crate::status::note::Note;
use celld_api::reasons::Reason;
use celld_api::{CelldFleet, CelldPreview, PreviewPhase};
use k8s_openapi::jiff::Timestamp;
use kube::api::{Patch, PatchParams};
use kube::core::DeserializeGuard;
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Api, ResourceExt};
use std::sync::Arc;
use std::time::Duration;

/// Reconciles one preview.
pub async fn reconcile(
    guard: Arc<DeserializeGuard<CelldPreview>>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let Some(preview) = retry::parsed(&guard) else {
        return Ok(Action::await_change());
    };
    let result = reconcile_preview(preview, &ctx).await;
    retry::settle(&ctx.shared, &ctx.status, preview, &result).await;
    result
}

/// Judges `preview` against its fleet, applies its own fleet (or retires it), and publishes
/// its status.
async fn reconcile_preview(preview: &CelldPreview, ctx: &Context) -> Result<Action, Error> {
    let ns = preview.namespace().ok_or(Error::Unnamed("CelldPreview"))?;
    let name = preview.name_any();
    let caches = &ctx.shared.caches;
    caches.ready().await?;
    let api: Api<CelldPreview> = Api::namespaced(ctx.shared.client.clone(), &ns);
    let parent = caches.fleet(&ns, &preview.spec.fleet);
    let named = caches.fleet(&ns, &name);
    let ours = named.as_ref().filter(|f| child::is_ours(f, preview));
    if preview.metadata.deletion_timestamp.is_some() {
        return deleting(ctx, &api, preview, parent.as_ref(), ours).await;
    }
    let newest = ctx
        .written
        .newest(preview)
        .or_else(|| preview.status.clone());
    if newest.as_ref().map(|s| s.phase) == Some(PreviewPhase::Expired) {
        return Ok(Action::await_change());
    }
    let mut claimed = newest.and_then(|s| s.claimed_bucket);
    let refusal: String;
    finalizer::hold(&api, preview).await?;
    let now = Timestamp::now();
    let verdict = lifetime::judge(preview, parent.as_ref(), now);
    let expired = verdict.expires_at().is_some_and(|at| at <= now);
    let retired;
    let stage = if expired {
        retired = retire::retire(ctx, preview, parent.as_ref(), ours).await?;
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
            PreviewVerdict::Live { policy, parent, .. } => {
                if named.is_some() && ours.is_none() {
                    Stage::NameTaken
                } else {
                    let wanted = child::render(parent, policy, preview);
                    // The prefix is claimed before anything can write to it.
                    let claim = match &claimed {
                        Some(_) => Ok(()),
                        None => claim::claim(ctx, preview, &wanted)
                            .await
                            .map(|bucket| claimed = Some(bucket)),
                    };
                    match claim {
                        Err(why) => {
                            refusal = why;
                            Stage::Refused(Reason::PrefixTaken, &refusal)
                        }
                        Ok(()) => {
                            if !ours.is_some_and(|live| child::up_to_date(live, &wanted)) {
                                apply(ctx, &ns, &wanted).await?;
                            }
                            Stage::Serving(ours)
                        }
                    }
                }
            }
            PreviewVerdict::Refused {
                reason, message, ..
            } => Stage::Refused(*reason, message),
        }
    };
    ctx.status
        .publish(
            preview,
            |previous| {
                let mut status = status::compute(preview, previous, &verdict, stage, now);
                status.claimed_bucket = status.claimed_bucket.or_else(|| claimed.clone());
                status
            },
            status::notes,
        )
        .await?;
    let resync = ctx.shared.settings.resync;
    Ok(match (&retired, expired) {
        (Retired::Waiting { again, .. }, true) => Action::requeue(*again),
        (Retired::Stuck(_), true) => Action::requeue(resync),
        (Retired::Done(_), true) => Action::await_change(),
        (_, false) => Action::requeue(until(verdict.expires_at(), now, resync)),
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
                let note = Note::new(
                    EventType::Warning,
                    Reason::DataKept.as_str(),
                    format!("the preview was deleted but its data was kept: {why}"),
                );
                ctx.status.send(preview, vec![note]).await;
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
    Api::<CelldFleet>::namespaced(ctx.shared.client.clone(), ns)
        .patch(
            &name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(fleet),
        )
        .await
        .map_err(|e| Error::kube(format!("applying CelldFleet {name} for its preview"), e))?;
    Ok(())
}
