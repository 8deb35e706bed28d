//! Workspace binaries for tests of another package (which cannot name them with
//! `CARGO_BIN_EXE_*`): built with cargo on first use, in the dev profile, so a test never runs a
//! stale binary. An environment variable may name a prebuilt one instead.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

use tokio::process::Command;

use crate::error::{ProcessError, Result};
use crate::paths;

/// Paths already built by this process.
static BUILT: Mutex<Option<HashMap<String, PathBuf>>> = Mutex::new(None);

/// One build at a time (cargo would serialize them anyway, on its lock).
static BUILDING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Binary `bin` of workspace package `package`: `$override_env` if set, else built now with
/// `cargo build -p <package> --bin <bin>` (a no-op when up to date).
pub async fn cargo_bin(package: &str, bin: &str, override_env: &str) -> Result<PathBuf> {
    if let Some(path) = std::env::var_os(override_env).filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let _one = BUILDING.lock().await;
    if let Some(path) = BUILT
        .lock()
        .ok()
        .and_then(|b| b.as_ref().and_then(|m| m.get(bin).cloned()))
    {
        return Ok(path);
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let args = [
        "build",
        "--quiet",
        "--message-format=json-render-diagnostics",
        "-p",
        package,
        "--bin",
        bin,
    ];
    let command = format!("cargo {}", args.join(" "));
    let failed = |reason: String| ProcessError::Build {
        bin: bin.to_string(),
        command: command.clone(),
        reason,
    };
    let out = Command::new(&cargo)
        .args(args)
        .current_dir(paths::workspace_root())
        .output()
        .await
        .map_err(|e| {
            failed(format!(
                "cannot run {}: {e}",
                PathBuf::from(&cargo).display()
            ))
        })?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(30).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(failed(format!("{}:\n{}", out.status, tail.join("\n"))).into());
    }
    let path = executable(&String::from_utf8_lossy(&out.stdout), bin)
        .ok_or_else(|| failed("cargo reported no executable for it".into()))?;
    if let Ok(mut built) = BUILT.lock() {
        built
            .get_or_insert_with(HashMap::new)
            .insert(bin.to_string(), path.clone());
    }
    Ok(path)
}

/// The executable cargo's JSON messages name for binary `bin`.
fn executable(messages: &str, bin: &str) -> Option<PathBuf> {
    messages
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == bin)
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
}

#[cfg(test)]
mod tests {
    use super::executable;

    #[test]
    fn finds_the_executable_in_cargo_messages() {
        let messages = r#"{"reason":"compiler-artifact","target":{"name":"other","kind":["lib"]},"executable":null}
{"reason":"compiler-artifact","target":{"name":"tool","kind":["bin"]},"executable":"/t/debug/tool"}
{"reason":"build-finished","success":true}"#;
        assert_eq!(
            executable(messages, "tool").as_deref(),
            Some(std::path::Path::new("/t/debug/tool"))
        );
        assert_eq!(executable(messages, "other"), None);
    }
}
