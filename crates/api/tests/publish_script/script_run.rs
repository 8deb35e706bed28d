//! One run of the deploy Job's script, with a stub `celld` on PATH, and what it left.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use celld_api::contract::publish::{
    self, ARTIFACT_DIGEST_ENV, ARTIFACT_URL_ENV, MAX_RESULT_BYTES, Outcome, PublishResult, Step,
    TERMINATION_LOG_ENV, WORK_ENV,
};

use crate::files::write;

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
/// lines full of quotes, backslashes, tabs and control characters and exits 3; with
/// `STUB_FAILS=N` its first N runs print `STUB_FAIL_LINE` on stderr and exit 1 (it counts its
/// runs in the record's `runs`).
const STUB_CELLD: &str = r#"#!/bin/sh
printf '%s\n' "$@" >"$STUB_RECORD/args"
runs=$(cat "$STUB_RECORD/runs" 2>/dev/null || echo 0)
runs=$((runs + 1))
echo "$runs" >"$STUB_RECORD/runs"
if [ "$runs" -le "${STUB_FAILS:-0}" ]; then
  echo "building $2"
  printf '%s\n' "$STUB_FAIL_LINE" >&2
  exit 1
fi
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

/// One run of the script in its own directory: PATH with the stub first, the work directory,
/// the termination log and the stub's records all under a temporary directory.
pub struct Run {
    dir: tempfile::TempDir,
    env: Vec<(String, String)>,
}

/// What one run left.
pub struct Ran {
    pub output: Output,
    /// The termination log's raw bytes.
    pub raw: Vec<u8>,
    pub result: PublishResult,
    /// The stub's arguments, if it ran.
    pub args: Option<Vec<String>>,
    /// The files the stub saw under its directory, if it ran on one.
    pub tree: Option<Vec<String>>,
    /// How many times the stub ran.
    pub runs: u32,
}

impl Run {
    pub fn new() -> Run {
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

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn work(&self) -> PathBuf {
        self.path("work")
    }

    pub fn env(mut self, key: &str, value: impl Into<String>) -> Run {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.to_owned(), value.into()));
        self
    }

    pub fn artifact(self, url: String, digest: impl Into<String>) -> Run {
        self.env(ARTIFACT_URL_ENV, url)
            .env(ARTIFACT_DIGEST_ENV, digest)
    }

    /// Runs the container's command: the script with `celld deploy DIR --bucket ...`.
    pub fn run(self, dir: &Path) -> (Run, Ran) {
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
        let runs = lines("runs")
            .and_then(|l| l.first().map(|n| n.parse().unwrap()))
            .unwrap_or(0);
        let ran = Ran {
            runs,
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
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.output.stdout).into_owned()
    }

    pub fn message(&self) -> &str {
        self.result.message.as_deref().unwrap_or("")
    }

    pub fn assert_failed(&self, step: Step, exit_code: i32) {
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
