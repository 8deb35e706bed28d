//! The deploy Job's script (`celld_api::contract::publish::SCRIPT`) run for real with `sh`: a
//! stub `celld` on PATH, artifacts served over HTTP on 127.0.0.1, and the result read back from
//! the termination log as the operator reads it.
//!
//! Needs sh, curl, sha256sum, tar and gzip on PATH (the deployer image has them); fails, never
//! skips, when one is missing.

#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use celld_api::contract::publish::{
    self, ARTIFACT_DIGEST_ENV, ARTIFACT_URL_ENV, MAX_RESULT_BYTES, Outcome, PublishResult, Step,
    TERMINATION_LOG_ENV, WORK_ENV,
};

/// The tools the script runs, plus tar and gzip to build the test's artifacts.
const TOOLS: [&str; 5] = ["sh", "curl", "sha256sum", "tar", "gzip"];

fn require_tools() {
    for tool in TOOLS {
        let found = Command::new("sh")
            .args(["-c", "command -v \"$1\"", "sh", tool])
            .stdout(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        assert!(
            found,
            "`{tool}` is not on PATH: this test runs the deploy Job's script for real and needs \
             {TOOLS:?}; install it (Debian: apt-get install coreutils tar gzip curl)"
        );
    }
}

/// A stub `celld`: records its arguments and the files under the directory it was pointed at
/// (`celld deploy DIR ...`), prints a few lines and exits 0; with `STUB_NASTY=1` it prints many
/// lines full of quotes, backslashes, tabs and control characters and exits 3.
const STUB_CELLD: &str = r#"#!/bin/sh
printf '%s\n' "$@" >"$STUB_RECORD/args"
if [ -d "$2" ]; then (cd "$2" && find . -type f | LC_ALL=C sort) >"$STUB_RECORD/tree"; fi
if [ "${STUB_NASTY:-}" = 1 ]; then
  i=0
  while [ "$i" -lt 400 ]; do
    printf 'line %s: "quoted" back\\slash\ttab {"json":"in output"} \342\234\230 [ERROR]\n' "$i"
    i=$((i + 1))
  done
  printf 'bell\007 escape\033[31m red\033[0m carriage\r return nul-free end\n' >&2
  printf 'the last line: C:\\path\\to\\"file"\n'
  exit 3
fi
echo "building $2"
echo "published version 0123456789abcdef"
"#;

/// A tiny HTTP server on 127.0.0.1: GET of a known path answers 200 with its body, anything
/// else 404. Records every path asked for.
struct Server {
    base: String,
    hits: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(files: HashMap<String, Vec<u8>>) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
        let base = format!("http://{}", listener.local_addr().unwrap());
        let hits = Arc::new(Mutex::new(Vec::new()));
        let seen = hits.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                serve(stream, &files, &seen);
            }
        });
        Server { base, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    fn hits(&self) -> Vec<String> {
        self.hits.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, files: &HashMap<String, Vec<u8>>, hits: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream);
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() {
        return;
    }
    loop {
        let mut header = String::new();
        match reader.read_line(&mut header) {
            Ok(0) | Err(_) => break,
            Ok(_) if header == "\r\n" || header == "\n" => break,
            Ok(_) => {}
        }
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split('?')
        .next()
        .unwrap_or("")
        .to_owned();
    hits.lock().unwrap().push(path.clone());
    let (status, body): (&str, &[u8]) = match files.get(&path) {
        Some(body) => ("200 OK", body),
        None => ("404 Not Found", b"not found\n"),
    };
    let mut stream = reader.into_inner();
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/gzip\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// A tar.gz of the files under `root` named `members` (paths as given, `-P` keeps absolute ones
/// and `..`), built with the tar command.
fn tar_gz(root: &Path, members: &[&str]) -> Vec<u8> {
    let out = root.join("artifact.tar.gz");
    let status = Command::new("tar")
        .arg("-czPf")
        .arg(&out)
        .arg("-C")
        .arg(root)
        .args(members)
        .status()
        .expect("run tar");
    assert!(status.success(), "tar -czf failed");
    std::fs::read(&out).unwrap()
}

fn sha256(bytes: &[u8]) -> String {
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run sha256sum");
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    format!("sha256:{}", text.split_whitespace().next().unwrap())
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// One run of the script in its own directory: PATH with the stub first, the work directory,
/// the termination log and the stub's records all under a temporary directory.
struct Run {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

/// What one run left.
struct Ran {
    output: Output,
    /// The termination log's raw bytes.
    raw: Vec<u8>,
    result: PublishResult,
    /// The stub's arguments, if it ran.
    args: Option<Vec<String>>,
    /// The files the stub saw under its directory, if it ran on one.
    tree: Option<Vec<String>>,
}

impl Run {
    fn new() -> Run {
        require_tools();
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        write(&bin.join("celld"), STUB_CELLD);
        let chmod = Command::new("chmod")
            .arg("+x")
            .arg(bin.join("celld"))
            .status()
            .unwrap();
        assert!(chmod.success());
        std::fs::create_dir_all(dir.path().join("record")).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        std::fs::create_dir_all(dir.path().join("tmp")).unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let env = vec![
            ("PATH".to_owned(), path),
            (
                "TMPDIR".to_owned(),
                dir.path().join("tmp").display().to_string(),
            ),
            (
                "STUB_RECORD".to_owned(),
                dir.path().join("record").display().to_string(),
            ),
            (
                WORK_ENV.to_owned(),
                dir.path().join("work").display().to_string(),
            ),
            (
                TERMINATION_LOG_ENV.to_owned(),
                dir.path().join("termination-log").display().to_string(),
            ),
        ];
        Run { dir, env }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn work(&self) -> PathBuf {
        self.path("work")
    }

    fn env(mut self, key: &str, value: impl Into<String>) -> Run {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.into()));
        self
    }

    fn artifact(self, url: String, digest: impl Into<String>) -> Run {
        self.env(ARTIFACT_URL_ENV, url)
            .env(ARTIFACT_DIGEST_ENV, digest)
    }

    /// Runs the container's command: the script with `celld deploy DIR --bucket ...`.
    fn run(self, dir: &Path) -> (Run, Ran) {
        let argv = publish::command([
            "celld".to_owned(),
            "deploy".to_owned(),
            dir.display().to_string(),
            "--bucket".to_owned(),
            "s3://celld-test/web".to_owned(),
        ]);
        let mut command = Command::new(&argv[0]);
        command.args(&argv[1..]).env_clear().stdin(Stdio::null());
        for (k, v) in &self.env {
            command.env(k, v);
        }
        let output = command.output().expect("run sh");
        let raw = std::fs::read(self.path("termination-log")).unwrap_or_else(|e| {
            panic!(
                "the script wrote no termination log ({e}); stdout: {}; stderr: {}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            )
        });
        let text = String::from_utf8(raw.clone()).expect("the result is UTF-8");
        let result = PublishResult::read(&text)
            .unwrap_or_else(|e| panic!("{e}; stderr: {}", String::from_utf8_lossy(&output.stderr)));
        let lines = |name: &str| {
            std::fs::read_to_string(self.path("record").join(name))
                .ok()
                .map(|t| t.lines().map(str::to_owned).collect::<Vec<_>>())
        };
        let ran = Ran {
            args: lines("args"),
            tree: lines("tree"),
            output,
            raw,
            result,
        };
        (self, ran)
    }
}

impl Ran {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    fn message(&self) -> &str {
        self.result.message.as_deref().unwrap_or("")
    }

    fn assert_failed(&self, step: Step, exit_code: i32) {
        assert_eq!(
            (self.result.outcome, self.result.step, self.result.exit_code),
            (Outcome::Failed, Some(step), Some(exit_code)),
            "result: {:?}; stderr: {}",
            self.result,
            String::from_utf8_lossy(&self.output.stderr)
        );
        assert_eq!(
            self.output.status.code(),
            Some(exit_code),
            "the script exits with the result's exit code"
        );
        assert!(self.raw.len() <= MAX_RESULT_BYTES);
    }
}

/// The Worker project the artifacts hold, under `root/project`: `app/wrangler.jsonc` and
/// `app/src/index.js`.
fn project(root: &Path) -> Vec<&'static str> {
    write(
        &root.join("project/app/wrangler.jsonc"),
        "{\"name\":\"hello\"}\n",
    );
    write(
        &root.join("project/app/src/index.js"),
        "export default { fetch() { return new Response('hi') } }\n",
    );
    vec!["app"]
}

fn good_artifact() -> (Vec<u8>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let members = project(dir.path());
    let bytes = tar_gz(&dir.path().join("project"), &members);
    (bytes, dir)
}

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
        PublishResult::read(r#"{"outcome":"Published"}"#).unwrap()
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
