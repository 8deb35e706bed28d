//! The CelldRollout `deploy --selector ... --waves ... --image ...` applies: only what the
//! command line says (the image, the selector, the waves and their bake), so the API server
//! fills in the defaults and fields other managers set stay theirs; and the rollout as the API
//! server will hold it, which admission's rules and the plan are checked on.

use super::waves::Waves;
use celld_api::CelldRollout;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::Resource;
use serde_json::{Value, json};

/// How the image holds the Worker project.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Layout {
    /// As `deploy --image` takes it: the deployer (celld, esbuild, curl) with the project at
    /// /app, run as the deploy Job's container
    Deployer,
    /// The project alone, at the image's root, mounted read-only into the operator's deployer
    /// of each fleet's celld release (an image volume: Kubernetes 1.35 or later)
    Volume,
}

/// What the rollout is made of.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Its name.
    pub name: String,
    /// The image it ships.
    pub image: String,
    /// How the image holds the project.
    pub layout: Layout,
    /// `--selector` as given.
    pub selector_text: String,
    /// The fleets it ships to.
    pub selector: LabelSelector,
    /// How far each wave goes.
    pub waves: Waves,
    /// How long each wave's fleets bake; None for the default.
    pub bake: Option<String>,
}

/// The object applied in `namespace`.
pub fn body(request: &Request, namespace: &str) -> Value {
    let mut image = json!({ "reference": request.image });
    if request.layout == Layout::Deployer {
        image["layout"] = json!("Deployer");
    }
    let waves: Vec<Value> = request
        .waves
        .sizes
        .iter()
        .map(|size| {
            let mut wave = json!({ "fleets": size });
            if let Some(bake) = &request.bake {
                wave["bake"] = json!(bake);
            }
            wave
        })
        .collect();
    json!({
        "apiVersion": CelldRollout::api_version(&()),
        "kind": CelldRollout::kind(&()),
        "metadata": { "name": request.name, "namespace": namespace },
        "spec": {
            "source": { "image": image },
            "selector": request.selector,
            "waves": waves,
        },
    })
}

/// The rollout `body` makes, with the defaults the API server fills in.
pub fn rollout(body: &Value) -> Result<CelldRollout, serde_json::Error> {
    serde_json::from_value(body.clone())
}

/// A rollout name from an image reference: the last part of its repository, in lower case,
/// what a DNS label does not take turned into '-' (`registry.example.com/team/Web_Worker:1.4`
/// gives `web-worker`); None when nothing is left.
pub fn name_from_image(image: &str) -> Option<String> {
    let repository = image.split('@').next().unwrap_or(image);
    let last = repository.rsplit('/').next().unwrap_or(repository);
    let last = last.split(':').next().unwrap_or(last);
    let name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let name = name
        .get(..63)
        .unwrap_or(&name)
        .trim_matches('-')
        .to_string();
    (!name.is_empty()).then_some(name)
}

/// Checks a rollout name as `--name` takes it: a DNS label of at most 63 characters.
pub fn parse_name(s: &str) -> Result<String, String> {
    let valid = !s.is_empty()
        && s.len() <= 63
        && s.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if valid {
        Ok(s.to_string())
    } else {
        Err(format!(
            "'{s}' is not a rollout name: use lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 characters (for example web)"
        ))
    }
}

/// Checks `--bake` as a wave's bake is written: hours, minutes and seconds from 0s to 24h.
pub fn parse_bake(s: &str) -> Result<String, String> {
    match celld_api::fleet::parse_duration(s) {
        Some(d) if d.as_secs() <= 24 * 3600 => Ok(s.to_string()),
        _ => Err(format!(
            "'{s}' is not a bake time: write hours, minutes and seconds such as 90s, 10m or 1h30m, from 0s to 24h"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_comes_from_the_image_repository() {
        for (image, name) in [
            (
                "registry.example.com/web-worker:1.4.2@sha256:0000000000000000000000000000000000000000000000000000000000000000",
                Some("web-worker"),
            ),
            ("localhost:5000/team/Web_Worker", Some("web-worker")),
            ("web", Some("web")),
            ("registry.example.com/__:1", None),
        ] {
            assert_eq!(name_from_image(image).as_deref(), name, "{image}");
        }
        assert_eq!(name_from_image(&"a".repeat(80)).map(|n| n.len()), Some(63));
    }

    #[test]
    fn names_and_bakes_are_checked_as_the_crd_does() {
        assert_eq!(parse_name("web-2").as_deref(), Ok("web-2"));
        for bad in ["", "Web", "-web", "web-", "web.api", &"a".repeat(64)] {
            assert!(parse_name(bad).is_err(), "{bad:?}");
        }
        for good in ["0s", "10m", "1h30m", "24h"] {
            assert_eq!(parse_bake(good).as_deref(), Ok(good));
        }
        for bad in ["", "10", "25h", "1d", "5m1h"] {
            assert!(parse_bake(bad).is_err(), "{bad:?}");
        }
    }
}
