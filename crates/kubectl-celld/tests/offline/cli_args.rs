//! Argument handling: what each command accepts and refuses, and the help texts (snapshots).

use clap::{CommandFactory, Parser};
use kubectl_celld::cli::{Cli, Command};
use kubectl_celld::commands::status::format::StatusOutput;
use std::path::Path;
use std::time::Duration;

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
fn global_flags_work_before_and_after_the_command() {
    let cli = parse(&[
        "--kubeconfig",
        "/tmp/kc",
        "status",
        "--context",
        "prod",
        "-n",
        "apps",
    ])
    .unwrap();
    assert_eq!(
        cli.globals.kubeconfig.as_deref(),
        Some(std::path::Path::new("/tmp/kc"))
    );
    assert_eq!(cli.globals.context.as_deref(), Some("prod"));
    assert_eq!(cli.globals.namespace.as_deref(), Some("apps"));
}

#[test]
fn deploy_takes_vars_from_secrets_in_order() {
    let Command::Deploy(d) = parse(&[
        "deploy",
        "./w",
        "--fleet",
        "web",
        "--vars-from-secret",
        "web-vars",
        "--vars-from-secret",
        "shared-tokens",
    ])
    .unwrap()
    .command
    else {
        panic!("not deploy")
    };
    assert_eq!(d.vars_from_secret, ["web-vars", "shared-tokens"]);
    let Command::Deploy(d) = parse(&["deploy", "./w", "--fleet", "web"]).unwrap().command else {
        panic!("not deploy")
    };
    assert!(d.vars_from_secret.is_empty());
    let e = refused(&["deploy", "./w", "--fleet", "web", "--vars-from-secret"]);
    assert!(e.contains("--vars-from-secret <NAME>"), "{e}");
}

#[test]
fn deploy_takes_a_directory_or_an_image() {
    let Command::Deploy(d) = parse(&["deploy", "./w", "--fleet", "web"]).unwrap().command else {
        panic!("not deploy")
    };
    assert_eq!(d.dir.as_deref(), Some(std::path::Path::new("./w")));
    assert!(d.image.is_none());
    assert!(d.deployer_image.is_none());
    assert_eq!(
        kubectl_celld::commands::deploy::deploy_image(&d, "ghcr.io/denoland/celld:v0.5.1"),
        format!(
            "ghcr.io/anthaathi/celld-operator-deployer:v{}-celld-v0.5.1",
            env!("CARGO_PKG_VERSION")
        ),
        "a fleet is deployed with the deployer of its own celld release"
    );
    assert_eq!(d.timeout, Duration::from_secs(1800));
    assert_eq!(d.pod_timeout, Duration::from_secs(300));

    let Command::Deploy(d) = parse(&["deploy", "--image", "src:1", "--fleet", "web"])
        .unwrap()
        .command
    else {
        panic!("not deploy")
    };
    assert_eq!(d.image.as_deref(), Some("src:1"));
    assert!(d.dir.is_none());

    let e = refused(&["deploy", "--fleet", "web"]);
    assert!(e.contains("<DIR>"), "{e}");
    let e = refused(&["deploy", "./w", "--image", "src:1", "--fleet", "web"]);
    assert!(e.contains("cannot be used with"), "{e}");
    let e = refused(&[
        "deploy",
        "--image",
        "i",
        "--deployer-image",
        "d",
        "--fleet",
        "web",
    ]);
    assert!(e.contains("cannot be used with"), "{e}");
    let e = refused(&["deploy", "./w"]);
    assert!(e.contains("--fleet"), "{e}");
    let e = refused(&["deploy", "./w", "--fleet", "web", "--timeout", "soon"]);
    assert!(e.contains("is not a duration"), "{e}");
}

#[test]
fn deploy_fans_out_by_selector_or_by_names() {
    let Command::Deploy(d) = parse(&["deploy", "./w", "-l", "team=payments", "-A"])
        .unwrap()
        .command
    else {
        panic!("not deploy")
    };
    assert_eq!(d.selector.as_deref(), Some("team=payments"));
    assert!(d.all_namespaces);
    assert!(d.fleet.is_none());
    assert_eq!(d.concurrency, 4, "a small default");
    let Command::Deploy(d) = parse(&[
        "deploy",
        "--image",
        "src:1",
        "--fleets",
        "pay-eu,billing/pay-us",
        "--concurrency",
        "32",
    ])
    .unwrap()
    .command
    else {
        panic!("not deploy")
    };
    assert_eq!(d.fleets, ["pay-eu", "billing/pay-us"]);
    assert_eq!(d.concurrency, 32);

    for (args, says) in [
        (
            &["deploy", "./w", "--fleet", "web", "--fleets", "a,b"][..],
            "cannot be used with",
        ),
        (
            &["deploy", "./w", "--fleet", "web", "--selector", "team=x"][..],
            "cannot be used with",
        ),
        (
            &["deploy", "./w", "--fleets", "a", "--selector", "team=x"][..],
            "cannot be used with",
        ),
        (
            &["deploy", "./w", "--fleets", "a", "-A"][..],
            "--selector <SELECTOR>",
        ),
        (
            &["deploy", "./w", "-l", "team=x", "--concurrency", "0"][..],
            "0 is not in 1..=32",
        ),
        (
            &["deploy", "./w", "-l", "team=x", "--concurrency", "33"][..],
            "33 is not in 1..=32",
        ),
    ] {
        let e = refused(args);
        assert!(e.contains(says), "{args:?}:\n{e}");
    }
}

/// The fan-out commands docs/plugin.md shows parse in full (check-docs only parses up to
/// `--help`, before clap checks which flags go together), and each is a fan-out.
#[test]
fn the_fan_out_commands_of_the_docs_parse() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CELLD_WORKSPACE_ROOT")).join("docs/plugin.md"))
            .unwrap();
    let section = docs
        .split("### Fan-out: one build to many fleets")
        .nth(1)
        .and_then(|rest| rest.split("```sh").nth(1))
        .and_then(|block| block.split("```").next())
        .unwrap();
    let commands: Vec<&str> = section
        .lines()
        .filter_map(|l| l.trim().strip_prefix("kubectl celld "))
        .collect();
    assert_eq!(commands.len(), 4, "{section}");
    for command in commands {
        let words: Vec<&str> = command.split_whitespace().collect();
        let cli = parse(&words).unwrap_or_else(|e| panic!("{command}: {e}"));
        let Command::Deploy(d) = cli.command else {
            panic!("{command}: not deploy")
        };
        assert!(
            matches!(
                kubectl_celld::commands::deploy::targets::selection(&d),
                Ok(kubectl_celld::commands::deploy::targets::Selection::FanOut(
                    _
                ))
            ),
            "{command}"
        );
    }
}

#[test]
fn status_lists_or_shows_one() {
    let Command::Status(s) = parse(&["status", "-A", "-o", "json"]).unwrap().command else {
        panic!("not status")
    };
    assert!(s.all_namespaces);
    assert_eq!(s.output, Some(StatusOutput::Json));
    assert!(refused(&["status", "web", "-A"]).contains("cannot be used with"));
    assert!(refused(&["status", "web", "-l", "a=b"]).contains("cannot be used with"));
    assert!(refused(&["status", "-o", "table"]).contains("invalid value"));
    for (flag, format) in [
        ("wide", StatusOutput::Wide),
        ("name", StatusOutput::Name),
        ("yaml", StatusOutput::Yaml),
        (
            "jsonpath={.worker.version}",
            StatusOutput::JsonPath("{.worker.version}".into()),
        ),
    ] {
        let Command::Status(s) = parse(&["status", "-l", "team=web", "-o", flag])
            .unwrap()
            .command
        else {
            panic!("not status")
        };
        assert_eq!(s.output, Some(format));
        assert_eq!(s.selector.as_deref(), Some("team=web"));
    }
}

#[test]
fn top_lists_by_pressure_unless_told() {
    use kubectl_celld::commands::top::TopOutput;
    use kubectl_celld::commands::top::rows::SortBy;
    let Command::Top(t) = parse(&["top"]).unwrap().command else {
        panic!("not top")
    };
    assert_eq!(
        (t.sort_by, t.output, t.all_namespaces),
        (SortBy::Pressure, None, false)
    );
    let Command::Top(t) = parse(&["top", "-A", "-o", "wide", "--sort-by", "rss", "-n", "x"])
        .unwrap()
        .command
    else {
        panic!("not top")
    };
    assert_eq!(
        (t.sort_by, t.output, t.all_namespaces),
        (SortBy::Rss, Some(TopOutput::Wide), true)
    );
    for (flag, order) in [("cells", SortBy::Cells), ("name", SortBy::Name)] {
        let Command::Top(t) = parse(&["top", "--sort-by", flag]).unwrap().command else {
            panic!("not top")
        };
        assert_eq!(t.sort_by, order);
    }
    let e = refused(&["top", "--sort-by", "memory"]);
    assert!(
        e.contains("[possible values: pressure, rss, cells, name]"),
        "{e}"
    );
    let e = refused(&["top", "-o", "name"]);
    assert!(e.contains("[possible values: wide, json, yaml]"), "{e}");
    assert!(refused(&["top", "web"]).contains("unexpected argument 'web'"));
}

#[test]
fn logs_flags() {
    let Command::Logs(l) = parse(&[
        "logs",
        "web",
        "-f",
        "--tail",
        "-1",
        "--since",
        "5m",
        "--timestamps",
    ])
    .unwrap()
    .command
    else {
        panic!("not logs")
    };
    assert!(l.follow && l.timestamps);
    assert_eq!(l.tail, -1);
    assert_eq!(l.since, Some(Duration::from_secs(300)));
    let Command::Logs(l) = parse(&["logs", "web"]).unwrap().command else {
        panic!("not logs")
    };
    assert_eq!(l.tail, 10);
    assert!(refused(&["logs", "web", "-f", "-p"]).contains("cannot be used with"));
    assert!(refused(&["logs"]).contains("<FLEET>"));

    // Fleets picked by label, in the namespace or in all of them, instead of by name.
    let Command::Logs(l) = parse(&["logs", "-l", "team=web", "-A"]).unwrap().command else {
        panic!("not logs")
    };
    assert_eq!(
        (l.fleet, l.selector.as_deref(), l.all_namespaces),
        (None, Some("team=web"), true)
    );
    let Command::Logs(l) = parse(&["logs", "-A", "-f"]).unwrap().command else {
        panic!("not logs")
    };
    assert!(l.fleet.is_none() && l.selector.is_none() && l.all_namespaces && l.follow);
    assert!(refused(&["logs", "web", "-l", "team=web"]).contains("cannot be used with"));
    assert!(refused(&["logs", "web", "-A"]).contains("cannot be used with"));
}

#[test]
fn init_flags() {
    let Command::Init(i) = parse(&[
        "init",
        "web",
        "--bucket",
        "s3://celld/web",
        "--store",
        "minio",
        "--hostname",
        "web.example.com",
        "--gateway",
        "infra/public:https",
        "--local-storage",
        "persistent",
        "--env",
        "RUST_LOG=debug",
        "--toleration",
        "dedicated=celld:NoSchedule",
        "--apply",
    ])
    .unwrap()
    .command
    else {
        panic!("not init")
    };
    assert!(i.apply);
    assert_eq!(i.gateways.len(), 1);
    assert_eq!(i.env[0].key, "RUST_LOG");
    assert!(refused(&["init", "web"]).contains("--bucket"));
    let e = refused(&[
        "init",
        "web",
        "--bucket",
        "s3://b/p",
        "--ingress-class",
        "nginx",
    ]);
    assert!(e.contains("--hostname"), "{e}");
    let e = refused(&["init", "web", "--bucket", "s3://b/p", "--force-conflicts"]);
    assert!(e.contains("--apply"), "{e}");
    let e = refused(&["init", "web", "--bucket", "s3://b/p", "--cpu-limit", "lots"]);
    assert!(e.contains("not a Kubernetes quantity"), "{e}");
    let e = refused(&["init", "web", "--bucket", "s3://b/p", "--env", "NOVALUE"]);
    assert!(e.contains("KEY=VALUE"), "{e}");
}

#[test]
fn completion_scripts() {
    for shell in ["bash", "zsh", "fish"] {
        let Command::Completion(c) = parse(&["completion", shell]).unwrap().command else {
            panic!("not completion")
        };
        let script = kubectl_celld::commands::completion::script(c.shell).unwrap();
        // The script asks the binary itself at each Tab.
        assert!(script.contains("COMPLETE"), "{shell}: {script}");
        assert!(script.contains("kubectl-celld"), "{shell}: {script}");
        assert!(script.contains(shell), "{shell}: {script}");
    }
    assert!(refused(&["completion", "tcsh"]).contains("invalid value"));
}

/// What `kubectl_complete-celld WORDS` prints for kubectl: candidates, then cobra's directive.
#[test]
fn kubectl_completion_protocol() {
    let complete = |words: &[&str]| {
        kubectl_celld::commands::completion::kubectl_complete(
            kubectl_celld::cli::command(),
            words.iter().map(Into::into).collect(),
        )
    };
    assert_eq!(
        complete(&["hi"]),
        "history\tList the Worker versions published for a fleet, newest first, the live one marked\n:4\n"
    );
    assert_eq!(
        complete(&["history", "web", "-o", ""]),
        "yaml\tYAML\njson\tJSON\n:4\n"
    );
    assert_eq!(complete(&["completion", "f"]), "fish\tfish\n:4\n");
    let flags = complete(&["rollback", "web", "--no-"]);
    assert_eq!(
        flags,
        "--no-reload\tDo not ask the nodes to reload; they adopt the version within 30s\n--no-wait\tDo not wait until every ready node serves the new version\n:4\n"
    );
}

#[test]
fn version_is_the_crate_version() {
    let e = parse(&["--version"]).unwrap_err();
    assert_eq!(e.kind(), clap::error::ErrorKind::DisplayVersion);
    assert_eq!(
        e.to_string().trim(),
        format!("kubectl-celld {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn clap_definition_is_consistent() {
    Cli::command().debug_assert();
}

fn help(path: &[&str]) -> String {
    let mut cmd = Cli::command();
    cmd.build();
    let mut sub = &mut cmd;
    for p in path {
        sub = sub.find_subcommand_mut(p).expect("subcommand");
    }
    // The default deployer image names the release; keep the snapshots release-independent.
    sub.render_help()
        .to_string()
        .replace(env!("CARGO_PKG_VERSION"), "[version]")
}

#[test]
fn help_texts() {
    insta::assert_snapshot!("help", help(&[]));
    for sub in [
        "deploy",
        "status",
        "top",
        "logs",
        "history",
        "rollback",
        "init",
        "completion",
        "preview",
        "rollout",
    ] {
        insta::assert_snapshot!(format!("help_{sub}"), help(&[sub]));
    }
    for sub in ["create", "list", "status", "delete"] {
        insta::assert_snapshot!(format!("help_preview_{sub}"), help(&["preview", sub]));
    }
    for sub in ["status", "pause", "resume", "promote", "abort"] {
        insta::assert_snapshot!(format!("help_rollout_{sub}"), help(&["rollout", sub]));
    }
}
