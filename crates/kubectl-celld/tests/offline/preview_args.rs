//! `preview` on the command line: what `create`, `list`, `status` and `delete` accept and
//! refuse, and the `deploy` command line `create` runs for the preview's fleet.

use clap::Parser;
use kubectl_celld::cli::{Cli, Command};
use kubectl_celld::commands::preview::status::PreviewOutput;
use kubectl_celld::commands::preview::{PreviewCommand, create, deploy_line};
use kubectl_celld::text::output_format::OutputFormat;
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

fn preview(args: &[&str]) -> PreviewCommand {
    let mut full = vec!["preview"];
    full.extend_from_slice(args);
    match parse(&full).unwrap().command {
        Command::Preview(p) => p.command,
        other => panic!("not preview: {other:?}"),
    }
}

fn create(args: &[&str]) -> create::CreateArgs {
    let mut full = vec!["create"];
    full.extend_from_slice(args);
    match preview(&full) {
        PreviewCommand::Create(c) => *c,
        other => panic!("not create: {other:?}"),
    }
}

#[test]
fn create_takes_a_name_a_fleet_and_a_worker() {
    let c = create(&["pr-1", "--fleet", "web", "./w", "--ttl", "1h30m", "--wait"]);
    assert_eq!(
        (c.name.as_str(), c.fleet.as_str(), c.ttl.as_deref()),
        ("pr-1", "web", Some("1h30m"))
    );
    assert_eq!(c.dir.as_deref(), Some(std::path::Path::new("./w")));
    assert!(c.wait);
    assert_eq!(c.wait_timeout, Duration::from_secs(300));
    let c = create(&["pr-1", "--fleet", "web", "--source-image", "reg/w:1"]);
    assert_eq!(c.source_image.as_deref(), Some("reg/w:1"));
    assert!(c.dir.is_none() && !c.wait);
    let c = create(&[
        "pr-1",
        "--fleet",
        "web",
        "--image",
        "reg/src:1",
        "-n",
        "apps",
    ]);
    assert_eq!(c.deploy.image.as_deref(), Some("reg/src:1"));
}

#[test]
fn create_refuses_what_the_api_server_would_and_ambiguous_workers() {
    let e = refused(&["preview", "create", "pr-1", "--fleet", "web"]);
    assert!(
        e.contains("<DIR|--image <IMAGE>|--source-image <IMAGE>>"),
        "{e}"
    );
    let e = refused(&["preview", "create", "pr-1", "./w"]);
    assert!(e.contains("--fleet <FLEET>"), "{e}");
    let e = refused(&["preview", "create", "PR_1", "--fleet", "web", "./w"]);
    assert!(
        e.contains("'PR_1' is not a preview name: it becomes the preview's host and fleet name"),
        "{e}"
    );
    let long = format!("p{}", "r".repeat(52));
    assert!(refused(&["preview", "create", &long, "--fleet", "web", "./w"]).contains("at most 52"));
    for bad in ["1d", "30s", "90", "1.5h"] {
        let e = refused(&[
            "preview", "create", "pr-1", "--fleet", "web", "./w", "--ttl", bad,
        ]);
        assert!(
            e.contains("is not a duration in hours, minutes and seconds such as 72h"),
            "{bad}: {e}"
        );
    }
    for conflicting in [
        &["./w", "--image", "reg/src:1"][..],
        &["./w", "--source-image", "reg/w:1"][..],
        &["--source-image", "reg/w:1", "--vars-from-secret", "v"][..],
        &["--source-image", "reg/w:1", "--keep-job"][..],
    ] {
        let mut args = vec!["preview", "create", "pr-1", "--fleet", "web"];
        args.extend_from_slice(conflicting);
        let e = refused(&args);
        assert!(e.contains("cannot be used with"), "{conflicting:?}: {e}");
    }
}

/// The deploy command line `preview create` runs for `c`.
fn deploy_words(c: &create::CreateArgs) -> Vec<String> {
    deploy_line::words(
        &c.name,
        c.dir.as_deref(),
        &c.deploy,
        c.wait.then_some(c.wait_timeout),
    )
}

#[test]
fn create_deploys_with_deploys_own_flags_and_waits_only_with_wait() {
    let c = create(&["pr-1", "--fleet", "web", "./w"]);
    assert_eq!(
        deploy_words(&c).join(" "),
        "deploy ./w --fleet pr-1 --no-wait"
    );
    // Parsed by deploy's own flags (which name the fleet: --fleet pr-1 above).
    let d = deploy_line::parse(&deploy_words(&c)).unwrap();
    assert_eq!(d.dir.as_deref(), Some(std::path::Path::new("./w")));
    assert!(d.wait.no_wait);
    // What create leaves out keeps deploy's defaults.
    assert_eq!(
        (d.timeout, d.pod_timeout),
        (Duration::from_secs(1800), Duration::from_secs(300))
    );

    let c = create(&[
        "pr-1",
        "--fleet",
        "web",
        "--image",
        "reg/src:1",
        "--vars-from-secret",
        "a",
        "--vars-from-secret",
        "b",
        "--timeout",
        "10m",
        "--pod-timeout",
        "90s",
        "--keep-job",
        "--no-reload",
        "--wait",
        "--wait-timeout",
        "2m",
    ]);
    let words = deploy_words(&c);
    assert_eq!(
        words.join(" "),
        "deploy --fleet pr-1 --image reg/src:1 --vars-from-secret a --vars-from-secret b --timeout 600000ms --pod-timeout 90000ms --wait-timeout 120000ms --keep-job --no-reload"
    );
    let d = deploy_line::parse(&words).unwrap();
    assert_eq!(d.image.as_deref(), Some("reg/src:1"));
    assert_eq!(d.vars_from_secret, ["a", "b"]);
    assert_eq!(
        (d.timeout, d.pod_timeout, d.wait.wait_timeout),
        (
            Duration::from_secs(600),
            Duration::from_secs(90),
            Duration::from_secs(120)
        )
    );
    assert!(d.keep_job && d.no_reload && !d.wait.no_wait);

    // A line deploy's flags refuse is an error naming it, never a half-run deploy.
    let words: Vec<String> = ["deploy", "--fleet", "pr-1"].map(String::from).to_vec();
    let e = deploy_line::parse(&words).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(
        e.to_string().starts_with(
            "the deploy of the preview (kubectl celld deploy --fleet pr-1) cannot run: error:"
        ),
        "{e}"
    );
}

#[test]
fn list_status_and_delete_follow_kubectls_flags() {
    let PreviewCommand::List(l) = preview(&["list", "-A", "-o", "json"]) else {
        panic!("not list")
    };
    assert!(l.all_namespaces);
    assert_eq!(l.output, Some(OutputFormat::Json));
    assert!(refused(&["preview", "list", "-o", "wide"]).contains("invalid value 'wide'"));

    let PreviewCommand::Status(s) = preview(&["status", "pr-1", "-o", "jsonpath={.url}"]) else {
        panic!("not status")
    };
    assert_eq!(s.name, "pr-1");
    assert_eq!(s.output, Some(PreviewOutput::JsonPath("{.url}".into())));
    assert!(refused(&["preview", "status", "pr-1", "-o", "name"]).contains("jsonpath=TEMPLATE"));
    assert!(refused(&["preview", "status"]).contains("<NAME>"));

    let PreviewCommand::Delete(d) = preview(&[
        "delete",
        "pr-1",
        "--wait",
        "--wait-timeout",
        "90s",
        "--ignore-not-found",
        "--context",
        "prod",
    ]) else {
        panic!("not delete")
    };
    assert!(d.wait && d.ignore_not_found);
    assert_eq!(d.wait_timeout, Duration::from_secs(90));
    assert!(refused(&["preview", "delete"]).contains("<NAME>"));
    assert!(refused(&["preview", "remove", "pr-1"]).contains("unrecognized subcommand 'remove'"));
}
