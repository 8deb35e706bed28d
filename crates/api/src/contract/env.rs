//! Which of a fleet's environment variables its celld version refuses at startup, by the release
//! table: refused variables, and the drain-token wait that 0.4.1 bounds by the shutdown bound.

use super::releases::{
    DRAIN_TOKEN_WAIT_MS, Rules, SHUTDOWN_TOTAL_MS, Shutdown, display, first_refusal, triple,
};
use super::version::{image_version, unknown_because};
use k8s_openapi::api::core::v1::EnvVar;

/// The variable that bounds celld's graceful shutdown.
pub const SHUTDOWN_TOTAL: &str = "CELLD_SHUTDOWN_TOTAL_MS";
/// The variable 0.4.1 bounds by ¾ of [`SHUTDOWN_TOTAL`].
pub const DRAIN_TOKEN_WAIT: &str = "CELLD_DRAIN_TOKEN_WAIT_MS";

/// Seconds after which celld evicts an idle cell (unset: only pressure or the residency cap
/// does); celld balances only hibernated cells, so without it a new node takes new cells only.
pub const IDLE_EVICT: &str = "CELLD_IDLE_EVICT_S";

/// One variable a node would refuse, and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvRefusal {
    /// The variable.
    pub name: String,
    /// The sentence: which celld refuses it, why, and what to set instead.
    pub message: String,
}

/// Whether `var` counts as set for a refusal that tolerates an empty value.
fn set(var: &EnvVar) -> bool {
    var.value_from.is_some() || var.value.as_deref().is_some_and(|v| !v.is_empty())
}

/// A literal value of `name` in `env`, as a number of milliseconds.
fn millis(env: &[EnvVar], name: &str) -> Option<u64> {
    env.iter()
        .find(|e| e.name == name)
        .and_then(|e| e.value.as_deref())
        .and_then(|v| v.trim().parse().ok())
}

/// The variables of `env` that celld running `image` refuses at startup. When the image's
/// version is unknown (a digest alone, `latest`), every variable some release refuses is named,
/// with that release: the nodes refuse it if they run it or later.
pub fn refusals(image: &str, env: &[EnvVar]) -> Vec<EnvRefusal> {
    let version = image_version(image);
    let mut found: Vec<EnvRefusal> = env
        .iter()
        .filter_map(|var| {
            let (since, refusal) = first_refusal(&var.name)?;
            if refusal.empty_tolerated && !set(var) {
                return None;
            }
            let (name, release, instead) = (&var.name, display(since), refusal.instead);
            let message = match &version {
                Some(v) if triple(v) < since => return None,
                Some(v) => format!(
                    "spec.env: celld {release} and later refuse {name} at startup{}, and spec.image {image} runs v{v}: {instead}",
                    if refusal.empty_tolerated { "" } else { ", even empty" },
                ),
                None => format!(
                    "spec.env: celld {release} and later refuse {name} at startup, and the version of spec.image {image} is unknown ({}): {instead}, or set an image tagged with an older version",
                    unknown_because(image),
                ),
            };
            Some(EnvRefusal {
                name: name.clone(),
                message,
            })
        })
        .collect();
    if let Some(v) = &version {
        found.extend(shutdown_refusal(Rules::of(v).shutdown, &v.to_string(), env));
    }
    found
}

/// The drain-token wait a release with [`Shutdown::TokenWaitWithinThreeQuarters`] refuses.
fn shutdown_refusal(shutdown: Shutdown, version: &str, env: &[EnvVar]) -> Option<EnvRefusal> {
    if shutdown != Shutdown::TokenWaitWithinThreeQuarters {
        return None;
    }
    let total = millis(env, SHUTDOWN_TOTAL).unwrap_or(SHUTDOWN_TOTAL_MS);
    let wait = millis(env, DRAIN_TOKEN_WAIT).unwrap_or(DRAIN_TOKEN_WAIT_MS);
    (wait.saturating_mul(4) > total.saturating_mul(3)).then(|| EnvRefusal {
        name: SHUTDOWN_TOTAL.into(),
        message: format!(
            "spec.env: celld v{version} stops at startup when {DRAIN_TOKEN_WAIT} ({wait}) is above ¾ of {SHUTDOWN_TOTAL} ({total}): set {SHUTDOWN_TOTAL} to at least {} or lower {DRAIN_TOKEN_WAIT}",
            wait.saturating_mul(4).div_ceil(3)
        ),
    })
}

#[cfg(test)]
mod tests;
