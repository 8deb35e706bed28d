//! The S3 server of the local control plane (s3s-fs), as written by up.sh to `.testenv/s3.env`.

use std::path::Path;

use aws_sdk_s3::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_s3::error::DisplayErrorContext;
use aws_sdk_s3::primitives::ByteStream;

use crate::error::{Error, Result};
use crate::names::unique_name;
use crate::paths;

/// Where the test S3 server listens and how to sign in to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct S3Settings {
    /// `http://127.0.0.1:<port>` (path-style addressing only).
    pub endpoint: String,
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: String,
    /// Always `us-east-1`.
    pub region: String,
    /// A bucket up.sh created; tests share it, so each should use its own key prefix
    /// ([`S3Settings::unique_prefix`]).
    pub bucket: String,
}

impl S3Settings {
    /// Reads `.testenv/s3.env`; fails with [`Error::NotRunning`] when the control plane is not up.
    pub fn load() -> Result<Self> {
        Self::from_file(&paths::s3_env())
    }

    /// Reads a `KEY=value` env file with `S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION` and `S3_BUCKET`.
    pub fn from_file(path: &Path) -> Result<Self> {
        if !path.exists() {
            return Err(Error::NotRunning {
                path: path.to_path_buf(),
            });
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::io("reading the S3 settings", path, e))?;
        let get = |key: &'static str| {
            text.lines()
                .filter_map(|line| line.trim().split_once('='))
                .find(|(k, _)| k.trim() == key)
                .map(|(_, v)| v.trim().trim_matches('"').to_owned())
                .ok_or_else(|| Error::S3Setting {
                    path: path.to_path_buf(),
                    key,
                })
        };
        Ok(S3Settings {
            endpoint: get("S3_ENDPOINT")?,
            access_key_id: get("AWS_ACCESS_KEY_ID")?,
            secret_access_key: get("AWS_SECRET_ACCESS_KEY")?,
            region: get("AWS_REGION")?,
            bucket: get("S3_BUCKET")?,
        })
    }

    /// The settings as environment variables (`S3_ENDPOINT`, `AWS_ACCESS_KEY_ID`,
    /// `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`, `S3_BUCKET`), e.g. for a process under test.
    pub fn env_vars(&self) -> [(&'static str, &str); 5] {
        [
            ("S3_ENDPOINT", &self.endpoint),
            ("AWS_ACCESS_KEY_ID", &self.access_key_id),
            ("AWS_SECRET_ACCESS_KEY", &self.secret_access_key),
            ("AWS_REGION", &self.region),
            ("S3_BUCKET", &self.bucket),
        ]
    }

    /// A key prefix (`<test>-xxxxxx/`) no other test uses in the shared bucket.
    pub fn unique_prefix(&self, test: &str) -> String {
        format!("{}/", unique_name(test))
    }

    /// An S3 client for this server: static credentials, path-style addressing, no retries.
    pub fn client(&self) -> aws_sdk_s3::Client {
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new(self.region.clone()))
            .endpoint_url(&self.endpoint)
            .force_path_style(true)
            .credentials_provider(Credentials::new(
                &self.access_key_id,
                &self.secret_access_key,
                None,
                None,
                "celld-testkit",
            ))
            .retry_config(aws_sdk_s3::config::retry::RetryConfig::disabled())
            .build();
        aws_sdk_s3::Client::from_conf(config)
    }
}

impl S3Settings {
    /// The object `key` of the shared bucket, or `None` when it does not exist.
    pub async fn get_object(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let failed = |message: String| Error::S3 {
            action: "reading",
            bucket: self.bucket.clone(),
            key: key.to_owned(),
            message,
        };
        match self
            .client()
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
        {
            Ok(out) => {
                let bytes = out
                    .body
                    .collect()
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                Ok(Some(bytes.into_bytes().to_vec()))
            }
            Err(e) if e.raw_response().map(|r| r.status().as_u16()) == Some(404) => Ok(None),
            Err(e) => Err(failed(DisplayErrorContext(e).to_string())),
        }
    }

    /// The keys of the shared bucket under `prefix` (a key prefix, as given), sorted.
    pub async fn list_keys(&self, prefix: &str) -> Result<Vec<String>> {
        let mut keys = Vec::new();
        let mut pages = self
            .client()
            .list_objects_v2()
            .bucket(&self.bucket)
            .prefix(prefix)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| Error::S3 {
                action: "listing",
                bucket: self.bucket.clone(),
                key: prefix.to_owned(),
                message: DisplayErrorContext(e).to_string(),
            })?;
            keys.extend(
                page.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_owned)),
            );
        }
        keys.sort();
        Ok(keys)
    }

    /// Writes `body` to `key` of the shared bucket, unconditionally.
    pub async fn put_object(&self, key: &str, body: Vec<u8>) -> Result<()> {
        self.client()
            .put_object()
            .bucket(&self.bucket)
            .key(key)
            .body(ByteStream::from(body))
            .send()
            .await
            .map_err(|e| Error::S3 {
                action: "writing",
                bucket: self.bucket.clone(),
                key: key.to_owned(),
                message: DisplayErrorContext(e).to_string(),
            })?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_env_file() {
        let dir = std::env::temp_dir().join(unique_name("celld-testkit-s3env"));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let file = dir.join("s3.env");
        std::fs::write(
            &file,
            "S3_ENDPOINT=http://127.0.0.1:1234\nAWS_ACCESS_KEY_ID=ak\nAWS_SECRET_ACCESS_KEY=sk\n\
             AWS_REGION=us-east-1\nS3_BUCKET=b\n",
        )
        .expect("write");
        let settings = S3Settings::from_file(&file).expect("parse");
        assert_eq!(settings.endpoint, "http://127.0.0.1:1234");
        assert_eq!(settings.bucket, "b");
        std::fs::remove_file(&file).expect("write");
        let err = S3Settings::from_file(&file).expect_err("missing file");
        assert!(err.to_string().contains("make cluster-up"), "{err}");
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
