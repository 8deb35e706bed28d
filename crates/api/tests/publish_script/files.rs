//! The files the tests give the script: a Worker project, its tar.gz and the digest of it.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// A tar.gz of the files under `root` named `members` (paths as given, `-P` keeps absolute ones
/// and `..`), built with the tar command.
pub fn tar_gz(root: &Path, members: &[&str]) -> Vec<u8> {
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

pub fn sha256(bytes: &[u8]) -> String {
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

pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The Worker project the artifacts hold, under `root/project`: `app/wrangler.jsonc` and
/// `app/src/index.js`.
pub fn project(root: &Path) -> Vec<&'static str> {
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

pub fn good_artifact() -> (Vec<u8>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let members = project(dir.path());
    let bytes = tar_gz(&dir.path().join("project"), &members);
    (bytes, dir)
}
