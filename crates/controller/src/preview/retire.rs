//! Retiring a preview, at its TTL or when it is deleted: stop its nodes, empty its bucket
//! prefix, delete its fleet. Every step can be taken again (after a restart of the operator,
//! or by another replica): a stopped fleet is not patched again, an emptied prefix lists
//! nothing, a deleted fleet is not found.

use crate::buckets::object_store::StoreSource;
use crate::buckets::resolve::resolve_storage;
use crate::cache::caches;
use crate::error::Error;
use crate::preview::child;
use crate::preview::context::Context;
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
    let written = preview.status.as_ref().and_then(|s| s.bucket.clone());
    let removed = match writer {
        Some(writer) => match erase(ctx, &ns, &name, &writer, parent).await? {
            Ok(n) => n,
            Err(retired) => return Ok(retired),
        },
        None if written.is_none() => 0,
        None => {
            return Ok(Retired::Stuck(format!(
                "neither CelldFleet {name} nor CelldFleet {} (with spec.previews) is left to say how to reach {}: delete its objects by hand",
                preview.spec.fleet,
                written.unwrap_or_default()
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

/// Empties the prefix `writer` (the preview's fleet, live or as rendered) wrote to: the
/// number of objects deleted, or how the retirement stands when it could not.
async fn erase(
    ctx: &Context,
    ns: &str,
    name: &str,
    writer: &CelldFleet,
    parent: Option<&CelldFleet>,
) -> Result<Result<u64, Retired>, Error> {
    let bucket_text = &writer.spec.object_storage.bucket;
    let bucket = match BucketUrl::parse(bucket_text) {
        Ok(b) => b,
        Err(e) => return Ok(Err(Retired::Stuck(e.to_string()))),
    };
    let parent_bucket = parent.and_then(|p| BucketUrl::parse(&p.spec.object_storage.bucket).ok());
    if let Err(why) = erasable(&bucket, ns, name, parent_bucket.as_ref()) {
        return Ok(Err(Retired::Stuck(why)));
    }
    let resolved = match resolve_storage(
        &ctx.shared.caches,
        &ctx.shared.secrets,
        &ctx.shared.client,
        ns,
        writer,
    )
    .await
    {
        Ok(r) => r,
        Err(e) => {
            return Ok(Err(Retired::Stuck(format!(
                "the connection to {bucket_text} does not resolve: {e}"
            ))));
        }
    };
    let source = match StoreSource::new(
        &resolved.storage,
        resolved.secret.as_deref(),
        &ctx.shared.settings.store_endpoints,
        ctx.shared.settings.s3_timeout,
    ) {
        Ok(s) => s,
        Err(e) => {
            return Ok(Err(Retired::Stuck(format!(
                "no client for {bucket_text}: {e}"
            ))));
        }
    };
    Ok(match source.erase_prefix(&resolved.storage).await {
        Ok(n) => Ok(n),
        Err(e) => Err(Retired::Waiting {
            why: format!("the objects under {bucket_text} to be deleted ({e})"),
            again: ERASE_RETRY,
        }),
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
