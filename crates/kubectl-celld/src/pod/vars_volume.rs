//! `--vars-from-secret`: each Secret is mounted read-only into the deploy pod, under its working
//! directory (one file per key of the Secret's `.data`), and `celld-bucket merge-vars` merges the
//! files into the project's wrangler config there, just before `celld deploy`. The Job names
//! only the Secrets; no value is in its spec, the command lines or the plugin's output.

use super::job::{UPLOAD_DIR, WORK_DIR};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{SecretVolumeSource, Volume, VolumeMount};

/// Where the Secrets are mounted, relative to the working directory.
pub const VARS_DIR: &str = "vars-from-secret";

/// Mode of the key files: readable by the pod's user and group (its `fsGroup`) only.
const KEY_FILE_MODE: i32 = 0o440;

/// The directory Secret `secret` is mounted at, relative to the working directory.
pub fn mount_dir(secret: &str) -> String {
    format!("{VARS_DIR}/{secret}")
}

/// Adds to `job`'s pod a read-only volume and mount for each of `secrets`.
pub fn mount(job: &mut Job, secrets: &[String]) {
    let Some(pod) = job.spec.as_mut().and_then(|s| s.template.spec.as_mut()) else {
        return;
    };
    for (i, secret) in secrets.iter().enumerate() {
        let name = format!("vars-{i}");
        pod.volumes.get_or_insert_with(Vec::new).push(Volume {
            name: name.clone(),
            secret: Some(SecretVolumeSource {
                secret_name: Some(secret.clone()),
                default_mode: Some(KEY_FILE_MODE),
                optional: Some(false),
                ..SecretVolumeSource::default()
            }),
            ..Volume::default()
        });
        for container in &mut pod.containers {
            container
                .volume_mounts
                .get_or_insert_with(Vec::new)
                .push(VolumeMount {
                    name: name.clone(),
                    mount_path: format!("{WORK_DIR}/{}", mount_dir(secret)),
                    read_only: Some(true),
                    ..VolumeMount::default()
                });
        }
    }
}

/// The command that merges the mounted `secrets`, in order, into the config of the project in
/// `project` (relative to the working directory).
pub fn merge_command(project: &str, secrets: &[String]) -> Vec<String> {
    let mut cmd = vec![
        "celld-bucket".to_string(),
        "merge-vars".to_string(),
        "--project".to_string(),
        project.to_string(),
    ];
    for secret in secrets {
        cmd.extend([
            "--secret".to_string(),
            format!("{secret}={}", mount_dir(secret)),
        ]);
    }
    cmd
}

/// The command that copies an image's source (`from`, read-only in the image) into the upload
/// directory, where its config can be changed.
pub fn copy_command(from: &str) -> Vec<String> {
    vec![
        "sh".into(),
        "-c".into(),
        format!(
            "rm -rf {UPLOAD_DIR} && mkdir -p {UPLOAD_DIR} && tar -C {from} -cf - . | tar -x -o -f - -C {UPLOAD_DIR}"
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pod::job::{self, Input};
    use celld_api::{BucketUrl, CelldFleet, CelldFleetSpec, ResolvedStorage};
    use std::time::Duration;

    #[test]
    fn mounts_each_secret_read_only_under_the_working_directory() {
        let mut fleet = CelldFleet::new("web", CelldFleetSpec::with_bucket("s3://celld/web"));
        fleet.metadata.namespace = Some("apps".into());
        let storage = ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse("s3://celld/web").unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: Some("creds".into()),
        };
        let mut built = job::build(&Input {
            fleet: &fleet,
            storage: &storage,
            image: "img",
            lifetime: Duration::from_secs(600),
            keep: false,
        });
        mount(&mut built, &["web-vars".into(), "shared.tokens".into()]);
        let pod = built.spec.unwrap().template.spec.unwrap();
        insta::assert_yaml_snapshot!((pod.volumes, &pod.containers[0].volume_mounts), @r#"
        - - emptyDir: {}
            name: work
          - name: vars-0
            secret:
              defaultMode: 288
              optional: false
              secretName: web-vars
          - name: vars-1
            secret:
              defaultMode: 288
              optional: false
              secretName: shared.tokens
        - - mountPath: /work
            name: work
          - mountPath: /work/vars-from-secret/web-vars
            name: vars-0
            readOnly: true
          - mountPath: /work/vars-from-secret/shared.tokens
            name: vars-1
            readOnly: true
        "#);
    }

    #[test]
    fn commands() {
        assert_eq!(
            merge_command("src", &["a".into(), "b".into()]).join(" "),
            "celld-bucket merge-vars --project src --secret a=vars-from-secret/a --secret b=vars-from-secret/b"
        );
        assert_eq!(
            copy_command("/app")[2],
            "rm -rf src && mkdir -p src && tar -C /app -cf - . | tar -x -o -f - -C src"
        );
    }
}
