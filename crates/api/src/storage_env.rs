//! The celld environment that says where a fleet's bucket is and how it authenticates, per
//! object store, exactly as celld v0.4 reads it: `CELLD_BUCKET`; for S3 `AWS_REGION` and
//! `S3_ENDPOINT`; for Azure `AZURE_STORAGE_ACCOUNT_NAME`; then the credentials Secret's keys
//! (for GCS the service-account key JSON in `GOOGLE_SERVICE_ACCOUNT_KEY`, never a mounted key
//! file). Without a credentials Secret the pods get no key at all: they use the workload
//! identity of their ServiceAccount. The operator gives it to the nodes and `kubectl celld` to
//! its deploy pods, so both reach the bucket alike.

use crate::labels::secret_keys;
use crate::{ResolvedStorage, Scheme};
use k8s_openapi::api::core::v1::{EnvVar, EnvVarSource, SecretKeySelector};

/// The keys of a credentials Secret the nodes get as environment variables of the same name,
/// each with whether it may be absent.
pub fn secret_keys(scheme: Scheme) -> &'static [(&'static str, bool)] {
    match scheme {
        Scheme::S3 => &[
            (secret_keys::ACCESS_KEY_ID, false),
            (secret_keys::SECRET_ACCESS_KEY, false),
            (secret_keys::SESSION_TOKEN, true),
        ],
        Scheme::Gcs => &[(secret_keys::GOOGLE_SERVICE_ACCOUNT_KEY, false)],
        Scheme::Azure => &[(secret_keys::AZURE_STORAGE_ACCOUNT_KEY, false)],
    }
}

/// Where the bucket is: `CELLD_BUCKET` and the store's connection settings.
pub fn location(storage: &ResolvedStorage) -> Vec<EnvVar> {
    let mut env = vec![value("CELLD_BUCKET", storage.bucket.to_string())];
    match storage.bucket.scheme {
        Scheme::S3 => {
            env.push(value("AWS_REGION", storage.region.clone()));
            if let Some(endpoint) = &storage.endpoint {
                env.push(value("S3_ENDPOINT", endpoint.clone()));
            }
        }
        Scheme::Gcs => {}
        Scheme::Azure => {
            if let Some(account) = &storage.azure_storage_account {
                env.push(value("AZURE_STORAGE_ACCOUNT_NAME", account.clone()));
            }
        }
    }
    env
}

/// Everything: [`location`], then [`credentials`].
pub fn env(storage: &ResolvedStorage) -> Vec<EnvVar> {
    let mut env = location(storage);
    env.extend(credentials(storage));
    env
}

/// The credentials: every key of the credentials Secret celld reads for this store, none
/// without a Secret.
pub fn credentials(storage: &ResolvedStorage) -> Vec<EnvVar> {
    let Some(secret) = &storage.credentials_secret else {
        return Vec::new();
    };
    secret_keys(storage.bucket.scheme)
        .iter()
        .map(|(key, optional)| from_secret(key, secret, *optional))
        .collect()
}

fn value(name: &str, value: String) -> EnvVar {
    EnvVar {
        name: name.into(),
        value: Some(value),
        ..EnvVar::default()
    }
}

fn from_secret(name: &str, secret: &str, optional: bool) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            secret_key_ref: Some(SecretKeySelector {
                name: secret.into(),
                key: name.into(),
                optional: optional.then_some(true),
            }),
            ..EnvVarSource::default()
        }),
        ..EnvVar::default()
    }
}

/// The `celld deploy` command for the fleet's storage, reading the project from `source`: the
/// endpoint and region for S3 only (celld refuses them for gs:// and az://). The credentials
/// and the Azure storage account come from the environment, as on the nodes.
pub fn deploy_command(source: &str, storage: &ResolvedStorage, dry_run: bool) -> Vec<String> {
    let mut cmd = vec![
        "celld".to_string(),
        "deploy".to_string(),
        source.to_string(),
        "--bucket".to_string(),
        storage.bucket.to_string(),
    ];
    if storage.bucket.scheme == Scheme::S3 {
        if let Some(endpoint) = &storage.endpoint {
            cmd.extend(["--endpoint".to_string(), endpoint.clone()]);
        }
        cmd.extend(["--region".to_string(), storage.region.clone()]);
    }
    if dry_run {
        cmd.push("--dry-run".to_string());
    }
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BucketUrl;

    fn storage(bucket: &str, secret: Option<&str>) -> ResolvedStorage {
        ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse(bucket).unwrap(),
            endpoint: None,
            region: "us-east-1".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: secret.map(Into::into),
        }
    }

    #[test]
    fn s3_with_keys() {
        let mut s = storage("s3://celld/web", Some("celld-s3"));
        s.endpoint = Some("https://acct.r2.cloudflarestorage.com".into());
        s.region = "auto".into();
        insta::assert_yaml_snapshot!(env(&s));
    }

    #[test]
    fn s3_workload_identity() {
        insta::assert_yaml_snapshot!(env(&storage("s3://celld/web", None)));
    }

    #[test]
    fn gcs_with_service_account_key() {
        insta::assert_yaml_snapshot!(env(&storage("gs://celld/web", Some("celld-gcs"))));
    }

    #[test]
    fn gcs_workload_identity() {
        insta::assert_yaml_snapshot!(env(&storage("gs://celld/web", None)));
    }

    #[test]
    fn azure_with_account_key() {
        let mut s = storage("az://workers/web", Some("celld-azure"));
        s.azure_storage_account = Some("companycelld".into());
        insta::assert_yaml_snapshot!(env(&s));
    }

    #[test]
    fn azure_managed_or_workload_identity() {
        let mut s = storage("az://workers/web", None);
        s.azure_storage_account = Some("companycelld".into());
        insta::assert_yaml_snapshot!(env(&s));
    }
}
