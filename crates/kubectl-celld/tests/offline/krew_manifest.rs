//! The krew manifest template (`krew/celld.yaml.tmpl`) names every command the plugin has, so a
//! `kubectl krew info celld` reader learns of each one.

use clap::CommandFactory;
use kubectl_celld::cli::Cli;

const TEMPLATE: &str = include_str!("../../../../krew/celld.yaml.tmpl");

#[test]
fn the_krew_description_names_every_command() {
    let description = TEMPLATE
        .split_once("  description: |")
        .and_then(|(_, rest)| rest.split_once("  caveats: |"))
        .map(|(description, _)| description)
        .expect("krew/celld.yaml.tmpl has a description followed by caveats");
    let missing: Vec<String> = Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|name| !description.contains(&format!("kubectl celld {name} ")))
        .collect();
    assert!(
        missing.is_empty(),
        "krew/celld.yaml.tmpl's description does not name: {missing:?}"
    );
}
