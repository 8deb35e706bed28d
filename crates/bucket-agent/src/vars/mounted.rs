//! Secrets as the kubelet mounts them (one file per key; its own `..data` and `..<time>`
//! entries skipped) and the project directory whose wrangler config gets them.

use super::error::VarsError;
use super::merge::{self, SecretVars};
use super::plan::Plan;
use std::path::Path;

/// The config files `celld deploy` reads, in its order of preference.
pub const CONFIG_FILES: &[&str] = &["wrangler.jsonc", "wrangler.json"];

fn io(action: &'static str, path: &Path) -> impl FnOnce(std::io::Error) -> VarsError {
    let path = path.display().to_string();
    move |e| VarsError::Io {
        action,
        path,
        message: e.to_string(),
    }
}

/// Reads Secret `secret` mounted at `dir`: every regular file (or link to one) whose name does
/// not start with `..`, sorted by name.
pub fn read_secret(secret: &str, dir: &Path) -> Result<SecretVars, VarsError> {
    let mut values = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io("reading the Secret volume", dir))? {
        let entry = entry.map_err(io("reading the Secret volume", dir))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = entry.path();
        if name.starts_with("..") || !path.is_file() {
            continue;
        }
        let value = std::fs::read(&path).map_err(io("reading the Secret key", &path))?;
        values.push((name, value));
    }
    values.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(SecretVars {
        secret: secret.to_string(),
        values,
    })
}

/// Merges `secrets` (each a Secret's name and where it is mounted) into the wrangler config of
/// the project in `project`, in place; returns the file's name and what the merge did.
pub fn merge_project(
    project: &Path,
    secrets: &[(String, &Path)],
) -> Result<(String, Plan), VarsError> {
    let file = CONFIG_FILES
        .iter()
        .find(|f| project.join(f).is_file())
        .ok_or_else(|| VarsError::NoConfig {
            dir: project.display().to_string(),
        })?;
    let path = project.join(file);
    let text = std::fs::read_to_string(&path).map_err(io("reading", &path))?;
    let values = secrets
        .iter()
        .map(|(name, dir)| read_secret(name, dir))
        .collect::<Result<Vec<_>, _>>()?;
    let merged = merge::merge(file, &text, &values)?;
    std::fs::write(&path, merged.text.as_bytes()).map_err(io("writing", &path))?;
    Ok((file.to_string(), merged.plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    /// A Secret volume laid out as the kubelet does: keys link into `..data`, which links to a
    /// timestamped directory.
    fn mount(dir: &Path, values: &[(&str, &str)]) {
        let stamped = dir.join("..2026_12_02_10_00_00.1");
        std::fs::create_dir_all(&stamped).unwrap();
        for (k, v) in values {
            std::fs::write(stamped.join(k), v).unwrap();
        }
        symlink("..2026_12_02_10_00_00.1", dir.join("..data")).unwrap();
        for (k, _) in values {
            symlink(format!("..data/{k}"), dir.join(k)).unwrap();
        }
    }

    #[test]
    fn merges_mounted_secrets_into_the_project_config() {
        let root = tempfile::tempdir().unwrap();
        let project = root.path().join("src");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::write(
            project.join("wrangler.jsonc"),
            "{ \"name\": \"web\", \"main\": \"a.js\", // x\n }",
        )
        .unwrap();
        std::fs::write(project.join("wrangler.json"), "{}").unwrap();
        let secret = root.path().join("vars/web-vars");
        std::fs::create_dir_all(&secret).unwrap();
        mount(&secret, &[("B_KEY", "b"), ("A_KEY", "a")]);

        let read = read_secret("web-vars", &secret).unwrap();
        let names: Vec<&str> = read.values.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(names, ["A_KEY", "B_KEY"]);

        let (file, plan) =
            merge_project(&project, &[("web-vars".to_string(), secret.as_path())]).unwrap();
        assert_eq!(file, "wrangler.jsonc");
        assert_eq!(plan.keys.len(), 2);
        let text = std::fs::read_to_string(project.join("wrangler.jsonc")).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(
            value["vars"],
            serde_json::json!({"A_KEY": "a", "B_KEY": "b"})
        );
        // wrangler.json, which celld does not read when wrangler.jsonc exists, is untouched.
        assert_eq!(
            std::fs::read_to_string(project.join("wrangler.json")).unwrap(),
            "{}"
        );
    }

    #[test]
    fn names_what_is_missing() {
        let root = tempfile::tempdir().unwrap();
        let err = merge_project(root.path(), &[]).unwrap_err().to_string();
        assert!(
            err.contains("has no wrangler.jsonc or wrangler.json"),
            "{err}"
        );
        let err = read_secret("s", &root.path().join("none"))
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("reading the Secret volume"), "{err}");
    }
}
