//! celld 0.6.1's gate on Python Workers: none is deployed until every node of the fleet runs
//! 0.6.1 or later. celld's manifest names no feature for a Python Worker, so the operator
//! cannot see one; `deploy` of a directory reads the project's wrangler config, and for a
//! Python Worker ([`python_worker`]) refuses a fleet whose spec.image or a node's image runs an
//! older release, before anything is created. An image whose tag names no version is refused
//! too, unless `--force` says every node runs 0.6.1 or later.

use super::archive::WRANGLER_FILES;
use crate::cluster::fleet_context::{FleetContext, node_pods, node_selector};
use crate::error::{Error, Result};
use celld_api::CelldFleet;
use celld_api::contract::python_workers::{SINCE, Serves, python_worker, serves};
use celld_api::contract::releases::display;
use celld_api::rules::env::CONTAINER;
use k8s_openapi::api::core::v1::Pod;
use std::path::Path;

/// Whether the Worker in `dir` (None: it comes from an image, whose config cannot be read
/// here) may be deployed to `context`'s fleet: Ok(None), Ok(Some(warning)) with `force`, or the
/// refusal.
pub async fn check(
    context: &FleetContext,
    dir: Option<&Path>,
    force: bool,
) -> Result<Option<String>> {
    let Some(why) = dir.and_then(python_config) else {
        return Ok(None);
    };
    let pods = node_pods(
        &context.target.client,
        Some(context.namespace()),
        &node_selector(context.name()),
    )
    .await?;
    judge(&context.fleet, context.namespace(), &pods, &why, force)
}

/// Why the wrangler config at the top of `dir` makes a Python Worker; None for another Worker
/// and for a config that cannot be read or parsed (`celld deploy` reports that one).
fn python_config(dir: &Path) -> Option<String> {
    let file = WRANGLER_FILES.iter().find(|f| dir.join(f).is_file())?;
    let text = std::fs::read_to_string(dir.join(file)).ok()?;
    let (config, _vars) = celld_bucket::vars::merge::config_vars(file, &text).ok()?;
    python_worker(&config)
}

/// The gate for a Python Worker (`why` says what makes it one) and `fleet` (in `namespace`)
/// with node pods `pods`.
fn judge(
    fleet: &CelldFleet,
    namespace: &str,
    pods: &[Pod],
    why: &str,
    force: bool,
) -> Result<Option<String>> {
    let name = fleet.metadata.name.as_deref().unwrap_or_default();
    let mut images = vec![("spec.image".to_string(), fleet.spec.image.clone())];
    images.extend(pods.iter().filter_map(|pod| {
        let image = pod
            .spec
            .as_ref()?
            .containers
            .iter()
            .find(|c| c.name == CONTAINER)?
            .image
            .clone()?;
        Some((
            format!("node {}", pod.metadata.name.as_deref().unwrap_or_default()),
            image,
        ))
    }));
    let mut older = Vec::new();
    let mut unknown = Vec::new();
    for (what, image) in images {
        match serves(&image) {
            Serves::Yes => {}
            Serves::Older(version) => older.push(format!("{what} ({version})")),
            Serves::Unknown(because) => unknown.push(format!("{what} ({image}: {because})")),
        }
    }
    let since = display(SINCE);
    let gate = format!(
        "the Worker is a Python Worker ({why}), which celld serves from {since} on and which must not reach a fleet until every node runs {since} or later"
    );
    if !older.is_empty() {
        return Err(Error::PythonWorkerHeld(format!(
            "{gate}, and in fleet {namespace}/{name}, {} an older release: set spec.image to {since} or later (kubectl edit celldfleet {name} -n {namespace}), wait until kubectl celld status {name} -n {namespace} shows every node on it (IMAGE), and deploy again. Nothing was created.",
            listed(&older, "runs", "run")
        )));
    }
    if unknown.is_empty() {
        return Ok(None);
    }
    let which = listed(&unknown, "runs", "run");
    if force {
        return Ok(Some(format!(
            "warning: {gate}; in fleet {namespace}/{name}, {which} a celld whose version cannot be told, and --force deploys it anyway"
        )));
    }
    Err(Error::PythonWorkerHeld(format!(
        "{gate}, and in fleet {namespace}/{name}, {which} a celld whose version cannot be told: pin spec.image by a version tag ({since} or later, a digest may pin the tag), or deploy anyway with --force once every node runs {since} or later. Nothing was created."
    )))
}

/// `a (x) runs` or `a (x), b (y) run`.
fn listed(items: &[String], one: &str, more: &str) -> String {
    match items {
        [item] => format!("{item} {one}"),
        _ => format!("{} {more}", items.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::CelldFleetSpec;
    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use kube::api::ObjectMeta;

    fn fleet(image: &str) -> CelldFleet {
        let mut fleet = CelldFleet::new(
            "web",
            CelldFleetSpec {
                image: image.into(),
                ..CelldFleetSpec::with_bucket("s3://b/web")
            },
        );
        fleet.metadata.namespace = Some("apps".into());
        fleet
    }

    fn node(name: &str, image: &str) -> Pod {
        Pod {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            spec: Some(PodSpec {
                containers: vec![Container {
                    name: CONTAINER.into(),
                    image: Some(image.into()),
                    ..Container::default()
                }],
                ..PodSpec::default()
            }),
            ..Pod::default()
        }
    }

    const WHY: &str = "its main is src/entry.py";

    #[test]
    fn every_node_on_0_6_1_or_later_lets_a_python_worker_through() {
        let pods = [node("web-0", "celld:v0.6.1"), node("web-1", "celld:v0.6.2")];
        assert!(matches!(
            judge(&fleet("celld:v0.6.2"), "apps", &pods, WHY, false),
            Ok(None)
        ));
    }

    #[test]
    fn a_node_or_spec_image_on_an_older_release_refuses_even_with_force() {
        let pods = [node("web-0", "celld:v0.6.1"), node("web-1", "celld:v0.6.0")];
        let e = judge(&fleet("celld:v0.6.1"), "apps", &pods, WHY, true).unwrap_err();
        insta::assert_snapshot!("python_node_behind", e.to_string());
        let e = judge(&fleet("celld:v0.6.0"), "apps", &[], WHY, false).unwrap_err();
        insta::assert_snapshot!("python_spec_image_behind", e.to_string());
    }

    #[test]
    fn an_unknown_version_refuses_unless_forced() {
        let pods = [node("web-0", "celld:latest")];
        let e = judge(&fleet("celld:v0.6.1"), "apps", &pods, WHY, false).unwrap_err();
        insta::assert_snapshot!("python_unknown", e.to_string());
        let warned = judge(&fleet("celld:v0.6.1"), "apps", &pods, WHY, true).unwrap();
        insta::assert_snapshot!("python_unknown_forced", warned.unwrap_or_default());
    }

    #[test]
    fn the_config_tells_a_python_worker() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("wrangler.jsonc"),
            "{ // a Python Worker\n \"name\": \"web\", \"main\": \"src/entry.py\" }",
        )
        .unwrap();
        assert_eq!(
            python_config(dir.path()).as_deref(),
            Some("its main is src/entry.py")
        );
        std::fs::write(
            dir.path().join("wrangler.jsonc"),
            "{ \"name\": \"web\", \"main\": \"src/index.ts\" }",
        )
        .unwrap();
        assert_eq!(python_config(dir.path()), None);
    }
}
