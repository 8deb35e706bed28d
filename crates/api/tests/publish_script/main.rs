//! The deploy Job's script (`celld_api::contract::publish::SCRIPT`) run for real with `sh`: a
//! stub `celld` on PATH, artifacts served over HTTP on 127.0.0.1, and the result read back from
//! the termination log as the operator reads it.
//!
//! Needs sh, curl, sha256sum, tar and gzip on PATH (the deployer image has them); fails, never
//! skips, when one is missing.

#![allow(clippy::expect_used, clippy::unwrap_used)]

mod files;
mod links;
mod retries;
mod script_run;
mod server;

use std::collections::HashMap;
use std::path::Path;

use celld_api::contract::publish::{
    self, ARTIFACT_URL_ENV, MAX_RESULT_BYTES, PublishResult, Step, WORK_ENV,
};
use files::{good_artifact, project, sha256, tar_gz, write};
use script_run::Run;
use server::Server;

#[test]
fn a_good_artifact_is_extracted_and_published() {
    let (good, _keep) = good_artifact();
    let digest = sha256(&good);
    let server = Server::start(HashMap::from([("/good.tar.gz".to_owned(), good)]));
    let run = Run::new().artifact(
        server.url("/good.tar.gz?X-Amz-Signature=secret"),
        digest.clone(),
    );
    let app = publish::source_dir(&run.work().display().to_string()) + "/app";
    let (run, ran) = run.run(Path::new(&app));

    assert_eq!(
        ran.result,
        PublishResult::read(r#"{"outcome":"Published","attempts":1}"#).unwrap()
    );
    assert!(ran.output.status.success());
    assert_eq!(
        ran.args.as_deref().unwrap(),
        ["deploy", app.as_str(), "--bucket", "s3://celld-test/web"],
        "the stub ran with the exact command"
    );
    assert_eq!(
        ran.tree.as_deref().unwrap(),
        ["./src/index.js", "./wrangler.jsonc"],
        "celld saw the extracted project at $CELLD_WORK/src/app"
    );
    let stdout = ran.stdout();
    assert!(
        stdout.contains("published version 0123456789abcdef"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("has digest {digest}")), "{stdout}");
    assert!(
        !stdout.contains("secret"),
        "the URL's query is never shown: {stdout}"
    );
    assert_eq!(server.hits(), ["/good.tar.gz"]);
    assert!(run.work().join("src/app/wrangler.jsonc").is_file());
}

#[test]
fn a_wrong_digest_names_both_and_celld_never_runs() {
    let (good, _keep) = good_artifact();
    let actual = sha256(&good);
    let expected = sha256(b"another artifact");
    let server = Server::start(HashMap::from([("/good.tar.gz".to_owned(), good)]));
    let run = Run::new().artifact(server.url("/good.tar.gz"), expected.clone());
    let app = run.work().join("src/app");
    let (run, ran) = run.run(&app);

    ran.assert_failed(Step::Digest, 1);
    let message = ran.message();
    assert!(message.contains(&actual), "{message}");
    assert!(message.contains(&expected), "{message}");
    assert_eq!(
        ran.result.describe(),
        format!(
            "the artifact's digest is {actual} but the source says {expected} ({})",
            server.url("/good.tar.gz")
        )
    );
    assert_eq!(ran.args, None, "celld must not run");
    assert!(!run.work().join("src").exists(), "nothing extracted");
}

#[test]
fn a_missing_artifact_fails_the_download() {
    let server = Server::start(HashMap::new());
    let digest = sha256(b"whatever");
    let run = Run::new().artifact(server.url("/gone.tar.gz?token=secret"), digest);
    let app = run.work().join("src/app");
    let (_run, ran) = run.run(&app);

    ran.assert_failed(Step::Download, 22);
    let message = ran.message();
    assert!(message.contains("404"), "{message}");
    assert!(
        message.starts_with(&format!(
            "downloading {} failed:",
            server.url("/gone.tar.gz")
        )),
        "{message}"
    );
    assert!(
        !message.contains("secret"),
        "the URL's query is never shown: {message}"
    );
    assert_eq!(ran.args, None, "celld must not run");
    assert_eq!(server.hits(), ["/gone.tar.gz"], "a 404 is not retried");
}

#[test]
fn a_malformed_digest_is_refused_before_downloading() {
    let server = Server::start(HashMap::new());
    let hex = "a".repeat(64);
    for digest in [
        format!("sha256:{}", hex.to_uppercase()),
        format!("sha512:{hex}"),
        format!("sha256:{}", &hex[1..]),
        format!("sha256:{hex}0"),
        hex.clone(),
        "sha256:\"quoted\\\" and\nnewline".to_owned(),
    ] {
        let run = Run::new().artifact(server.url("/a.tar.gz"), digest.clone());
        let app = run.work().join("src/app");
        let (_run, ran) = run.run(&app);
        ran.assert_failed(Step::Digest, 1);
        assert!(
            ran.message()
                .ends_with("is not sha256: followed by 64 lowercase hex digits"),
            "{digest:?}: {}",
            ran.message()
        );
        assert_eq!(ran.args, None);
    }
    let run = Run::new().env(ARTIFACT_URL_ENV, server.url("/a.tar.gz"));
    let (_run, ran) = run.run(Path::new("/nowhere"));
    ran.assert_failed(Step::Digest, 1);
    assert!(
        ran.message().contains("CELLD_ARTIFACT_DIGEST is not"),
        "{}",
        ran.message()
    );
    assert!(
        server.hits().is_empty(),
        "nothing downloaded: {:?}",
        server.hits()
    );
}

#[test]
fn a_failing_deploy_with_nasty_output_gives_valid_bounded_json() {
    let run = Run::new().env("STUB_NASTY", "1");
    let project = run.path("project");
    std::fs::create_dir_all(&project).unwrap();
    let (_run, ran) = run.run(&project);

    ran.assert_failed(Step::Deploy, 3);
    serde_json::from_slice::<serde_json::Value>(&ran.raw).expect("the result is valid JSON");
    assert!(ran.raw.len() <= MAX_RESULT_BYTES, "{} bytes", ran.raw.len());
    let message = ran.message();
    assert!(
        message.len() > 1500,
        "most of the room is used: {} bytes",
        message.len()
    );
    assert!(message.starts_with("..."), "the start is cut: {message}");
    assert!(
        message.ends_with(r#"the last line: C:\path\to\"file""#),
        "the end is kept: {message}"
    );
    assert!(
        message
            .contains("line 399: \"quoted\" back\\slash\ttab {\"json\":\"in output\"} ✘ [ERROR]\n"),
        "{message}"
    );
    assert!(
        message.contains("bell escape[31m red[0m carriage\r return"),
        "{message}"
    );
    assert!(
        !message
            .chars()
            .any(|c| c.is_control() && !"\n\t\r".contains(c)),
        "no other control characters: {message:?}"
    );
    let stdout = ran.stdout();
    assert!(
        stdout.contains("line 0: "),
        "all the output streams to stdout"
    );
    assert!(
        stdout.contains("bell"),
        "stderr is in the streamed output too"
    );
    let line = ran.result.describe();
    assert!(
        line.starts_with("celld deploy exited with 3: ..."),
        "{line}"
    );
    assert!(!line.contains('\n'), "{line}");
}

#[test]
fn without_an_artifact_the_command_runs_on_its_directory() {
    // The source is already in a directory (an image volume); no work volume at all.
    let run = Run::new();
    let nowhere = run.path("no-work-volume").display().to_string();
    let run = run.env(WORK_ENV, nowhere);
    let root = run.path("volume");
    project(&root);
    let app = root.join("project/app");
    let (run, ran) = run.run(&app);

    assert!(ran.result.is_published(), "{:?}", ran.result);
    assert_eq!(ran.output.status.code(), Some(0));
    assert_eq!(
        ran.tree.as_deref().unwrap(),
        ["./src/index.js", "./wrangler.jsonc"]
    );
    assert_eq!(ran.args.as_deref().unwrap()[1], app.display().to_string());
    assert!(!run.path("no-work-volume").exists());
    assert_eq!(
        std::fs::read_dir(run.path("tmp")).unwrap().count(),
        0,
        "the scratch directory is removed"
    );
}

#[test]
fn an_artifact_with_a_member_outside_its_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    write(&dir.path().join("inside/app/wrangler.jsonc"), "{}\n");
    write(&dir.path().join("escape.txt"), "outside\n");
    let evil = tar_gz(&dir.path().join("inside"), &["app", "../escape.txt"]);
    let garbage = b"this is not a tar.gz\n".to_vec();
    let cases = [
        (
            "/evil.tar.gz",
            sha256(&evil),
            "the artifact has a member outside its directory: ../escape.txt",
        ),
        (
            "/garbage.tar.gz",
            sha256(&garbage),
            "listing the artifact's files failed (not a tar.gz?):",
        ),
    ];
    let server = Server::start(HashMap::from([
        ("/evil.tar.gz".to_owned(), evil),
        ("/garbage.tar.gz".to_owned(), garbage),
    ]));
    for (path, digest, expected) in cases {
        let run = Run::new().artifact(server.url(path), digest);
        let app = run.work().join("src/app");
        let (run, ran) = run.run(&app);
        let code = if path == "/evil.tar.gz" { 1 } else { 2 };
        ran.assert_failed(Step::Extract, code);
        assert!(
            ran.message().starts_with(expected),
            "{path}: {}",
            ran.message()
        );
        assert_eq!(ran.args, None, "celld must not run");
        assert!(!run.work().join("escape.txt").exists());
        assert!(!run.work().join("src").exists(), "nothing extracted");
    }
}
