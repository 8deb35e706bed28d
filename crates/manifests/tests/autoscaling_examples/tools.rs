//! The repository's example files, and the control plane's tools that check them.

use serde_json::{Value, json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CELLD_WORKSPACE_ROOT"))
}

/// The non-empty YAML documents of a repository file, as JSON values.
pub fn documents(file: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(root().join(file)).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|doc| serde::Deserialize::deserialize(doc).unwrap_or_else(|e| panic!("{file}: {e}")))
        .filter(|doc: &Value| !doc.is_null())
        .collect()
}

/// The one document of `kind` in `file`.
pub fn document(file: &str, kind: &str) -> Value {
    let mut docs: Vec<Value> = documents(file)
        .into_iter()
        .filter(|d| d["kind"] == kind)
        .collect();
    assert_eq!(docs.len(), 1, "{file} has one {kind}");
    docs.remove(0)
}

/// A tool of the local control plane: its path, or a panic saying how to get it.
pub fn tool(path: PathBuf, component: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{} is missing: build and link it with `make cluster-up` (testenv/scripts/build.sh {component})",
        path.display()
    );
    path
}

/// Runs `tool ARGS` with `input` on stdin: its exit status, stdout and stderr.
pub fn run(tool: &Path, args: &[&str], input: &str) -> (bool, String, String) {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} runs: {e}", tool.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `promtool test rules` on the given test groups; fails with its report.
pub fn promtool_test(what: &str, tests: Vec<Value>) {
    let promtool = tool(celld_testkit::paths::promtool(), "promtool");
    let dir = std::env::temp_dir().join(celld_testkit::unique_name("autoscaling-examples"));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tests.yaml");
    let doc = json!({"evaluation_interval": "1m", "tests": tests});
    std::fs::write(&file, serde_yaml::to_string(&doc).unwrap()).unwrap();
    let (ok, stdout, stderr) = run(&promtool, &["test", "rules", file.to_str().unwrap()], "");
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(ok, "{what}: promtool test rules failed:\n{stdout}{stderr}");
}
