//! The GCS (fake-gcs-server) and Azure Blob (Azurite) emulators of the local control plane, as
//! written by up.sh to `.testenv/gcs.env` and `.testenv/azure.env`, with the one write tests
//! need (an object put where the operator reads it) and, for GCS, the read of an object a
//! deploy wrote.

use std::path::Path;

use object_store::ObjectStoreExt;
use object_store::azure::MicrosoftAzureBuilder;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::env_file;
use crate::error::{Error, Result};
use crate::paths;

/// `KEY=value` settings of an env file; fails with [`Error::NotRunning`] when it does not exist.
fn settings(path: &Path) -> Result<impl Fn(&'static str) -> Result<String> + use<>> {
    env_file::read(
        path,
        Error::NotRunning {
            path: path.to_path_buf(),
        },
    )
}

/// fake-gcs-server: plain HTTP, no authentication.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GcsSettings {
    /// `http://127.0.0.1:<port>`, the base URL of its JSON and XML APIs.
    pub endpoint: String,
    /// A bucket up.sh created; tests share it, so each uses its own key prefix.
    pub bucket: String,
}

impl GcsSettings {
    /// Reads `.testenv/gcs.env`.
    pub fn load() -> Result<Self> {
        let get = settings(&paths::state_dir().join("gcs.env"))?;
        Ok(Self {
            endpoint: get("GCS_ENDPOINT")?,
            bucket: get("GCS_BUCKET")?,
        })
    }

    /// The environment that points a client of the GCS API (the bucket agent `celld-bucket`,
    /// the deploy double; `object_store`'s variable) at the emulator.
    pub fn client_env(&self) -> Vec<(&'static str, String)> {
        vec![("GOOGLE_BASE_URL", self.endpoint.clone())]
    }

    /// Writes `body` to `key` with a JSON-API media upload (the emulator does not serve the
    /// XML API's writes).
    pub async fn put(&self, key: &str, body: &[u8]) -> Result<()> {
        let url = format!("{}/{}/{key}", self.endpoint, self.bucket);
        let failed = |message: String| Error::Emulator {
            action: "writing",
            url: url.clone(),
            message,
        };
        let host = self
            .endpoint
            .strip_prefix("http://")
            .ok_or_else(|| failed(format!("{} is not an http:// URL", self.endpoint)))?;
        let mut request = format!(
            "POST /upload/storage/v1/b/{}/o?uploadType=media&name={} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.bucket,
            key.replace('/', "%2F"),
            body.len()
        )
        .into_bytes();
        request.extend_from_slice(body);
        let mut stream = tokio::net::TcpStream::connect(host)
            .await
            .map_err(|e| failed(e.to_string()))?;
        stream
            .write_all(&request)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .await
            .map_err(|e| failed(e.to_string()))?;
        match answer.lines().next() {
            Some(status) if status.starts_with("HTTP/1.1 200") => Ok(()),
            other => Err(failed(format!("answered {other:?}"))),
        }
    }

    /// Reads `key` with a JSON-API media download; None when it does not exist. The request is
    /// HTTP/1.0, so the answer's body is plain (never chunked) and ends with the connection.
    pub async fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        let url = format!("{}/{}/{key}", self.endpoint, self.bucket);
        let failed = |message: String| Error::Emulator {
            action: "reading",
            url: url.clone(),
            message,
        };
        let host = self
            .endpoint
            .strip_prefix("http://")
            .ok_or_else(|| failed(format!("{} is not an http:// URL", self.endpoint)))?;
        let request = format!(
            "GET /storage/v1/b/{}/o/{}?alt=media HTTP/1.0\r\nHost: {host}\r\n\r\n",
            self.bucket,
            key.replace('/', "%2F"),
        );
        let mut stream = tokio::net::TcpStream::connect(host)
            .await
            .map_err(|e| failed(e.to_string()))?;
        stream
            .write_all(request.as_bytes())
            .await
            .map_err(|e| failed(e.to_string()))?;
        let mut answer = Vec::new();
        stream
            .read_to_end(&mut answer)
            .await
            .map_err(|e| failed(e.to_string()))?;
        let split = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| failed("the answer has no end of headers".to_string()))?;
        let head = String::from_utf8_lossy(&answer[..split]);
        let status = head.lines().next().unwrap_or_default();
        match status.split_whitespace().nth(1) {
            Some("200") => Ok(Some(answer[split + 4..].to_vec())),
            Some("404") => Ok(None),
            _ => Err(failed(format!("answered {status:?}"))),
        }
    }
}

/// Azurite's blob service: the development account, SharedKey.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzureSettings {
    /// The account's blob service URL, path-style: `http://127.0.0.1:<port>/devstoreaccount1`.
    pub blob_endpoint: String,
    /// `devstoreaccount1`.
    pub account: String,
    /// The account's published key.
    pub key: String,
    /// A container up.sh created; tests share it, so each uses its own key prefix.
    pub container: String,
}

impl AzureSettings {
    /// Reads `.testenv/azure.env`.
    pub fn load() -> Result<Self> {
        let get = settings(&paths::state_dir().join("azure.env"))?;
        Ok(Self {
            blob_endpoint: get("AZURE_STORAGE_BLOB_ENDPOINT")?,
            account: get("AZURE_STORAGE_ACCOUNT_NAME")?,
            key: get("AZURE_STORAGE_ACCOUNT_KEY")?,
            container: get("AZURE_STORAGE_CONTAINER")?,
        })
    }

    /// The environment that points an Azure Blob client (the bucket agent `celld-bucket`, the
    /// deploy double; `object_store`'s variable) at the emulator.
    pub fn client_env(&self) -> Vec<(&'static str, String)> {
        vec![("AZURE_STORAGE_ENDPOINT", self.blob_endpoint.clone())]
    }

    /// Writes `body` to the blob `key`.
    pub async fn put(&self, key: &str, body: &[u8]) -> Result<()> {
        let url = format!("{}/{}/{key}", self.blob_endpoint, self.container);
        let failed = |message: String| Error::Emulator {
            action: "writing",
            url: url.clone(),
            message,
        };
        let store = MicrosoftAzureBuilder::new()
            .with_account(&self.account)
            .with_access_key(&self.key)
            .with_container_name(&self.container)
            .with_endpoint(self.blob_endpoint.clone())
            .with_allow_http(true)
            .build()
            .map_err(|e| failed(e.to_string()))?;
        store
            .put(&key.into(), body.to_vec().into())
            .await
            .map(|_| ())
            .map_err(|e| failed(e.to_string()))
    }
}
