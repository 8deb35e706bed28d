//! A fleet's storage with its credentials Secret, resolved from the caches the way both the
//! fleet's reconcile and a preview's retirement need it.

use crate::buckets::credentials::SecretContents;
use crate::cache::caches::Caches;
use celld_api::{CelldFleet, CelldObjectStore, ResolveError, ResolvedStorage, resolve};
use k8s_openapi::api::core::v1::Secret;
use kube::{Api, Client};
use std::sync::Arc;

/// A fleet's resolved storage, its credentials Secret (none for workload identity) and the
/// store's resourceVersion.
pub struct Resolved {
    /// The storage.
    pub storage: ResolvedStorage,
    /// Its credentials Secret; None for workload identity.
    pub secret: Option<Arc<Secret>>,
    /// The resourceVersion of its CelldObjectStore, if it uses one.
    pub store_version: Option<String>,
}

/// The fleet's storage with its credentials Secret, or why it does not resolve. Reads the
/// caches; the API server only for a Secret whose contents changed since last read, and to
/// confirm that a store or Secret missing from the cache is really missing (a fleet created
/// together with them may be reconciled before their watch events arrive).
pub async fn resolve_storage(
    caches: &Caches,
    secrets: &SecretContents,
    client: &Client,
    ns: &str,
    fleet: &CelldFleet,
) -> Result<Resolved, ResolveError> {
    let api_error = |what: String| {
        move |source| ResolveError::Api {
            what,
            source: Box::new(source),
        }
    };
    let store = match &fleet.spec.store_ref {
        None => None,
        Some(r) => match caches.store(ns, &r.name) {
            Some(guard) => match &guard.0 {
                Ok(store) => Some(store.clone()),
                Err(invalid) => {
                    return Err(ResolveError::StoreInvalid {
                        name: r.name.clone(),
                        error: invalid.error.to_string(),
                    });
                }
            },
            None => Api::<CelldObjectStore>::namespaced(client.clone(), ns)
                .get_opt(&r.name)
                .await
                .map_err(api_error(format!("CelldObjectStore '{}'", r.name)))?,
        },
    };
    let storage = resolve::resolve(&fleet.spec, ns, store.as_ref())?;
    let secret = match &storage.credentials_secret {
        None => None,
        Some(name) => {
            let secret = secrets
                .named(client, ns, name)
                .await
                .map_err(api_error(format!("Secret '{name}'")))?;
            let schemes = [storage.bucket.scheme];
            resolve::check_secret(name, ns, secret.as_deref(), &schemes)?;
            Some(secret.ok_or_else(|| ResolveError::SecretNotFound {
                name: name.clone(),
                namespace: ns.to_string(),
                needs: resolve::needed_keys(&schemes),
            })?)
        }
    };
    Ok(Resolved {
        storage,
        secret,
        store_version: store.and_then(|s| s.metadata.resource_version),
    })
}
