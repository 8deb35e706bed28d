//! The command line behaves as kubectl users expect: usage lines that do not echo the flags
//! given, a fleet given where a flag was meant, kubectl's `--tail` range, a wrong container
//! named with the valid ones, and what an interrupted deploy left behind.

use clap::Parser;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kubectl_celld::cli::{Cli, Command};
use kubectl_celld::commands::deploy;
use kubectl_celld::commands::logs;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("kubectl-celld").chain(args.iter().copied()))
}

fn refused(args: &[&str]) -> String {
    match parse(args) {
        Ok(cli) => panic!("{args:?} should be refused, parsed as {cli:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn usage_lines_do_not_make_the_namespace_look_required() {
    for (args, usage) in [
        (
            &["logs", "-n", "apps"][..],
            "Usage: kubectl celld logs [OPTIONS] <FLEET>",
        ),
        (
            &["deploy", "-n", "apps", "./w"][..],
            "Usage: kubectl celld deploy [OPTIONS] --fleet <FLEET> [DIR]",
        ),
        (
            &["init", "web", "--namespace", "apps"][..],
            "Usage: kubectl celld init [OPTIONS] --bucket <s3://NAME[/PREFIX]> <NAME>",
        ),
        (
            &["status", "web", "-A", "-n", "apps"][..],
            "Usage: kubectl celld status [OPTIONS] [FLEET]",
        ),
    ] {
        let e = refused(args);
        assert!(e.contains(usage), "{args:?}:\n{e}");
        assert!(!e.contains("--namespace <"), "{args:?}:\n{e}");
    }
}

#[tokio::test]
async fn a_positional_fleet_is_answered_with_the_flag() {
    let cli = parse(&["deploy", "./my-worker", "hello"]).unwrap();
    let e = kubectl_celld::run(cli).await.unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"unexpected argument 'hello': the fleet is named with --fleet; did you mean --fleet hello? (kubectl celld deploy ./my-worker --fleet hello)");
    assert_eq!(e.exit_code(), 2);
    let Command::Deploy(d) = parse(&["deploy", "./w", "--fleet", "web"]).unwrap().command else {
        panic!("not deploy")
    };
    assert_eq!(deploy::fleet_flag(&d).unwrap(), "web");
}

#[test]
fn tail_takes_minus_one_or_a_count() {
    for ok in ["-1", "0", "25"] {
        parse(&["logs", "web", "--tail", ok]).unwrap();
    }
    let e = refused(&["logs", "web", "--tail", "-5"]);
    assert!(
        e.contains(
            "invalid value '-5' for '--tail <LINES>': use -1 for all lines, or 0 or more lines"
        ),
        "{e}"
    );
    assert!(refused(&["logs", "web", "--tail", "ten"]).contains("not a number of lines"));
}

fn pod(containers: &[&str]) -> Pod {
    Pod {
        spec: Some(PodSpec {
            containers: containers
                .iter()
                .map(|c| Container {
                    name: c.to_string(),
                    ..Container::default()
                })
                .collect(),
            ..PodSpec::default()
        }),
        ..Pod::default()
    }
}

#[test]
fn a_wrong_container_is_named_with_the_valid_ones() {
    let pods = [pod(&["celld", "sidecar"]), pod(&["celld"])];
    logs::check_container(&pods, "sidecar", "fleet apps/web").unwrap();
    let e = logs::check_container(&pods, "nope", "fleet apps/web").unwrap_err();
    insta::assert_snapshot!(e.to_string(), @"container 'nope' is not in the node pods of fleet apps/web; valid containers: celld, sidecar; pick one with -c celld");
}

#[test]
fn an_interrupted_deploy_says_whether_anything_was_published() {
    insta::assert_snapshot!(deploy::interrupted_note(false, false, "web", "apps"), @"before celld deploy started (the upload only fills the deploy pod): nothing was published");
    insta::assert_snapshot!(deploy::interrupted_note(true, false, "web", "apps"), @"celld deploy had started in the deploy pod, so the version may have been published; check with: kubectl celld status web -n apps");
    insta::assert_snapshot!(deploy::interrupted_note(true, true, "web", "apps"), @"a dry run publishes nothing");
}
