//! CelldObjectStore status: whether its credentials Secret resolves (a store without one, for
//! workload identity, is ready as it is), and which fleets use it.

use crate::error::Error;
use crate::shared::resync_grid;
use crate::shared::retry;
use crate::store::context::Context;
use celld_api::conditions::{self, READY};
use celld_api::{CelldFleet, CelldObjectStore, CelldObjectStoreStatus, resolve};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kube::core::DeserializeGuard;
use kube::runtime::controller::Action;
use kube::runtime::reflector::Store;
use std::sync::Arc;

/// Names of the fleets in `ns` whose storeRef names `store`, sorted.
pub fn fleets_using(
    fleets: &Store<DeserializeGuard<CelldFleet>>,
    ns: &str,
    store: &str,
) -> Vec<String> {
    let mut names: Vec<String> = fleets
        .state()
        .iter()
        .filter_map(|g| g.0.as_ref().ok())
        .filter(|f| f.namespace().as_deref() == Some(ns))
        .filter(|f| f.spec.store_ref.as_ref().is_some_and(|r| r.name == store))
        .map(|f| f.name_any())
        .collect();
    names.sort();
    names
}

/// The status of a store, from whether its Secret resolved (with the keys it was checked for;
/// None without a Secret) and the fleets that use it. Pure.
pub fn compute(
    previous: Option<&CelldObjectStoreStatus>,
    generation: Option<i64>,
    secret: Result<Option<String>, (&'static str, String)>,
    fleets: Vec<String>,
    now: Timestamp,
) -> CelldObjectStoreStatus {
    let prev: &[Condition] = previous.map_or(&[], |p| p.conditions.as_slice());
    let ready = match secret {
        Ok(Some(keys)) => conditions::make(
            prev,
            READY,
            Some(true),
            "SecretResolved",
            format!("the credentials Secret exists with {keys}"),
            generation,
            now,
        ),
        Ok(None) => conditions::make(
            prev,
            READY,
            Some(true),
            "WorkloadIdentity",
            "no credentials Secret: the nodes of the fleets using this store get no keys and use the cloud identity of their ServiceAccount",
            generation,
            now,
        ),
        Err((reason, message)) => {
            conditions::make(prev, READY, Some(false), reason, message, generation, now)
        }
    };
    CelldObjectStoreStatus {
        observed_generation: generation,
        fleet_count: i32::try_from(fleets.len()).unwrap_or(i32::MAX),
        fleets,
        conditions: vec![ready],
    }
}

/// Reconciles one store's status.
pub async fn reconcile(
    guard: Arc<DeserializeGuard<CelldObjectStore>>,
    ctx: Arc<Context>,
) -> Result<Action, Error> {
    let Some(store) = retry::parsed(&guard) else {
        return Ok(Action::await_change());
    };
    let result = reconcile_store(store, &ctx).await;
    retry::settle(&ctx.shared, &ctx.status, store, &result).await;
    result
}

/// Checks `store`'s Secret, lists the fleets that use it and publishes its status.
async fn reconcile_store(store: &CelldObjectStore, ctx: &Context) -> Result<Action, Error> {
    let ns = store
        .namespace()
        .ok_or(Error::Unnamed("CelldObjectStore"))?;
    let name = store.name_any();
    let shared = &ctx.shared;
    shared.caches.ready().await?;
    let checked = match &store.spec.credentials_secret_ref {
        None => Ok(None),
        Some(secret_ref) => {
            let secret_name = &secret_ref.name;
            let secret = shared
                .secrets
                .named(&shared.client, &ns, secret_name)
                .await
                .map_err(|e| Error::kube(format!("reading Secret {secret_name}"), e))?;
            let schemes = resolve::store_schemes(&store.spec);
            resolve::check_secret(secret_name, &ns, secret.as_deref(), schemes)
                .map(|scheme| Some(resolve::needed_keys(&[scheme])))
                .map_err(|e| (e.reason(), e.to_string()))
        }
    };
    let fleets = fleets_using(&shared.caches.fleets, &ns, &name);
    ctx.status
        .publish(
            store,
            |previous| {
                compute(
                    previous,
                    store.metadata.generation,
                    checked,
                    fleets,
                    Timestamp::now(),
                )
            },
            |_, _| Vec::new(),
        )
        .await?;
    Ok(Action::requeue(resync_grid::aligned(
        shared.settings.resync,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_fleets_and_reports_the_secret() {
        let ok = compute(
            None,
            Some(1),
            Ok(Some(
                "keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (S3)".into(),
            )),
            vec!["a".into(), "b".into()],
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(ok.fleet_count, 2);
        assert_eq!(ok.conditions[0].status, "True");
        let bad = compute(
            Some(&ok),
            Some(2),
            Err(("SecretNotFound", "Secret 'x' does not exist".into())),
            vec![],
            Timestamp::UNIX_EPOCH,
        );
        assert_eq!(
            (
                bad.conditions[0].status.as_str(),
                bad.conditions[0].reason.as_str()
            ),
            ("False", "SecretNotFound")
        );
        assert_eq!(bad.fleet_count, 0);
    }

    #[test]
    fn unchanged_inputs_give_the_same_status() {
        let first = compute(
            None,
            Some(1),
            Ok(Some(
                "keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (S3)".into(),
            )),
            vec!["a".into()],
            Timestamp::UNIX_EPOCH,
        );
        let again = compute(
            Some(&first),
            Some(1),
            Ok(Some(
                "keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (S3)".into(),
            )),
            vec!["a".into()],
            Timestamp::from_second(99).unwrap(),
        );
        assert_eq!(first, again);
    }
}
