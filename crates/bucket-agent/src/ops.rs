//! The three operations `kubectl celld` needs: read an object with its version, list a prefix,
//! and write an object with compare-and-swap. Keys are relative to the bucket prefix.

use crate::error::AgentError;
use crate::gcs_upload::Uploaded;
use crate::location::Cloud;
use crate::store::Bucket;
use crate::wire::{Answer, Expect, Listed, Version};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{Attribute, Attributes, ObjectStoreExt, PutMode, PutOptions, UpdateVersion};

impl Bucket {
    fn failed(&self, action: &'static str, key: &str, e: &object_store::Error) -> AgentError {
        let hint = match e {
            object_store::Error::Unauthenticated { .. }
            | object_store::Error::PermissionDenied { .. } => {
                "; the store refuses the credentials: check the credentials Secret's keys, or the cloud identity of the fleet's ServiceAccount, and the bucket's policy"
            }
            _ => "",
        };
        AgentError::Request {
            action,
            key: key.to_string(),
            bucket: self.url.clone(),
            message: format!("{e}{hint}"),
        }
    }

    /// Reads `rel`: its body and version, or [`Answer::Missing`].
    pub async fn get(&self, rel: &str) -> Result<Answer, AgentError> {
        let key = self.location.key(rel);
        let result = match self.store.get(&Path::from(key.as_str())).await {
            Ok(r) => r,
            Err(object_store::Error::NotFound { .. }) => return Ok(Answer::Missing),
            Err(e) => return Err(self.failed("reading", &key, &e)),
        };
        let meta = result.meta.clone();
        let body = result
            .bytes()
            .await
            .map_err(|e| self.failed("reading", &key, &e))?;
        let version = match self.location.scheme {
            Cloud::Gcs => meta.version.map(Version::Generation),
            Cloud::S3 | Cloud::Azure => meta.e_tag.map(Version::ETag),
        };
        let Some(version) = version else {
            return Err(AgentError::Request {
                action: "reading",
                key,
                bucket: self.url.clone(),
                message:
                    "the store sent no ETag or generation, so no compare-and-swap write is possible"
                        .into(),
            });
        };
        Ok(Answer::Object {
            body: String::from_utf8_lossy(&body).into_owned(),
            version,
            last_modified: meta.last_modified.to_rfc3339(),
        })
    }

    /// Every object under `rel_prefix` (a directory such as `deploy/`).
    pub async fn list(&self, rel_prefix: &str) -> Result<Answer, AgentError> {
        let full = self.location.key(rel_prefix);
        let prefix = Path::from(full.as_str());
        let metas: Vec<_> = self
            .store
            .list(Some(&prefix))
            .try_collect()
            .await
            .map_err(|e| self.failed("listing", &full, &e))?;
        let objects = metas
            .into_iter()
            .filter_map(|m| {
                let key =
                    crate::location::relative(&self.location, m.location.as_ref())?.to_string();
                Some(Listed {
                    key,
                    size: m.size,
                    last_modified: m.last_modified.to_rfc3339(),
                })
            })
            .collect();
        Ok(Answer::Listing { objects })
    }

    /// Writes `body` (JSON) to `rel` only if it is as `expect` says: [`Answer::Written`], or
    /// [`Answer::Changed`] when another writer got there first.
    pub async fn put_if(
        &self,
        rel: &str,
        body: Vec<u8>,
        expect: &Expect,
    ) -> Result<Answer, AgentError> {
        let key = self.location.key(rel);
        if let Some(gcs) = &self.gcs {
            let generation = match expect {
                Expect::Absent => "0".to_string(),
                Expect::Version(Version::Generation(g)) => g.clone(),
                Expect::Version(Version::ETag(_)) => {
                    return Err(self.wrong_version(
                        &key,
                        "a GCS write expects a generation (--if-generation), not an ETag",
                    ));
                }
            };
            return match gcs
                .put_if(&key, body, "application/json", Some(&generation))
                .await
            {
                Ok(Uploaded::Written) => Ok(Answer::Written),
                Ok(Uploaded::Changed) => Ok(Answer::Changed),
                Err(message) => Err(AgentError::Request {
                    action: "writing",
                    key,
                    bucket: self.url.clone(),
                    message,
                }),
            };
        }
        let mode = match expect {
            Expect::Absent => PutMode::Create,
            Expect::Version(Version::ETag(etag)) => PutMode::Update(UpdateVersion {
                e_tag: Some(etag.clone()),
                version: None,
            }),
            Expect::Version(Version::Generation(_)) => {
                return Err(self.wrong_version(
                    &key,
                    "an S3 or Azure write expects an ETag (--if-etag), not a generation",
                ));
            }
        };
        let mut attributes = Attributes::new();
        attributes.insert(Attribute::ContentType, "application/json".into());
        let options = PutOptions {
            mode,
            attributes,
            ..PutOptions::default()
        };
        match self
            .store
            .put_opts(&Path::from(key.as_str()), body.into(), options)
            .await
        {
            Ok(_) => Ok(Answer::Written),
            // 412 (a stale If-Match), or 409 (Azure's answer to a create over an existing blob,
            // and AWS's to a concurrent conditional write).
            Err(
                object_store::Error::Precondition { .. }
                | object_store::Error::AlreadyExists { .. },
            ) => Ok(Answer::Changed),
            Err(e) => Err(self.failed("writing", &key, &e)),
        }
    }

    /// Writes `body` of `content_type` to `rel` whatever is there (a version's modules, which
    /// no one else writes).
    pub async fn put(
        &self,
        rel: &str,
        body: Vec<u8>,
        content_type: &str,
    ) -> Result<(), AgentError> {
        let key = self.location.key(rel);
        if let Some(gcs) = &self.gcs {
            return gcs
                .put_if(&key, body, content_type, None)
                .await
                .map(|_| ())
                .map_err(|message| AgentError::Request {
                    action: "writing",
                    key,
                    bucket: self.url.clone(),
                    message,
                });
        }
        let mut attributes = Attributes::new();
        attributes.insert(Attribute::ContentType, content_type.to_string().into());
        let options = PutOptions {
            attributes,
            ..PutOptions::default()
        };
        self.store
            .put_opts(&Path::from(key.as_str()), body.into(), options)
            .await
            .map(|_| ())
            .map_err(|e| self.failed("writing", &key, &e))
    }

    fn wrong_version(&self, key: &str, message: &str) -> AgentError {
        AgentError::Request {
            action: "writing",
            key: key.to_string(),
            bucket: self.url.clone(),
            message: message.to_string(),
        }
    }
}
