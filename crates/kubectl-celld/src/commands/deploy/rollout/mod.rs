//! `deploy --selector SELECTOR --waves 1,10%,100% --image IMAGE`: instead of writing every
//! fleet at once, create (or update) a CelldRollout, which the operator ships to the fleets in
//! waves. The rollout is built from the flags ([`body`]), checked against the CRD's rules, and
//! planned with the operator's own selection over the namespace's fleets and rollouts
//! ([`plan`]): the plan is printed, then the rollout applied ([`apply`]), or with `--dry-run`
//! printed as YAML and nothing created.

pub mod apply;
pub mod body;
pub mod plan;
pub mod waves;

use crate::cluster::kubeconfig::{self, ConnectArgs};
use crate::cluster::{fleets, rollouts};
use crate::error::rollout::RolloutError;
use crate::error::{Error, Result};
use crate::text::output;
use crate::text::output_format::OutputFormat;
use crate::text::progress::Progress;
use celld_api::CelldRollout;
use serde_json::Value;

/// The rollout `body` makes, as the API server would hold it, checked against the CRD's size
/// bounds and rules.
pub fn checked(body: &Value) -> Result<CelldRollout> {
    let refused = |why: String| {
        Error::InvalidSpec(format!(
            "the CelldRollout built from the flags would be refused by the API server: {why}; nothing was created"
        ))
    };
    let rollout = body::rollout(body).map_err(|e| refused(e.to_string()))?;
    celld_api::validate::rollout(&rollout).map_err(|e| refused(e.to_string()))?;
    Ok(rollout)
}

/// The warning for an image not pinned by digest, if `image` is one.
pub fn digest_warning(image: &str) -> Option<String> {
    (!image.contains("@sha256:")).then(|| {
        format!(
            "warning: {image} is not pinned by digest: the rollout knows its revision by the reference, so pushing the same tag again ships nothing new; pass REGISTRY/NAME:TAG@sha256:DIGEST"
        )
    })
}

/// The error for a plan that ships to no fleet.
pub fn nothing_to_ship(request: &body::Request, namespace: &str, plan: &plan::Plan) -> Error {
    let why = if plan.matched == 0 {
        format!(
            "no CelldFleet in namespace '{namespace}' matches the selector '{}'",
            request.selector_text
        )
    } else {
        format!(
            "the selector '{}' matches {} CelldFleets and the rollout leaves each alone (see Skipped above)",
            request.selector_text, plan.matched
        )
    };
    RolloutError::NothingToShip {
        name: request.name.clone(),
        namespace: namespace.to_string(),
        why,
    }
    .into()
}

/// Creates (or updates) the rollout `request` describes, or with `dry_run` prints it.
pub async fn run(cluster: &ConnectArgs, request: body::Request, dry_run: bool) -> Result<u8> {
    let mut progress = Progress::new();
    if let Some(warning) = digest_warning(&request.image) {
        progress.note(&warning);
    }
    let target = kubeconfig::connect(cluster).await?;
    let ns = target.namespace.clone();
    let body = body::body(&request, &ns);
    let rollout = checked(&body)?;
    let fleets = fleets::list(&target, Some(&ns)).await?;
    let existing = rollouts::list(&target).await?;
    let plan = plan::plan(&rollout, &fleets, &existing, jiff::Timestamp::now());
    output::print(&plan::render(&rollout, &plan))?;
    if plan.fleets() == 0 {
        return Err(nothing_to_ship(&request, &ns, &plan));
    }
    if dry_run {
        let yaml = output::serialize(&body, OutputFormat::Yaml)?;
        output::print(&format!(
            "Dry run: nothing was created. The CelldRollout it would apply:\n---\n{yaml}"
        ))?;
        return Ok(0);
    }
    let before = existing
        .iter()
        .find(|r| r.metadata.name.as_deref() == Some(request.name.as_str()));
    let after = apply::apply(&target, &request.name, &body).await?;
    output::print(&format!(
        "celldrollout.platform.celld.dev/{} {}\nFollow it with: kubectl celld rollout status {} -n {ns} -w\n",
        request.name,
        apply::outcome(before, &after),
        request.name
    ))?;
    Ok(0)
}
