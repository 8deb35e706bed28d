//! The operator's own identity, for a bucket whose fleet names no credentials Secret: the
//! default credential chain of `object_store`'s client for the store (keys in the operator's
//! environment, a web or workload identity token file, the cloud's metadata service), wrapped
//! so that finding no credential at all is told apart from every other failure of a read.

use async_trait::async_trait;
use object_store::CredentialProvider;
use std::fmt::Debug;
use std::sync::Arc;

/// The default chain gave no credential; the message is its error.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct NoCredential(pub String);

/// A credential provider whose failures are [`NoCredential`].
#[derive(Debug)]
pub struct Ambient<T> {
    inner: Arc<dyn CredentialProvider<Credential = T>>,
}

impl<T> Ambient<T> {
    /// Wraps the default chain `inner`.
    pub fn new(inner: Arc<dyn CredentialProvider<Credential = T>>) -> Self {
        Self { inner }
    }
}

#[async_trait]
impl<T: Debug + Send + Sync> CredentialProvider for Ambient<T> {
    type Credential = T;

    async fn get_credential(&self) -> object_store::Result<Arc<T>> {
        self.inner
            .get_credential()
            .await
            .map_err(|e| object_store::Error::Generic {
                store: "operator identity",
                source: Box::new(NoCredential(e.to_string())),
            })
    }
}

/// The [`NoCredential`] a read failed with, if that is why it failed.
pub fn no_credential(error: &object_store::Error) -> Option<&NoCredential> {
    match error {
        object_store::Error::Generic { source, .. } => source.downcast_ref::<NoCredential>(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Failing;

    #[async_trait]
    impl CredentialProvider for Failing {
        type Credential = String;
        async fn get_credential(&self) -> object_store::Result<Arc<String>> {
            Err(object_store::Error::Generic {
                store: "GCS",
                source: "metadata server unreachable".into(),
            })
        }
    }

    #[tokio::test]
    async fn a_failing_chain_is_told_apart_from_other_errors() {
        let error = Ambient::new(Arc::new(Failing))
            .get_credential()
            .await
            .unwrap_err();
        let found = no_credential(&error).map(|n| n.0.clone());
        assert_eq!(
            found.as_deref(),
            Some("Generic GCS error: metadata server unreachable")
        );
        let other = object_store::Error::Generic {
            store: "GCS",
            source: "connection reset".into(),
        };
        assert!(no_credential(&other).is_none());
    }
}
