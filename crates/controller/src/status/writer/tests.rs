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

struct Tested<K: Reported> {
    writer: Writer<K>,
    written: Arc<Written<K>>,
    sent: double::Sent,
    metrics: Arc<Metrics>,
}

fn writer<K: Reported>(object: &impl serde::Serialize) -> Tested<K> {
    let (client, sent) = recording(serde_json::to_vec(object).unwrap());
    let written = Arc::new(Written::default());
    let metrics = Arc::new(Metrics::default());
    let reporter = Reporter {
        controller: "celld-operator".into(),
        instance: None,
    };
    Tested {
        writer: Writer::new(client, metrics.clone(), reporter, written.clone()),
        written,
        sent,
        metrics,
    }
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
    let Tested { writer, sent, .. } = writer::<CelldObjectStore>(&store);
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
    let Tested {
        writer,
        written,
        sent,
        metrics,
    } = writer::<CelldObjectStore>(&store);
    writer.failed(&store, &refused()).await;
    assert_eq!(
        taken(&sent),
        [STATUS, EVENT],
        "the status, then one Warning"
    );
    assert_eq!(
        degraded(written.newest(&store)),
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
    assert_eq!(degraded(written.newest(&store)), None);
}

#[tokio::test]
async fn a_fleets_failures_are_left_to_its_own_reconcile() {
    let fleet = crate::children::fixtures::fleet(crate::children::fixtures::MINIMAL);
    let Tested {
        writer,
        sent,
        metrics,
        ..
    } = writer::<CelldFleet>(&fleet);
    writer.failed(&fleet, &refused()).await;
    assert_eq!(taken(&sent), Vec::<String>::new());
    assert_eq!(metrics.failures(Reason::ApiError), 0);
}

#[tokio::test]
async fn every_status_written_is_recorded_for_the_reconciles_and_a_lock_outlives_no_object() {
    let store = store();
    let Tested {
        writer, written, ..
    } = writer::<CelldObjectStore>(&store);
    let notes = |_: Option<&CelldObjectStoreStatus>, _: &CelldObjectStoreStatus| Vec::new();
    writer
        .publish(&store, |_| ready("ok"), notes)
        .await
        .unwrap();
    assert_eq!(written.newest(&store), Some(ready("ok")));
    let held = writer.lock("u-1");
    writer.retain(&HashMap::new());
    assert!(Arc::ptr_eq(&held, &writer.lock("u-1")), "held: kept");
    drop(held);
    let before = writer.lock("u-1");
    drop(before);
    writer.retain(&HashMap::from([("u-1", "3")]));
    assert_eq!(lock(&writer.locks).len(), 1, "live: kept");
    writer.retain(&HashMap::new());
    assert_eq!(lock(&writer.locks).len(), 0, "gone and not held: forgotten");
}
