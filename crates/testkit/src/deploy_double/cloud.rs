//! gs:// and az:// buckets for the test double, through the client of `celld-bucket` (the
//! deployer image's bucket agent: `object_store`, GCS writes through the JSON API), and only at
//! an emulator on this machine: `GOOGLE_BASE_URL` or `AZURE_STORAGE_ENDPOINT` must name a
//! loopback address, as `--endpoint` must for S3. The credentials come from the environment
//! celld reads (`GOOGLE_SERVICE_ACCOUNT_KEY`; `AZURE_STORAGE_ACCOUNT_NAME` and
//! `AZURE_STORAGE_ACCOUNT_KEY`).

use celld_bucket::location::{Cloud, Location};
use celld_bucket::store::Bucket;
use celld_bucket::wire::{Answer, Expect};

use super::endpoint;
use super::error::DeployError;

/// The variable naming the emulator of `cloud`.
fn endpoint_var(cloud: Cloud) -> &'static str {
    match cloud {
        Cloud::Gcs => "GOOGLE_BASE_URL",
        _ => "AZURE_STORAGE_ENDPOINT",
    }
}

/// A gs:// or az:// bucket prefix at a local emulator.
pub struct CloudStore {
    bucket: Bucket,
}

fn failed(e: impl std::fmt::Display) -> DeployError {
    DeployError::Cloud {
        message: e.to_string(),
    }
}

impl CloudStore {
    /// The bucket `url` (`gs://` or `az://`), refused unless its emulator is on this machine.
    pub fn new(url: &str) -> Result<Self, DeployError> {
        let location = Location::parse(url).map_err(failed)?;
        let var = endpoint_var(location.scheme);
        // The emulator's URL may carry a path (Azurite's account); its server must be local.
        let server = std::env::var(var)
            .ok()
            .map(|url| match url.split_once("://") {
                Some((scheme, rest)) => {
                    format!("{scheme}://{}", rest.split('/').next().unwrap_or(rest))
                }
                None => url,
            });
        endpoint::local(server.as_deref()).map_err(|e| DeployError::Bucket {
            value: url.to_string(),
            problem: format!(
                "{var} must name the local emulator: {e} (the test double never writes to a real bucket)"
            ),
        })?;
        Ok(Self {
            bucket: Bucket::new(location, url.to_string()).map_err(failed)?,
        })
    }

    /// The bucket URL.
    pub fn url(&self) -> &str {
        &self.bucket.url
    }

    /// Uploads `body` to `rel`, unconditionally.
    pub async fn put(
        &self,
        rel: &str,
        body: Vec<u8>,
        content_type: &str,
    ) -> Result<(), DeployError> {
        self.bucket
            .put(rel, body, content_type)
            .await
            .map_err(failed)
    }

    /// What a compare-and-swap write of `rel` must expect now.
    pub async fn expect(&self, rel: &str) -> Result<Expect, DeployError> {
        match self.bucket.get(rel).await.map_err(failed)? {
            Answer::Object { version, .. } => Ok(Expect::Version(version)),
            _ => Ok(Expect::Absent),
        }
    }

    /// Writes `body` to `rel` only if it is still as `expect` says; a lost race is
    /// [`DeployError::LostRace`] naming `version`.
    pub async fn put_if(
        &self,
        rel: &str,
        body: Vec<u8>,
        expect: &Expect,
        version: &str,
    ) -> Result<(), DeployError> {
        match self
            .bucket
            .put_if(rel, body, expect)
            .await
            .map_err(failed)?
        {
            Answer::Written => Ok(()),
            _ => Err(DeployError::LostRace {
                bucket: self.url().trim_end_matches('/').to_string(),
                key: rel.to_string(),
                expected: expect.to_string(),
                version: version.to_string(),
            }),
        }
    }
}
