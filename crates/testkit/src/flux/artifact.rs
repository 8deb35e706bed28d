//! What source-controller publishes of a source (`status.artifact`): downloaded from its
//! loopback artifact server, and unpacked.

use std::collections::BTreeMap;
use std::io::Read;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::settings::TOOL_TIMEOUT;
use crate::error::{Error, Result};

/// What source-controller published of a source (`status.artifact`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FluxArtifact {
    /// `http://127.0.0.1:<port>/<kind>/<namespace>/<name>/<file>.tar.gz`, served by
    /// source-controller's artifact server.
    pub url: String,
    /// `sha256:<hex>` of the file at `url`.
    pub digest: String,
    /// What it was made from: `sha256:<hex>` of the bucket's listing for a `Bucket`,
    /// `<tag>@sha256:<manifest digest>` for an `OCIRepository`.
    pub revision: String,
    /// The file's size in bytes, when source-controller gave it.
    pub size: Option<u64>,
}

impl FluxArtifact {
    /// Downloads the artifact (a tar.gz) from source-controller's artifact server, as a client
    /// of a Flux source does. Only plain-HTTP loopback URLs are fetched.
    pub async fn download(&self) -> Result<Vec<u8>> {
        let failed = |message: String| Error::Http {
            url: self.url.clone(),
            message,
        };
        let rest = self
            .url
            .strip_prefix("http://")
            .ok_or_else(|| failed("not a plain-HTTP URL".to_owned()))?;
        let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if !(host.starts_with("127.") || host.starts_with("localhost:")) {
            return Err(failed(format!("{host} is not a loopback address")));
        }
        let path = if path.is_empty() { "/" } else { path };
        let fetch = async {
            let mut stream = tokio::net::TcpStream::connect(host).await?;
            // HTTP/1.0: the body is not chunked and ends with the connection.
            stream
                .write_all(format!("GET {path} HTTP/1.0\r\nHost: {host}\r\n\r\n").as_bytes())
                .await?;
            let mut answer = Vec::new();
            stream.read_to_end(&mut answer).await?;
            Ok::<_, std::io::Error>(answer)
        };
        let answer = tokio::time::timeout(TOOL_TIMEOUT, fetch)
            .await
            .map_err(|_| failed(format!("no answer within {TOOL_TIMEOUT:?}")))?
            .map_err(|e| failed(e.to_string()))?;
        let split = answer
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .ok_or_else(|| failed("the answer has no end of headers".to_owned()))?;
        let head = String::from_utf8_lossy(&answer[..split]);
        let body = answer[split + 4..].to_vec();
        let status = head.lines().next().unwrap_or_default();
        if status.split_whitespace().nth(1) != Some("200") {
            return Err(failed(format!(
                "answered {status:?}: {}",
                String::from_utf8_lossy(&body).trim()
            )));
        }
        let length = head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| value.trim().parse::<usize>().ok())?
        });
        match length {
            Some(length) if length != body.len() => Err(failed(format!(
                "Content-Length is {length} but {} bytes came",
                body.len()
            ))),
            _ => Ok(body),
        }
    }
}

/// The regular files of a tar.gz (a Flux artifact), by path (without a leading `./`).
/// Directories are left out; links and other entries are refused.
pub fn unpack_tar_gz(bytes: &[u8]) -> Result<BTreeMap<String, Vec<u8>>> {
    let invalid = |reason: String| Error::Invalid {
        what: "tar.gz archive",
        value: reason,
        reason: "cannot be unpacked",
    };
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(bytes));
    let mut files = BTreeMap::new();
    for entry in archive.entries().map_err(|e| invalid(e.to_string()))? {
        let mut entry = entry.map_err(|e| invalid(e.to_string()))?;
        let path = entry
            .path()
            .map_err(|e| invalid(e.to_string()))?
            .to_string_lossy()
            .trim_start_matches("./")
            .to_owned();
        match entry.header().entry_type() {
            tar::EntryType::Directory => continue,
            tar::EntryType::Regular => {}
            other => return Err(invalid(format!("{path} is a {other:?} entry"))),
        }
        let mut content = Vec::new();
        entry
            .read_to_end(&mut content)
            .map_err(|e| invalid(format!("{path}: {e}")))?;
        files.insert(path, content);
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn only_loopback_http_urls_are_downloaded() {
        for url in [
            "https://127.0.0.1:1/a.tar.gz",
            "http://example.com/a.tar.gz",
        ] {
            let artifact = FluxArtifact {
                url: url.to_owned(),
                digest: String::new(),
                revision: String::new(),
                size: None,
            };
            let error = artifact.download().await.expect_err(url).to_string();
            assert!(error.contains(url), "{error}");
        }
    }
}
