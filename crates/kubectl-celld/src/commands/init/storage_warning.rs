//! After `init --apply`: a warning (on stderr; the apply itself succeeded) when the fleet's
//! CelldObjectStore or credentials Secret does not exist yet, with the command that creates it.

use crate::cluster::kubeconfig::Target;
use celld_api::{CelldFleet, ResolveError};
use k8s_openapi::api::core::v1::Secret;
use kube::Api;

/// The warning for storage that does not resolve, when the fix is to create something.
pub fn text(err: &ResolveError) -> Option<String> {
    match err {
        ResolveError::StoreNotFound { name, namespace } => Some(format!(
            "warning: CelldObjectStore '{name}' does not exist in namespace '{namespace}': the fleet stays at 0 nodes until it does; create it (apiVersion platform.celld.dev/v1alpha1, kind CelldObjectStore, metadata.name {name}, spec.credentialsSecretRef.name) with: kubectl -n {namespace} apply --server-side -f STORE.yaml"
        )),
        ResolveError::SecretNotFound {
            name, namespace, ..
        } => Some(format!(
            "warning: Secret '{name}' with the object-storage credentials does not exist in namespace '{namespace}': the fleet cannot read its bucket until it does; create it with: kubectl -n {namespace} create secret generic {name} --from-literal=AWS_ACCESS_KEY_ID=... --from-literal=AWS_SECRET_ACCESS_KEY=..."
        )),
        _ => None,
    }
}

/// Checks the applied fleet's store and Secret; returns the warnings to print. Reads only the
/// Secret's metadata, never its values; what may not be read is not warned about.
pub async fn check(target: &Target, fleet: &CelldFleet) -> Vec<String> {
    let ns = target.namespace.as_str();
    match celld_api::resolve::fetch(&target.client, ns, &fleet.spec).await {
        Err(e) => text(&e).into_iter().collect(),
        Ok(resolved) => {
            let secrets: Api<Secret> = Api::namespaced(target.client.clone(), ns);
            let Some(secret) = resolved.credentials_secret else {
                return Vec::new();
            };
            match secrets.get_metadata_opt(&secret).await {
                Ok(None) => text(&ResolveError::SecretNotFound {
                    needs: celld_api::resolve::needed_keys(&[resolved.bucket.scheme]),
                    name: secret,
                    namespace: ns.to_string(),
                })
                .into_iter()
                .collect(),
                _ => Vec::new(),
            }
        }
    }
}
