//! Secret volumes of a deploy pod, laid out as the kubelet mounts them: kwok runs no container,
//! so the Exec rule's working directory gets, for each Secret volume mounted under the
//! container's working directory, one file per key of the Secret's `.data` (or of the volume's
//! `items`) at the same relative path. A missing Secret fails as the real pod would not start.

use std::path::Path;

use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::{Api, Client};

use crate::error::{Error, Result};

/// Writes the Secret volumes of `pod`'s first container under `work` (the local working
/// directory).
pub async fn project_secrets(client: &Client, pod: &Pod, work: &Path) -> Result<()> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let Some(spec) = &pod.spec else {
        return Ok(());
    };
    let Some(container) = spec.containers.first() else {
        return Ok(());
    };
    let working_dir = container.working_dir.clone().unwrap_or_default();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &namespace);
    for mount in container.volume_mounts.iter().flatten() {
        let Some(source) = spec
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == mount.name)
            .and_then(|v| v.secret.as_ref())
        else {
            continue;
        };
        let problem = |problem: String| Error::PodVolume {
            namespace: namespace.clone(),
            pod: pod_name.clone(),
            volume: mount.name.clone(),
            problem,
        };
        let rel = mount
            .mount_path
            .strip_prefix(&working_dir)
            .filter(|rest| rest.starts_with('/') && !working_dir.is_empty())
            .ok_or_else(|| {
                problem(format!(
                    "mounted at {}, outside the working directory {working_dir}: the test double lays out only volumes under it",
                    mount.mount_path
                ))
            })?;
        let name = source.secret_name.clone().unwrap_or_default();
        let secret = secrets
            .get_opt(&name)
            .await
            .map_err(|e| Error::kube(format!("reading Secret {namespace}/{name}"), e))?;
        let Some(secret) = secret else {
            if source.optional == Some(true) {
                continue;
            }
            return Err(problem(format!(
                "Secret {name} does not exist: the real pod would not start (FailedMount)"
            )));
        };
        let data = secret.data.unwrap_or_default();
        let dir = work.join(rel.trim_start_matches('/'));
        std::fs::create_dir_all(&dir)
            .map_err(|e| Error::io("creating a Secret volume's directory", &dir, e))?;
        let items: Vec<(String, String)> = match &source.items {
            Some(items) => items
                .iter()
                .map(|i| (i.key.clone(), i.path.clone()))
                .collect(),
            None => data.keys().map(|k| (k.clone(), k.clone())).collect(),
        };
        for (key, path) in items {
            let value = data.get(&key).ok_or_else(|| {
                problem(format!(
                    "Secret {name} has no key {key}: the real pod would not start (FailedMount)"
                ))
            })?;
            let file = dir.join(path);
            std::fs::write(&file, &value.0)
                .map_err(|e| Error::io("writing a Secret volume's key", &file, e))?;
        }
    }
    Ok(())
}
