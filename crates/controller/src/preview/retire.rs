//! Retiring a preview, at its TTL or when it is deleted: stop its nodes, empty its bucket
//! prefix, delete its fleet. Every step can be taken again (after a restart of the operator,
//! or by another replica): a stopped fleet is not patched again, an emptied prefix lists
//! nothing, a deleted fleet is not found.

use crate::buckets::preview_prefix::Holder;
use crate::cache::caches;
use crate::error::Error;
use crate::preview::child;
use crate::preview::context::Context;
use crate::shared::bucket_access::reach;
use celld_api::labels::SOURCE_SUSPENDED;
use celld_api::{BucketUrl, CelldFleet, CelldPreview};
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;
use std::time::Duration;

/// The field manager of the patch that stops a retiring preview's fleet.
const RETIRE_MANAGER: &str = "celld-operator-retire";

/// How often a retirement looks again while the nodes stop.
const STOPPING_EVERY: Duration = Duration::from_secs(2);

/// How long a retirement waits after its bucket could not be emptied.
const ERASE_RETRY: Duration = Duration::from_secs(30);

/// The value of the suspension a retiring preview fleet gets: its spec.source must not publish
/// into the prefix being emptied.
const SUSPENDED_BECAUSE: &str = "the preview is being retired: its data is being deleted";

/// How far a retirement got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retired {
    /// Done: the fleet is deleted (or never was), the prefix emptied of this many objects.
    Done(u64),
    /// Under way: what it waits for, and when to look again.
    Waiting {
        /// What it waits for, as a phrase ("the nodes of CelldFleet pr-1 to stop").
        why: String,
        /// When to look again.
        again: Duration,
    },
    /// It cannot empty the prefix: nothing says how to reach it (the fleet and its connection
    /// are gone) or the connection does not resolve. Why, naming the prefix.
    Stuck(String),
}

/// Whether `bucket` may be emptied for preview `name` of namespace `ns`: it ends in
/// `/<ns>/<name>`, and `parent` (the previewed fleet's own bucket, when known) is neither it nor
/// under it nor above it. A check apart from admission's, right before anything is deleted.
pub fn erasable(
    bucket: &BucketUrl,
    ns: &str,
    name: &str,
    parent: Option<&BucketUrl>,
) -> Result<(), String> {
    let own = bucket.prefix.trim_matches('/');
    let tail = format!("{ns}/{name}");
    if !(own == tail || own.ends_with(&format!("/{tail}"))) {
        return Err(format!(
            "{bucket} is not a preview prefix (…/{ns}/{name}): nothing was deleted"
        ));
    }
    if let Some(parent) = parent {
        let theirs = parent.prefix.trim_matches('/');
        let overlaps = parent.scheme == bucket.scheme
            && parent.name == bucket.name
            && (theirs == own
                || theirs.starts_with(&format!("{own}/"))
                || own.starts_with(&format!("{theirs}/"))
                || theirs.is_empty());
        if overlaps {
            return Err(format!(
                "{bucket} overlaps the previewed fleet's own {parent}: nothing was deleted"
            ));
        }
    }
    Ok(())
}

/// Takes the next steps of retiring `preview`, whose fleet `ours` is (None: gone, or never
/// created), previewing `parent` (None: gone).
pub async fn retire(
    ctx: &Context,
    preview: &CelldPreview,
    parent: Option<&CelldFleet>,
    ours: Option<&CelldFleet>,
) -> Result<Retired, Error> {
    let ns = preview.namespace().ok_or(Error::Unnamed("CelldPreview"))?;
    let name = preview.name_any();
    let fleets: Api<CelldFleet> = Api::namespaced(ctx.shared.client.clone(), &ns);
    if let Some(fleet) = ours
        && let Some(waiting) = stop(ctx, &fleets, fleet).await?
    {
        return Ok(waiting);
    }
    // The fleet that wrote the data says where it is and how to reach it; without it, the
    // fleet it copied does, as long as it still allows previews.
    let writer = ours.cloned().or_else(|| {
        let parent = parent?;
        let policy = parent.spec.previews.as_ref()?;
        Some(child::render(parent, policy, preview))
    });
    let status = ctx
        .written
        .newest(preview)
        .or_else(|| preview.status.clone())
        .unwrap_or_default();
    let removed = match (writer, status.claimed_bucket) {
        (Some(writer), Some(claimed)) => {
            match erase(ctx, preview, &claimed, &writer, parent).await? {
                Ok(n) => n,
                Err(retired) => return Ok(retired),
            }
        }
        // Never claimed: its fleet was never made, so nothing was written.
        (_, None) if ours.is_none() => 0,
        (_, None) => {
            return Ok(Retired::Stuck(format!(
                "the operator never claimed a prefix for the preview, so it empties none: delete the objects under {} by hand",
                status.bucket.unwrap_or_else(|| "its prefix".into())
            )));
        }
        (None, Some(claimed)) => {
            return Ok(Retired::Stuck(format!(
                "neither CelldFleet {name} nor CelldFleet {} (with spec.previews) is left to say how to reach {claimed}: delete its objects by hand",
                preview.spec.fleet
            )));
        }
    };
    if ours.is_some() {
        match fleets.delete(&name, &DeleteParams::background()).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 404 => {}
            Err(e) => return Err(Error::kube(format!("deleting CelldFleet {name}"), e)),
        }
    }
    Ok(Retired::Done(removed))
}

/// Scales `fleet` to no node with its spec.source suspended, and waits until its StatefulSet
/// has no pod left: None once stopped.
async fn stop(
    ctx: &Context,
    fleets: &Api<CelldFleet>,
    fleet: &CelldFleet,
) -> Result<Option<Retired>, Error> {
    let name = fleet.name_any();
    let ns = fleet.namespace().unwrap_or_default();
    let suspended = fleet.annotations().contains_key(SOURCE_SUSPENDED);
    if fleet.spec.replicas != 0 || !suspended {
        let patch = json!({
            "metadata": {"annotations": {SOURCE_SUSPENDED: SUSPENDED_BECAUSE}},
            "spec": {"replicas": 0},
        });
        // A merge patch, not an apply: it changes two fields of a fleet the preview applied in
        // whole, and an apply of only those two would give up the rest. Sent under its own
        // field manager so the apply manager's fields stay the applies' alone; the preview's
        // next apply (if it is ever served again) takes spec.replicas back.
        let params = PatchParams {
            field_manager: Some(RETIRE_MANAGER.into()),
            ..PatchParams::default()
        };
        fleets
            .patch(&name, &params, &Patch::Merge(&patch))
            .await
            .map_err(|e| Error::kube(format!("stopping CelldFleet {name}"), e))?;
        return Ok(Some(waiting_for_nodes(&name)));
    }
    let sts = caches::child(&ctx.shared.caches.children.statefulsets, &ns, &name);
    let running = sts.is_some_and(|s| {
        s.spec.as_ref().and_then(|sp| sp.replicas) != Some(0)
            || s.status.as_ref().is_some_and(|st| st.replicas > 0)
    });
    Ok(running.then(|| waiting_for_nodes(&name)))
}

fn waiting_for_nodes(name: &str) -> Retired {
    Retired::Waiting {
        why: format!("the nodes of CelldFleet {name} to stop"),
        again: STOPPING_EVERY,
    }
}

/// Empties the prefix claimed for the preview `name` (`claimed`, from its status), reached with
/// the connection of `writer` (the preview's fleet, live or as rendered): the number of objects
/// deleted, or how the retirement stands when it could not. Nothing is deleted while the
/// marker there is not the preview's, while another fleet keeps its data at or under the
/// prefix, or where the prefix is not a preview's apart from `parent`'s.
async fn erase(
    ctx: &Context,
    preview: &CelldPreview,
    claimed: &str,
    writer: &CelldFleet,
    parent: Option<&CelldFleet>,
) -> Result<Result<u64, Retired>, Error> {
    let ns = preview.namespace().unwrap_or_default();
    let name = preview.name_any();
    let bucket = match BucketUrl::parse(claimed) {
        Ok(b) => b,
        Err(e) => return Ok(Err(Retired::Stuck(e.to_string()))),
    };
    let parent_bucket = parent.and_then(|p| BucketUrl::parse(&p.spec.object_storage.bucket).ok());
    if let Err(why) = erasable(&bucket, &ns, &name, parent_bucket.as_ref()) {
        return Ok(Err(Retired::Stuck(why)));
    }
    if let Some(inside) = fleet_inside(ctx, &bucket, &ns, &name) {
        return Ok(Err(Retired::Waiting {
            why: format!(
                "{inside} to keep its data elsewhere: it is at or under {bucket}, which nothing empties while a fleet uses it"
            ),
            again: ERASE_RETRY,
        }));
    }
    // The claimed prefix, with the writer's connection.
    let mut writer = writer.clone();
    writer.spec.object_storage.bucket = claimed.to_string();
    let (source, storage) = match reach(&ctx.shared, &ns, &writer).await {
        Ok(reached) => reached,
        Err(why) => return Ok(Err(Retired::Stuck(why))),
    };
    let uid = preview.uid().unwrap_or_default();
    let waiting = |e: String| Retired::Waiting {
        why: format!("the objects under {claimed} to be deleted ({e})"),
        again: ERASE_RETRY,
    };
    match source.prefix_holder(&storage, &uid).await {
        Ok(Holder::This) => {}
        // An erasure that finished deleted the marker last: nothing is left.
        Ok(Holder::Nobody) => {
            return Ok(match source.prefix_is_empty(&storage).await {
                Ok(true) => Ok(0),
                Ok(false) => Err(Retired::Stuck(format!(
                    "{claimed} holds objects but no marker of this preview: nothing was deleted; delete them by hand if they are the preview's"
                ))),
                Err(e) => Err(waiting(e)),
            });
        }
        Ok(Holder::Another(who)) => {
            return Ok(Err(Retired::Stuck(format!(
                "{claimed} is claimed by {who}, not this preview: nothing was deleted"
            ))));
        }
        Err(e) => return Ok(Err(waiting(e))),
    }
    Ok(source.erase_prefix(&storage).await.map_err(waiting))
}

/// Another fleet (of any namespace the operator sees, a preview's included) whose bucket is
/// `bucket` or under it, as `CelldFleet NS/NAME`; the preview `ns`/`name`'s own is not one.
fn fleet_inside(ctx: &Context, bucket: &BucketUrl, ns: &str, name: &str) -> Option<String> {
    let prefix = bucket.prefix.trim_matches('/');
    ctx.shared.caches.fleets.state().iter().find_map(|guard| {
        let fleet = guard.0.as_ref().ok()?;
        let (fleet_ns, fleet_name) = (fleet.namespace().unwrap_or_default(), fleet.name_any());
        if fleet_ns == ns && fleet_name == name {
            return None;
        }
        let theirs = BucketUrl::parse(&fleet.spec.object_storage.bucket).ok()?;
        let at = theirs.prefix.trim_matches('/');
        let inside = theirs.scheme == bucket.scheme
            && theirs.name == bucket.name
            && (at == prefix || at.starts_with(&format!("{prefix}/")));
        inside.then(|| format!("CelldFleet {fleet_ns}/{fleet_name}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> BucketUrl {
        BucketUrl::parse(s).unwrap()
    }

    #[test]
    fn only_a_previews_own_prefix_apart_from_its_fleets_is_erasable() {
        let parent = url("s3://celld/web");
        assert!(
            erasable(
                &url("s3://celld-previews/web/shop/pr-1"),
                "shop",
                "pr-1",
                Some(&parent)
            )
            .is_ok()
        );
        assert!(
            erasable(
                &url("s3://celld/previews/shop/pr-1"),
                "shop",
                "pr-1",
                Some(&parent)
            )
            .is_ok()
        );
        assert!(erasable(&url("s3://celld-previews/shop/pr-1"), "shop", "pr-1", None).is_ok());
        for (bucket, why) in [
            ("s3://celld-previews/web/shop/pr-12", "not a preview prefix"),
            ("s3://celld-previews/web/shop/xpr-1", "not a preview prefix"),
            ("s3://celld-previews", "not a preview prefix"),
            (
                "s3://celld/web/shop/pr-1",
                "overlaps the previewed fleet's own",
            ),
        ] {
            let err = erasable(&url(bucket), "shop", "pr-1", Some(&parent)).unwrap_err();
            assert!(err.contains(why), "{bucket}: {err}");
        }
        let whole = url("s3://celld");
        let err = erasable(&url("s3://celld/shop/pr-1"), "shop", "pr-1", Some(&whole)).unwrap_err();
        assert!(err.contains("overlaps"), "{err}");
    }
}
