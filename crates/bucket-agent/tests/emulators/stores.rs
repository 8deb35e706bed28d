//! The three emulators, and the environment a deploy pod of a fleet on each would give the
//! agent: the nodes' bucket variables and credentials, plus the variable that points the
//! store's client at the emulator.

use crate::TestResult;
use celld_testkit::{AzureSettings, GcsSettings, S3Settings, unique_name};
use std::fmt;

/// An object store the agent writes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// s3s-fs, through `s3://` with static keys.
    S3,
    /// fake-gcs-server, through `gs://` with a service-account key.
    Gcs,
    /// Azurite, through `az://` with the development account's key.
    Azure,
}

impl fmt::Display for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Store::S3 => "s3s-fs",
            Store::Gcs => "fake-gcs-server",
            Store::Azure => "Azurite",
        })
    }
}

/// A service-account key the GCS client takes without asking Google for a token (the
/// emulator authenticates nothing).
fn emulator_gcs_key() -> String {
    serde_json::json!({
        "private_key": "unused",
        "private_key_id": "k1",
        "client_email": "celld@celld-test.iam.gserviceaccount.com",
        "disable_oauth": true
    })
    .to_string()
}

fn not_up(store: Store, e: celld_testkit::Error) -> String {
    format!("the {store} emulator's settings: {e}")
}

impl Store {
    /// The environment of a deploy pod whose fleet's bucket is a fresh prefix (named after
    /// `test`) in the emulator's bucket; also the bucket URL.
    pub fn pod_env(self, test: &str) -> TestResult<(String, Vec<(&'static str, String)>)> {
        let prefix = unique_name(test);
        Ok(match self {
            Store::S3 => {
                let s3 = S3Settings::load().map_err(|e| not_up(self, e))?;
                let url = format!("s3://{}/{prefix}", s3.bucket);
                let env = vec![
                    ("CELLD_BUCKET", url.clone()),
                    ("S3_ENDPOINT", s3.endpoint),
                    ("AWS_REGION", s3.region),
                    ("AWS_ACCESS_KEY_ID", s3.access_key_id),
                    ("AWS_SECRET_ACCESS_KEY", s3.secret_access_key),
                ];
                (url, env)
            }
            Store::Gcs => {
                let gcs = GcsSettings::load().map_err(|e| not_up(self, e))?;
                let url = format!("gs://{}/{prefix}", gcs.bucket);
                let mut env = vec![
                    ("CELLD_BUCKET", url.clone()),
                    ("GOOGLE_SERVICE_ACCOUNT_KEY", emulator_gcs_key()),
                ];
                env.extend(gcs.client_env());
                (url, env)
            }
            Store::Azure => {
                let azure = AzureSettings::load().map_err(|e| not_up(self, e))?;
                let url = format!("az://{}/{prefix}", azure.container);
                let mut env = vec![
                    ("CELLD_BUCKET", url.clone()),
                    ("AZURE_STORAGE_ACCOUNT_NAME", azure.account.clone()),
                    ("AZURE_STORAGE_ACCOUNT_KEY", azure.key.clone()),
                ];
                env.extend(azure.client_env());
                (url, env)
            }
        })
    }
}
