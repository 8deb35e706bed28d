//! `rollout` and `deploy --waves` on the command line: what each accepts and refuses, the
//! parsing of `--waves` and `--selector`, a deploy of a local build refused with the way to
//! ship it as an image, and what `promote` and `abort` do by default.

use crate::rollout_fixtures::{progressing, rolled_back, rollout, waiting};
use clap::Parser;
use kubectl_celld::cli::{Cli, Command};
use kubectl_celld::commands::deploy::DeployArgs;
use kubectl_celld::commands::deploy::rollout::body::Layout;
use kubectl_celld::commands::deploy::targets::{self, Selection};
use kubectl_celld::commands::rollout::status::RolloutOutput;
use kubectl_celld::commands::rollout::{RolloutCommand, abort, promote};
use kubectl_celld::text::output_format::OutputFormat;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("kubectl-celld").chain(args.iter().copied()))
}

fn refused(args: &[&str]) -> String {
    match parse(args) {
        Ok(cli) => panic!("{args:?} should be refused, parsed as {cli:?}"),
        Err(e) => e.to_string(),
    }
}

fn rollout_command(args: &[&str]) -> RolloutCommand {
    let mut full = vec!["rollout"];
    full.extend_from_slice(args);
    match parse(&full).unwrap().command {
        Command::Rollout(r) => r.command,
        other => panic!("not rollout: {other:?}"),
    }
}

fn deploy(args: &[&str]) -> DeployArgs {
    let mut full = vec!["deploy"];
    full.extend_from_slice(args);
    match parse(&full).unwrap().command {
        Command::Deploy(d) => *d,
        other => panic!("not deploy: {other:?}"),
    }
}

#[test]
fn status_takes_text_yaml_json_or_jsonpath_and_watch() {
    let RolloutCommand::Status(s) = rollout_command(&["status", "web", "-w", "-n", "tenants"])
    else {
        panic!("not status")
    };
    assert_eq!((s.name.as_str(), s.watch), ("web", true));
    assert_eq!(s.output, RolloutOutput::Text);
    for (flag, format) in [
        ("text", RolloutOutput::Text),
        ("json", RolloutOutput::Document(OutputFormat::Json)),
        ("yaml", RolloutOutput::Document(OutputFormat::Yaml)),
        (
            "jsonpath={.phase}",
            RolloutOutput::JsonPath("{.phase}".into()),
        ),
    ] {
        let RolloutCommand::Status(s) = rollout_command(&["status", "web", "-o", flag]) else {
            panic!("not status")
        };
        assert_eq!(s.output, format);
    }
    let e = refused(&["rollout", "status", "web", "-o", "wide"]);
    assert!(
        e.contains("use text, yaml, json or jsonpath=TEMPLATE"),
        "{e}"
    );
    assert!(refused(&["rollout", "status"]).contains("<NAME>"));
}

#[test]
fn pause_promote_and_abort_take_their_flags() {
    let RolloutCommand::Pause(p) = rollout_command(&["pause", "web", "--reason", "incident 42"])
    else {
        panic!("not pause")
    };
    assert_eq!(p.reason.as_deref(), Some("incident 42"));
    assert!(
        matches!(rollout_command(&["resume", "web"]), RolloutCommand::Resume(r) if r.name == "web")
    );
    let RolloutCommand::Promote(p) = rollout_command(&["promote", "web", "--wave", "3"]) else {
        panic!("not promote")
    };
    assert_eq!(p.wave, Some(3));
    assert!(refused(&["rollout", "promote", "web", "--wave", "0"]).contains("--wave <N>"));
    let RolloutCommand::Abort(a) = rollout_command(&["abort", "web"]) else {
        panic!("not abort")
    };
    assert!(a.reason.is_none());
}

/// The `kubectl celld rollout VERB NAME ...` commands docs/rollouts.md shows parse in full
/// (a verb named alone, as in "waits for `kubectl celld rollout promote`", is prose).
#[test]
fn the_rollout_commands_of_the_docs_parse() {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CELLD_WORKSPACE_ROOT")).join("docs/rollouts.md"),
    )
    .unwrap();
    let commands: Vec<&str> = docs
        .split('`')
        .filter_map(|span| span.strip_prefix("kubectl celld rollout "))
        .chain(
            docs.lines()
                .filter_map(|l| l.trim().strip_prefix("kubectl celld rollout ")),
        )
        .filter(|command| command.split_whitespace().count() >= 2)
        .collect();
    for verb in ["pause", "resume", "promote", "abort", "status"] {
        assert!(
            commands.iter().any(|c| c.starts_with(verb)),
            "docs/rollouts.md shows no `kubectl celld rollout {verb}`: {commands:?}"
        );
    }
    for command in commands {
        let mut words = vec!["rollout"];
        words.extend(command.split_whitespace());
        parse(&words).unwrap_or_else(|e| panic!("kubectl celld rollout {command}: {e}"));
    }
}

#[test]
fn deploy_with_waves_makes_a_rollout() {
    let d = deploy(&[
        "--selector",
        "app.kubernetes.io/part-of=web,ring!=canary",
        "--waves",
        "1,10%,100%",
        "--bake",
        "10m",
        "--image",
        "registry.example.com/web-worker:1.4.2",
        "--dry-run",
    ]);
    assert!(d.dry_run);
    let Selection::Rollout(r) = targets::selection(&d).unwrap() else {
        panic!("not a rollout")
    };
    assert_eq!(r.name, "web-worker", "named after the image's repository");
    assert_eq!(
        r.layout,
        Layout::Deployer,
        "as deploy --image takes an image"
    );
    assert_eq!(r.bake.as_deref(), Some("10m"));
    assert_eq!(r.waves.text, "1,10%,100%");
    assert_eq!(
        serde_json::to_string(&r.selector).unwrap(),
        r#"{"matchExpressions":[{"key":"ring","operator":"NotIn","values":["canary"]}],"matchLabels":{"app.kubernetes.io/part-of":"web"}}"#
    );
    let d = deploy(&[
        "-l",
        "app=web",
        "--waves",
        "100%",
        "--image",
        "r/w:1",
        "--name",
        "web",
        "--image-layout",
        "volume",
    ]);
    let Selection::Rollout(r) = targets::selection(&d).unwrap() else {
        panic!("not a rollout")
    };
    assert_eq!((r.name.as_str(), r.layout), ("web", Layout::Volume));
    // Without --waves, --selector still fans one build out.
    assert!(matches!(
        targets::selection(&deploy(&["./w", "--selector", "app=web"])).unwrap(),
        Selection::FanOut(_)
    ));
}

#[test]
fn waves_and_selectors_that_cannot_be_shipped_are_refused() {
    for (args, says) in [
        (
            &[
                "deploy",
                "--selector",
                "a=b",
                "--waves",
                "1,10%,0",
                "--image",
                "i",
            ][..],
            "'0' (wave 3) is not a wave: give a number of fleets from 1 to 1000 or a percentage of the selected fleets from 1% to 100%",
        ),
        (
            &[
                "deploy",
                "--selector",
                "a=b",
                "--waves",
                "1,150%",
                "--image",
                "i",
            ][..],
            "'150%' (wave 2) is not a wave",
        ),
        (
            &[
                "deploy",
                "--selector",
                "a=b",
                "--waves",
                "50%,10%",
                "--image",
                "i",
            ][..],
            "wave 2 (10%) goes no further than an earlier wave (50%)",
        ),
        (
            &["deploy", "--waves", "1", "--image", "i"][..],
            "--selector <SELECTOR>",
        ),
        (
            &[
                "deploy", "--fleets", "a,b", "-l", "a=b", "--waves", "1", "--image", "i",
            ][..],
            "cannot be used with",
        ),
        (
            &["deploy", "--fleet", "web", "--waves", "1", "--image", "i"][..],
            "cannot be used with",
        ),
        (
            &["deploy", "-l", "a=b", "-A", "--waves", "1", "--image", "i"][..],
            "cannot be used with",
        ),
        (
            &[
                "deploy",
                "-l",
                "a=b",
                "--waves",
                "1",
                "--image",
                "i",
                "--concurrency",
                "8",
            ][..],
            "cannot be used with",
        ),
        (
            &[
                "deploy", "-l", "a=b", "--waves", "1", "--image", "i", "--bake", "2d",
            ][..],
            "'2d' is not a bake time",
        ),
        (
            &[
                "deploy", "-l", "a=b", "--waves", "1", "--image", "i", "--name", "Web",
            ][..],
            "'Web' is not a rollout name",
        ),
        (
            &["deploy", "./w", "-l", "a=b", "--bake", "1m"][..],
            "--waves <WAVES>",
        ),
        (
            &["deploy", "--image", "i", "--fleet", "web", "--name", "x"][..],
            "cannot be used with",
        ),
    ] {
        let e = refused(args);
        assert!(e.contains(says), "{args:?}:\n{e}");
    }
    let e = targets::selection(&deploy(&[
        "-l",
        "app=web,tier in (a",
        "--waves",
        "1",
        "--image",
        "i",
    ]))
    .unwrap_err();
    assert_eq!(e.exit_code(), 2);
    insta::assert_snapshot!(e.to_string(), @"--selector: the selector 'app=web,tier in (a' leaves a parenthesis open: write KEY=VALUE, KEY!=VALUE, 'KEY in (A,B)', 'KEY notin (A,B)', KEY (the label is set) or !KEY (it is not), separated by commas (for example app=web,tier!=canary); keys and values are letters, digits, '-', '_' and '.', and a key may start with a DNS prefix and '/'");
}

/// A rollout ships what the cluster can pull: a local build is refused before anything is
/// asked of the cluster, saying how to build and push it, and how to write every fleet at once
/// instead.
#[tokio::test]
async fn deploy_with_waves_of_a_local_build_is_refused_with_the_way_to_ship_it() {
    let cli = parse(&[
        "deploy",
        "./my-worker",
        "--selector",
        "app=web,tier!=canary",
        "--waves",
        "1,10%,100%",
        "--kubeconfig",
        "/nonexistent/kubeconfig",
    ])
    .unwrap();
    let e = kubectl_celld::run(cli).await.unwrap_err();
    assert_eq!(e.exit_code(), 2);
    let text = e
        .to_string()
        .replace(env!("CARGO_PKG_VERSION"), "[version]");
    insta::assert_snapshot!(text, @"a rollout ships an image or a Flux source, not a local build: the operator publishes the revision to each fleet, wave after wave, from deploy Jobs of its own, so the Worker must be in an image the cluster can pull. Build ./my-worker into an image as deploy --image takes it, the deployer with the project at /app (a Dockerfile in ./my-worker with the two lines 'FROM ghcr.io/anthaathi/celld-operator-deployer:v[version]' and 'COPY --chown=65532:65532 . /app/', then: docker build -t REGISTRY/NAME:TAG ./my-worker && docker push REGISTRY/NAME:TAG), and pass it pinned by digest: kubectl celld deploy --selector 'app=web,tier!=canary' --waves 1,10%,100% --image REGISTRY/NAME:TAG@sha256:DIGEST (a CelldRollout written by hand can also follow a Flux source: spec.source.sourceRef). To write every selected fleet at once from ./my-worker instead, without waves: kubectl celld deploy ./my-worker --selector 'app=web,tier!=canary'. Nothing was created");
}

#[test]
fn promote_goes_to_the_waiting_wave_or_the_one_after_the_current() {
    assert_eq!(promote::default_wave(&rollout(Some(waiting()))), 3);
    assert_eq!(
        promote::default_wave(&rollout(Some(progressing()))),
        3,
        "wave 2 is current: its bake ends and wave 3 may start"
    );
    assert_eq!(promote::default_wave(&rollout(None)), 1);
    let mut last = progressing();
    last["currentWave"] = serde_json::json!(3);
    assert_eq!(
        promote::default_wave(&rollout(Some(last))),
        3,
        "at most the last wave"
    );
    assert_eq!(
        promote::decide(&rollout(Some(progressing())), Some(2)).unwrap(),
        2
    );
    let e = promote::decide(&rollout(Some(progressing())), Some(4)).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"CelldRollout tenants/web has 3 waves, so there is no wave 4 to promote: give --wave from 1 to 3");
    let at: jiff::Timestamp = "2026-12-02T12:00:00.4Z".parse().unwrap();
    assert_eq!(promote::value(3, at), "3 2026-12-02T12:00:00Z");
    insta::assert_snapshot!(promote::message("web", "tenants", 3, false), @"CelldRollout tenants/web promoted up to wave 3 (platform.celld.dev/promote-wave): every wave up to 3 starts without waiting for approval, and one that bakes ends its bake now (its other gates still apply). Follow it with: kubectl celld rollout status web -n tenants -w");
}

#[test]
fn an_ended_rollout_is_neither_promoted_nor_aborted() {
    let ended = rollout(Some(rolled_back()));
    let e = promote::decide(&ended, None).unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"CelldRollout tenants/web has ended (RolledBack) for its revision registry.example.com/web-worker:1.4.2@sha256:1f0c3e5a7b9d2c4e6f8a0b1c3d5e7f9a2b4c6d8e0f1a3b5c7d9e1f2a4b6c8d0e, so there is nothing to promote: only a new revision starts it again (a new image, a new artifact of its Flux source, or a new value of the annotation platform.celld.dev/reconcile-requested-at); see it with: kubectl celld rollout status web -n tenants");
    assert_eq!(e.exit_code(), 1);
    assert!(
        abort::check(&ended)
            .unwrap_err()
            .to_string()
            .contains("nothing to abort")
    );
    abort::check(&rollout(Some(progressing()))).unwrap();
    abort::check(&rollout(None)).unwrap();
    insta::assert_snapshot!(
        abort::message("web", "tenants", "errors in wave 2", celld_api::rollout::FailurePolicy::Rollback),
        @"CelldRollout tenants/web aborted (platform.celld.dev/rollout-abort: errors in wave 2): its revision stops for good, no further wave starts, and the operator points every fleet it moved back at the version that fleet served before (spec.onFailure: Rollback). Follow it with: kubectl celld rollout status web -n tenants -w"
    );
}
