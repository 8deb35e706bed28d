//! The writer against a recording API server double, for the kinds whose failures it says.

use super::*;
use crate::status::writer::double::{recording, taken};
use celld_api::conditions::{self, DEGRADED, READY};
use celld_api::{CelldFleet, CelldObjectStore, CelldObjectStoreStatus};
use k8s_openapi::jiff::Timestamp;

const STATUS: &str =
    "PATCH /apis/platform.celld.dev/v1alpha1/namespaces/apps/celldobjectstores/s3/status";
const EVENT: &str = "POST /apis/events.k8s.io/v1/namespaces/apps/events";

fn store() -> CelldObjectStore {
    let mut store: CelldObjectStore = serde_json::from_value(serde_json::json!({
        "apiVersion": "platform.celld.dev/v1alpha1",
        "kind": "CelldObjectStore",
        "metadata": {"name": "s3", "namespace": "apps", "uid": "u-1", "resourceVersion": "3", "generation": 1},
        "spec": {"endpoint": "http://127.0.0.1:9000"},
    }))
    .unwrap();
    store.status = None;
    store
}

fn writer<K: Reported>(object: &impl serde::Serialize) -> (Writer<K>, double::Sent, Arc<Metrics>) {
    let (client, sent) = recording(serde_json::to_vec(object).unwrap());
    let metrics = Arc::new(Metrics::default());
    let reporter = Reporter {
        controller: "celld-operator".into(),
        instance: None,
    };
    (
        Writer::new(client, metrics.clone(), reporter),
        sent,
        metrics,
    )
}

fn ready(message: &str) -> CelldObjectStoreStatus {
    let condition = conditions::make(
        &[],
        READY,
        Some(true),
        "SecretResolved",
        message,
        Some(1),
        Timestamp::UNIX_EPOCH,
    );
    CelldObjectStoreStatus {
        observed_generation: Some(1),
        conditions: vec![condition],
        ..CelldObjectStoreStatus::default()
    }
}

fn refused() -> Error {
    Error::kube(
        "reading Secret creds",
        kube::Error::Api(Box::new(
            kube::core::Status::failure("secrets \"creds\" is forbidden", "Forbidden")
                .with_code(403),
        )),
    )
}

fn degraded(status: Option<CelldObjectStoreStatus>) -> Option<(String, String)> {
    let status = status?;
    let c = conditions::find(&status.conditions, DEGRADED)?;
    Some((c.status.clone(), c.reason.clone()))
}

#[tokio::test]
async fn a_status_is_written_only_when_it_changes() {
    let store = store();
    let (writer, sent, _) = writer::<CelldObjectStore>(&store);
    let notes = |_: Option<&CelldObjectStoreStatus>, _: &CelldObjectStoreStatus| Vec::new();
    assert!(
        writer
            .publish(&store, |_| ready("ok"), notes)
            .await
            .unwrap()
    );
    assert_eq!(taken(&sent), [STATUS]);
    // The cache has not caught up with the write: the written status is compared with.
    assert!(
        !writer
            .publish(&store, |_| ready("ok"), notes)
            .await
            .unwrap()
    );
    assert_eq!(taken(&sent), Vec::<String>::new());
    assert!(
        writer
            .publish(&store, |_| ready("changed"), notes)
            .await
            .unwrap()
    );
    assert_eq!(taken(&sent), [STATUS]);
}

#[tokio::test]
async fn a_failed_reconcile_is_degraded_and_announced_once_then_cleared() {
    let store = store();
    let (writer, sent, metrics) = writer::<CelldObjectStore>(&store);
    writer.failed(&store, &refused()).await;
    assert_eq!(
        taken(&sent),
        [STATUS, EVENT],
        "the status, then one Warning"
    );
    assert_eq!(
        degraded(writer.latest(&store)),
        Some(("True".into(), "ApiError".into()))
    );
    assert_eq!(metrics.failures(Reason::ApiError), 1);

    // The retry fails the same way: counted again, nothing new to write or announce.
    writer.failed(&store, &refused()).await;
    assert_eq!(taken(&sent), Vec::<String>::new());
    assert_eq!(metrics.failures(Reason::ApiError), 2);

    // A reconcile that succeeds computes its status without the failure.
    let notes = |_: Option<&CelldObjectStoreStatus>, _: &CelldObjectStoreStatus| Vec::new();
    assert!(
        writer
            .publish(&store, |_| ready("ok"), notes)
            .await
            .unwrap()
    );
    assert_eq!(degraded(writer.latest(&store)), None);
}

#[tokio::test]
async fn a_fleets_failures_are_left_to_its_own_reconcile() {
    let fleet = crate::children::fixtures::fleet(crate::children::fixtures::MINIMAL);
    let (writer, sent, metrics) = writer::<CelldFleet>(&fleet);
    writer.failed(&fleet, &refused()).await;
    assert_eq!(taken(&sent), Vec::<String>::new());
    assert_eq!(metrics.failures(Reason::ApiError), 0);
}

#[tokio::test]
async fn a_written_status_is_forgotten_once_the_cache_catches_up_or_the_object_is_gone() {
    let store = store();
    let (writer, _, _) = writer::<CelldObjectStore>(&store);
    let notes = |_: Option<&CelldObjectStoreStatus>, _: &CelldObjectStoreStatus| Vec::new();
    writer
        .publish(&store, |_| ready("ok"), notes)
        .await
        .unwrap();
    writer.retain(&HashMap::from([("u-1", "3")]));
    assert!(writer.latest(&store).is_some(), "the cache is still at 3");
    writer.retain(&HashMap::from([("u-1", "4")]));
    assert_eq!(
        writer.latest(&store),
        None,
        "the cache caught up: the store's own"
    );
    writer
        .publish(&store, |_| ready("ok"), notes)
        .await
        .unwrap();
    writer.retain(&HashMap::new());
    assert_eq!(writer.latest(&store), None, "gone");

    // From the kind's cache, as each round of housekeeping does.
    writer
        .publish(&store, |_| ready("ok"), notes)
        .await
        .unwrap();
    let cached = vec![Arc::new(DeserializeGuard(Ok(store.clone())))];
    writer.retain_cached(&cached);
    assert!(writer.latest(&store).is_some(), "still cached at 3");
    writer.retain_cached(&[]);
    assert_eq!(writer.latest(&store), None, "deleted: forgotten");
}
