//! Reading and writing the fleet's bucket prefix through its deploy pod: each request is one
//! run of `celld-bucket` (the deployer image's bucket agent) over `pods/exec`, which reaches the
//! bucket with the pod's credentials and prints one JSON answer.

use crate::cluster::exec::{self, Sink, Spec};
use crate::cluster::fleet_context::FleetContext;
use crate::error::bucket::{BucketFailure, LostRace};
use crate::error::{Error, Result};
use crate::pod::job::CONTAINER;
use crate::pod::work_pod::WorkPod;
use celld_bucket::wire::{Answer, Listed};
use k8s_openapi::api::core::v1::Pod;
use kube::Api;

pub use celld_bucket::wire::Expect;

/// The bucket agent's command name in the deploy pod.
pub const AGENT: &str = "celld-bucket";

/// An object as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    /// Its bytes.
    pub body: Vec<u8>,
    /// What a compare-and-swap overwrite of it expects.
    pub expect: Expect,
}

/// The fleet's bucket prefix, reached from a deploy pod.
pub struct BucketClient {
    pods: Api<Pod>,
    pod: String,
    container: String,
    bucket: String,
    fleet: String,
    namespace: String,
}

impl BucketClient {
    /// A client of `context`'s bucket that runs its requests in `pod`.
    pub fn new(context: &FleetContext, pod: &WorkPod) -> Self {
        Self::in_pod(context, &pod.pods, &pod.pod)
    }

    /// A client of `context`'s bucket that runs its requests in the deploy pod `pod` (of the
    /// pods `pods`), such as the pod a deploy just published from.
    pub fn in_pod(context: &FleetContext, pods: &Api<Pod>, pod: &str) -> Self {
        BucketClient {
            pods: pods.clone(),
            pod: pod.to_string(),
            container: CONTAINER.to_string(),
            bucket: context.storage.bucket.to_string(),
            fleet: context.name().to_string(),
            namespace: context.namespace().to_string(),
        }
    }

    /// `s3://bucket/prefix` (or `gs://`, `az://`), for messages.
    pub fn bucket(&self) -> String {
        self.bucket.clone()
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

    /// Runs `celld-bucket ARGS` in the pod; its answer, or an error for a failed run.
    async fn send(&self, action: &'static str, rel: &str, args: Vec<String>) -> Result<Answer> {
        let mut command = vec![AGENT.to_string()];
        command.extend(args);
        let done = exec::run(
            &self.pods,
            &self.pod,
            Spec {
                command,
                container: self.container.clone(),
                stdout: Sink::Capture,
                stderr: Sink::Capture,
                stdin: None,
            },
        )
        .await?;
        let stdout = String::from_utf8_lossy(&done.stdout);
        let line = stdout.lines().rev().find(|l| !l.trim().is_empty());
        match line.map(serde_json::from_str::<Answer>) {
            Some(Ok(Answer::Failed { error })) => Err(self.failed(action, rel, error)),
            Some(Ok(answer)) => Ok(answer),
            _ => {
                let stderr = String::from_utf8_lossy(&done.stderr);
                Err(self.failed(
                    action,
                    rel,
                    format!(
                        "{AGENT} in pod {} gave no answer (exit code {}): {}",
                        self.pod,
                        done.code,
                        stderr.trim()
                    ),
                ))
            }
        }
    }

    fn unexpected(&self, action: &'static str, rel: &str, answer: &Answer) -> Error {
        self.failed(
            action,
            rel,
            format!("{AGENT} answered {}", answer.to_line()),
        )
    }

    /// Reads `rel` (a key under the fleet's prefix); None when it does not exist.
    pub async fn get(&self, rel: &str) -> Result<Option<Object>> {
        match self
            .send("reading", rel, vec!["get".into(), rel.into()])
            .await?
        {
            Answer::Object { body, version, .. } => Ok(Some(Object {
                body: body.into_bytes(),
                expect: Expect::Version(version),
            })),
            Answer::Missing => Ok(None),
            other => Err(self.unexpected("reading", rel, &other)),
        }
    }

    /// Every object under `rel_prefix` (keys relative to the fleet's prefix).
    pub async fn list(&self, rel_prefix: &str) -> Result<Vec<Listed>> {
        match self
            .send(
                "listing",
                rel_prefix,
                vec!["list".into(), rel_prefix.into()],
            )
            .await?
        {
            Answer::Listing { objects } => Ok(objects),
            other => Err(self.unexpected("listing", rel_prefix, &other)),
        }
    }

    /// Writes `body` to `rel` only if it is still as `expect` says (`If-Match` on its ETag,
    /// GCS's generation match, or create-only). A lost race is [`Error::LostRace`].
    pub async fn put_if(&self, rel: &str, body: &[u8], expect: &Expect) -> Result<()> {
        let mut args = vec![
            "put".to_string(),
            rel.to_string(),
            String::from_utf8_lossy(body).into_owned(),
        ];
        args.extend(expect.flags());
        match self.send("writing", rel, args).await? {
            Answer::Written => Ok(()),
            Answer::Changed => Err(Error::LostRace(Box::new(LostRace {
                key: rel.to_string(),
                bucket: self.bucket(),
                expected: expect.to_string(),
                fleet: self.fleet.clone(),
                namespace: self.namespace.clone(),
            }))),
            other => Err(self.unexpected("writing", rel, &other)),
        }
    }
}
