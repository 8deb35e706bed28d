//! The deployer images a release builds are the ones `kubectl celld deploy` picks: one per
//! supported celld release in the contract's table, and the default one on the default image's
//! celld.

use celld_api::contract::deployer;
use celld_api::contract::releases::display;
use std::path::Path;

fn repo_file(rel: &str) -> String {
    let root = Path::new(env!("CELLD_WORKSPACE_ROOT"));
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn the_release_builds_a_deployer_for_every_supported_celld_release() {
    let workflow = repo_file(".github/workflows/release.yml");
    let built: Vec<String> = workflow
        .lines()
        .filter(|l| l.contains("image: celld-operator-deployer"))
        .filter_map(|l| {
            let celld = l.split("celld: ").nth(1)?;
            let celld = celld.trim_end_matches(['}', ' ']).trim_matches('"');
            (!celld.is_empty()).then(|| celld.to_string())
        })
        .collect();
    let wanted: Vec<String> = deployer::releases().map(display).collect();
    assert_eq!(built, wanted, "the deployer matrix of release.yml");
    for release in deployer::releases() {
        let suffix = deployer::tag_suffix(release);
        assert!(
            workflow.contains(&format!("suffix: {suffix}, celld: {}", display(release))),
            "release.yml tags the {} deployer with {suffix}",
            display(release)
        );
    }
}

#[test]
fn the_default_deployer_runs_the_default_image_celld() {
    let dockerfile = repo_file("deployer.Dockerfile");
    assert!(
        dockerfile.contains(&format!("ARG CELLD_IMAGE={}\n", celld_api::DEFAULT_IMAGE)),
        "deployer.Dockerfile's CELLD_IMAGE is {}",
        celld_api::DEFAULT_IMAGE
    );
}
