//! Reading and writing the fleet's bucket prefix through its deploy pod: each request is one
//! `curl` over `pods/exec`.

use super::error::{BucketFailure, LostRace};
use super::listing::{self, Listed};
use super::request::{self, Answer, Response};
use crate::error::{Error, Result};
use crate::exec::{self, Sink, Spec};
use crate::fleet_context::FleetContext;
use crate::work_pod::WorkPod;
use celld_api::ResolvedStorage;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

/// What a compare-and-swap write expects to find.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// No object: the write sends `If-None-Match: *`.
    Absent,
    /// The object with this ETag: the write sends `If-Match`.
    ETag(String),
}

impl std::fmt::Display for Expect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Expect::Absent => f.write_str("that it did not exist"),
            Expect::ETag(etag) => write!(f, "ETag {etag}"),
        }
    }
}

/// An object as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Its bytes.
    pub body: Vec<u8>,
    /// What a compare-and-swap overwrite of it expects.
    pub expect: Expect,
    /// Its `Last-Modified` header.
    pub last_modified: Option<String>,
}

/// The fleet's bucket prefix, reached from a deploy pod.
pub struct BucketClient {
    pods: Api<Pod>,
    pod: String,
    container: String,
    storage: ResolvedStorage,
    fleet: String,
    namespace: String,
}

/// Most keys one listing page returns (S3's own maximum).
const PAGE: &str = "1000";

impl BucketClient {
    /// A client of `context`'s bucket that runs its requests in `pod`.
    pub fn new(context: &FleetContext, pod: &WorkPod) -> Self {
        BucketClient {
            pods: pod.pods.clone(),
            pod: pod.pod.clone(),
            container: pod.container().to_string(),
            storage: context.storage.clone(),
            fleet: context.name().to_string(),
            namespace: context.namespace().to_string(),
        }
    }

    /// `s3://bucket/prefix`, for messages.
    pub fn bucket(&self) -> String {
        self.storage.bucket.to_string()
    }

    fn failed(&self, action: &'static str, rel: &str, detail: String) -> Error {
        Error::Bucket(Box::new(BucketFailure {
            action,
            key: rel.to_string(),
            bucket: self.bucket(),
            fleet: self.fleet.clone(),
            namespace: self.namespace.clone(),
            detail,
        }))
    }

    async fn send(
        &self,
        action: &'static str,
        rel: &str,
        method: &str,
        url: &str,
        body: &str,
        headers: &[String],
    ) -> Result<Response> {
        let done = exec::run(
            &self.pods,
            &self.pod,
            Spec {
                command: request::command(method, url, &self.storage.region, body, headers),
                container: self.container.clone(),
                stdout: Sink::Capture,
                stderr: Sink::Capture,
                stdin: None,
            },
        )
        .await?;
        match request::parse(&done.stdout, &done.stderr) {
            Answer::Http(response) => Ok(response),
            Answer::Failed(rc, why) => Err(self.failed(
                action,
                rel,
                format!(
                    "curl in pod {} could not reach the bucket (exit code {rc}): {why}",
                    self.pod
                ),
            )),
        }
    }

    fn http_error(&self, action: &'static str, rel: &str, response: &Response) -> Error {
        let hint = match response.status {
            401 | 403 => {
                "; the credentials Secret's keys are refused: check them and the bucket's policy"
            }
            404 => "; the bucket does not exist at this endpoint",
            _ => "",
        };
        self.failed(
            action,
            rel,
            format!("HTTP {} {}{hint}", response.status, response.error_text()),
        )
    }

    /// Reads `rel` (a key under the fleet's prefix); None when it does not exist.
    pub async fn get(&self, rel: &str) -> Result<Option<Object>> {
        let url = request::url(&self.storage, &self.storage.bucket.key(rel), &[]);
        let response = self.send("reading", rel, "GET", &url, "", &[]).await?;
        match response.status {
            200 => {
                let expect = match response.etag.clone() {
                    Some(etag) if !etag.is_empty() => Expect::ETag(etag),
                    _ => {
                        return Err(self.failed(
                            "reading",
                            rel,
                            "the server sent no ETag, so no compare-and-swap write is possible"
                                .into(),
                        ));
                    }
                };
                Ok(Some(Object {
                    body: response.body,
                    expect,
                    last_modified: response.last_modified,
                }))
            }
            404 if response.error_text().contains("NoSuchBucket") => {
                Err(self.http_error("reading", rel, &response))
            }
            404 => Ok(None),
            _ => Err(self.http_error("reading", rel, &response)),
        }
    }

    /// Every object under `rel_prefix` (keys returned relative to the fleet's prefix).
    pub async fn list(&self, rel_prefix: &str) -> Result<Vec<Listed>> {
        let full_prefix = self.storage.bucket.key(rel_prefix);
        let strip = self.storage.bucket.key("");
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let mut query = vec![
                ("list-type", "2"),
                ("prefix", full_prefix.as_str()),
                ("max-keys", PAGE),
            ];
            if let Some(t) = &token {
                query.push(("continuation-token", t.as_str()));
            }
            let url = request::url(&self.storage, "", &query);
            let response = self
                .send("listing", rel_prefix, "GET", &url, "", &[])
                .await?;
            if response.status != 200 {
                return Err(self.http_error("listing", rel_prefix, &response));
            }
            let page = listing::parse(&String::from_utf8_lossy(&response.body));
            out.extend(page.objects.into_iter().map(|mut o| {
                if let Some(rel) = o.key.strip_prefix(&strip) {
                    o.key = rel.to_string();
                }
                o
            }));
            match page.next {
                Some(next) => token = Some(next),
                None => return Ok(out),
            }
        }
    }

    /// Writes `body` to `rel` only if it is still as `expect` says (`If-Match` on its ETag, or
    /// `If-None-Match: *`). A lost race is [`Error::LostRace`].
    pub async fn put_if(&self, rel: &str, body: &[u8], expect: &Expect) -> Result<()> {
        let url = request::url(&self.storage, &self.storage.bucket.key(rel), &[]);
        let header = match expect {
            Expect::Absent => "If-None-Match: *".to_string(),
            Expect::ETag(etag) => format!("If-Match: {etag}"),
        };
        let text = String::from_utf8_lossy(body);
        let response = self
            .send("writing", rel, "PUT", &url, &text, &[header])
            .await?;
        let code = response.error_text();
        let lost = || {
            Error::LostRace(Box::new(LostRace {
                key: rel.to_string(),
                bucket: self.bucket(),
                expected: expect.to_string(),
                fleet: self.fleet.clone(),
                namespace: self.namespace.clone(),
            }))
        };
        match response.status {
            200 => Ok(()),
            // 412: the precondition failed; 409: a concurrent conditional write won (AWS).
            412 | 409 => Err(lost()),
            _ if code.starts_with("PreconditionFailed")
                || code.starts_with("ConditionalRequestConflict") =>
            {
                Err(lost())
            }
            _ => Err(self.http_error("writing", rel, &response)),
        }
    }
}
