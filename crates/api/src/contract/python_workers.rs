//! celld 0.6.1's third gate: no Python Worker is deployed until every node of the fleet runs
//! 0.6.1 or later (its upgrade notes: "do not deploy a Python Worker … until every node runs
//! 0.6.1"). celld's documents name no manifest feature for one, so the gate is judged before
//! the deploy, from the Worker's wrangler config and the images of the fleet's nodes.

use super::releases::{Triple, display, triple};
use super::version::{image_version, unknown_because};
use serde_json::Value;

/// The first release that serves Python Workers.
pub const SINCE: Triple = (0, 6, 1);

/// Why the wrangler config `config` (parsed) makes a Python Worker, as Cloudflare defines one:
/// its `main` is a `.py` module, or its `compatibility_flags` has `python_workers`. None for
/// any other Worker.
pub fn python_worker(config: &Value) -> Option<String> {
    if let Some(main) = config.get("main").and_then(Value::as_str)
        && main.ends_with(".py")
    {
        return Some(format!("its main is {main}"));
    }
    config
        .get("compatibility_flags")
        .and_then(Value::as_array)
        .is_some_and(|flags| flags.iter().any(|f| f.as_str() == Some("python_workers")))
        .then(|| "its compatibility_flags has python_workers".to_string())
}

/// Whether an image runs a release that serves Python Workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Serves {
    /// Its tag names a release from [`SINCE`] on.
    Yes,
    /// Its tag names an older release: the text names it (`v0.6.0`).
    Older(String),
    /// Its tag names no version: the text says why.
    Unknown(&'static str),
}

/// Whether `image` runs a release that serves Python Workers.
pub fn serves(image: &str) -> Serves {
    match image_version(image) {
        Some(v) if triple(&v) >= SINCE => Serves::Yes,
        Some(v) => Serves::Older(display(triple(&v))),
        None => Serves::Unknown(unknown_because(image)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_python_worker_is_told_by_its_main_or_its_flag() {
        assert_eq!(
            python_worker(&json!({"main": "src/entry.py"})).as_deref(),
            Some("its main is src/entry.py")
        );
        assert_eq!(
            python_worker(&json!({"main": "src/index.ts", "compatibility_flags": ["nodejs_compat", "python_workers"]}))
                .as_deref(),
            Some("its compatibility_flags has python_workers")
        );
        assert_eq!(python_worker(&json!({"main": "src/index.ts"})), None);
        assert_eq!(
            python_worker(
                &json!({"main": "src/python.ts", "compatibility_flags": ["nodejs_compat"]})
            ),
            None
        );
        assert_eq!(python_worker(&json!({})), None, "an asset-only project");
    }

    #[test]
    fn images_from_0_6_1_on_serve_python_workers() {
        assert_eq!(serves("ghcr.io/denoland/celld:v0.6.1"), Serves::Yes);
        assert_eq!(
            serves("ghcr.io/denoland/celld:0.6.2@sha256:ab"),
            Serves::Yes
        );
        assert_eq!(
            serves("ghcr.io/denoland/celld:v0.6.0"),
            Serves::Older("v0.6.0".into())
        );
        assert_eq!(
            serves("ghcr.io/denoland/celld:latest"),
            Serves::Unknown("its tag is not a version")
        );
    }
}
