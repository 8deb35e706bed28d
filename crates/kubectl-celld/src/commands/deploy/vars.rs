//! `deploy --vars-from-secret NAME`: the keys of Secret NAME (in the fleet's namespace) become the
//! Worker's `vars`, merged into its wrangler config inside the deploy pod.
//!
//! Before the Job is created, [`check`] reads each Secret's key names and sizes (the values stay
//! in memory, never printed) and checks them against the rules of
//! [`celld_bucket::vars`] and, for an uploaded directory, against the config's own `vars`: a
//! missing Secret, a bad key or a value too large stops the deploy before anything is uploaded.
//! In the pod, [`prepare`] runs `celld-bucket merge-vars` on the mounted Secrets (see
//! [`crate::pod::vars_volume`]).

use crate::cluster::exec::{self, Spec};
use crate::cluster::fleet_context::FleetContext;
use crate::error::{Error, Result};
use crate::pod::job::{CONTAINER, IMAGE_SOURCE_DIR, UPLOAD_DIR};
use crate::pod::vars_volume;
use crate::text::progress::Progress;
use celld_bucket::vars::merge::config_vars;
use celld_bucket::vars::plan::plan;
use celld_bucket::vars::{KeyInfo, Plan, SecretKeys};
use celld_bucket::wire::Answer;
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Api;
use std::path::Path;

use super::archive::WRANGLER_FILES;

/// The tools the pod needs besides the deploy's own: `celld-bucket` to merge, and `tar` to copy
/// an image's source where it can be changed.
pub fn tools(secrets: &[String], uploading: bool) -> Vec<&'static str> {
    match (secrets.is_empty(), uploading) {
        (true, _) => Vec::new(),
        (false, true) => vec!["celld-bucket"],
        (false, false) => vec!["celld-bucket", "tar"],
    }
}

/// The key names and sizes of `secret`'s `.data`.
pub fn keys_of(name: &str, secret: &Secret) -> SecretKeys {
    SecretKeys {
        secret: name.to_string(),
        keys: secret
            .data
            .iter()
            .flatten()
            .map(|(key, value)| KeyInfo {
                name: key.clone(),
                size: value.0.len(),
                text: std::str::from_utf8(&value.0).is_ok(),
            })
            .collect(),
    }
}

/// The `vars` of the wrangler config at the top of `dir` (the one `celld deploy` reads).
fn local_vars(dir: &Path) -> Result<serde_json::Map<String, serde_json::Value>> {
    let Some(file) = WRANGLER_FILES.iter().find(|f| dir.join(f).is_file()) else {
        return Ok(serde_json::Map::new());
    };
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).map_err(|source| Error::Io {
        what: "cannot read the wrangler config",
        path: path.clone(),
        source,
    })?;
    Ok(config_vars(file, &text)?.1.unwrap_or_default())
}

/// Checks the Secrets of `--vars-from-secret` before anything is created: each exists in the
/// fleet's namespace, and their keys can be merged (into the config of `dir`, when uploading).
/// Notes the keys (never a value) and the config's vars a Secret replaces.
pub async fn check(
    context: &FleetContext,
    secrets: &[String],
    dir: Option<&Path>,
    progress: &mut Progress,
) -> Result<Option<Plan>> {
    if secrets.is_empty() {
        return Ok(None);
    }
    let ns = context.namespace();
    let api: Api<Secret> = Api::namespaced(context.target.client.clone(), ns);
    let mut all = Vec::new();
    for (i, name) in secrets.iter().enumerate() {
        if secrets[..i].contains(name) {
            return Err(Error::Usage(format!(
                "--vars-from-secret {name} is given twice: name each Secret once"
            )));
        }
        let secret = api
            .get_opt(name)
            .await
            .map_err(|e| Error::api("get", "secrets", Some(ns), e))?
            .ok_or_else(|| Error::VarsSecretMissing {
                secret: name.clone(),
                namespace: ns.to_string(),
            })?;
        all.push(keys_of(name, &secret));
    }
    let config = dir.map(local_vars).transpose()?;
    let plan = plan(config.as_ref(), &all)?;
    for secret in &all {
        let names: Vec<&str> = secret.keys.iter().map(|k| k.name.as_str()).collect();
        progress.note(&format!(
            "Vars from Secret {ns}/{}: {} (values not shown)",
            secret.secret,
            names.join(", ")
        ));
    }
    if !plan.overridden.is_empty() {
        progress.note(&format!(
            "note: the Secrets' values replace {} in the vars of the wrangler config",
            plan.overridden.join(", ")
        ));
    }
    Ok(Some(plan))
}

async fn run(pods: &Api<Pod>, pod: &str, command: Vec<String>) -> Result<exec::Finished> {
    exec::run(pods, pod, Spec::captured(CONTAINER, command)).await
}

/// In the deploy pod: merges the mounted `secrets` into the config of the source in
/// `source_dir` (an image's source is first copied where it can be changed); returns the
/// directory to deploy from.
pub async fn prepare(
    pods: &Api<Pod>,
    pod: &str,
    source_dir: &'static str,
    secrets: &[String],
    progress: &mut Progress,
) -> Result<&'static str> {
    if secrets.is_empty() {
        return Ok(source_dir);
    }
    if source_dir == IMAGE_SOURCE_DIR {
        let done = run(pods, pod, vars_volume::copy_command(IMAGE_SOURCE_DIR)).await?;
        if done.code != 0 {
            return Err(Error::Deploy(format!(
                "copying the image's source from {IMAGE_SOURCE_DIR} to merge the vars failed (exit code {}): {}; the image needs sh and tar, and its source at {IMAGE_SOURCE_DIR}",
                done.code,
                String::from_utf8_lossy(&done.stderr).trim()
            )));
        }
    }
    let done = run(pods, pod, vars_volume::merge_command(UPLOAD_DIR, secrets)).await?;
    let stdout = String::from_utf8_lossy(&done.stdout);
    let answer = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<Answer>(l).ok());
    let from = secrets.join(", ");
    match answer {
        Some(Answer::VarsMerged {
            config,
            keys,
            overridden,
        }) => {
            progress.note(&format!(
                "Merged {} vars from Secret {from} into {UPLOAD_DIR}/{config}{}",
                keys.len(),
                if overridden.is_empty() {
                    String::new()
                } else {
                    format!(" (replacing {})", overridden.join(", "))
                }
            ));
            Ok(UPLOAD_DIR)
        }
        Some(Answer::Failed { error }) => Err(Error::Deploy(format!(
            "merging the vars from Secret {from} in the deploy pod failed: {error}; nothing was published"
        ))),
        _ => Err(Error::Deploy(format!(
            "merging the vars from Secret {from} in the deploy pod failed (exit code {}): {}; the deploy image needs celld-bucket with merge-vars (use the deployer of this plugin's release)",
            done.code,
            String::from_utf8_lossy(&done.stderr).trim()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::ByteString;
    use std::collections::BTreeMap;

    #[test]
    fn keys_come_from_data_only_without_values() {
        let secret = Secret {
            type_: Some("kubernetes.io/basic-auth".into()),
            data: Some(BTreeMap::from([
                ("password".to_string(), ByteString(b"hunter2".to_vec())),
                ("CERT".to_string(), ByteString(vec![0xff, 0x00])),
            ])),
            string_data: Some(BTreeMap::from([(
                "IGNORED".to_string(),
                "write-only".to_string(),
            )])),
            ..Secret::default()
        };
        let keys = keys_of("auth", &secret);
        assert_eq!(
            keys.keys,
            vec![
                KeyInfo {
                    name: "CERT".into(),
                    size: 2,
                    text: false
                },
                KeyInfo {
                    name: "password".into(),
                    size: 7,
                    text: true
                },
            ]
        );
        assert!(!format!("{keys:?}").contains("hunter2"));
    }

    #[test]
    fn tools_per_source() {
        assert!(tools(&[], true).is_empty());
        assert_eq!(tools(&["s".into()], true), ["celld-bucket"]);
        assert_eq!(tools(&["s".into()], false), ["celld-bucket", "tar"]);
    }

    #[test]
    fn local_config_vars_are_read_from_jsonc() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("wrangler.jsonc"),
            "{ // c\n \"name\": \"web\", \"vars\": { \"API_KEY\": \"dev\", },\n}",
        )
        .unwrap();
        let vars = local_vars(dir.path()).unwrap();
        assert_eq!(vars.get("API_KEY"), Some(&serde_json::json!("dev")));
        let empty = tempfile::tempdir().unwrap();
        assert!(local_vars(empty.path()).unwrap().is_empty());
    }
}
