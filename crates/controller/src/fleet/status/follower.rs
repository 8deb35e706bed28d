//! Ready within seconds, however long the reconcile queue: a fleet's Ready condition follows its
//! StatefulSet's status as soon as the StatefulSet's watch reports it, without waiting for the
//! fleet's turn in the reconcile queue (which, when a thousand fleets are created together, is
//! behind the first pass over all of them).
//!
//! Each StatefulSet change is handed to the [writer](FleetWriter::follow), which recomputes the
//! status from the fleet's last observation and writes it when the Ready condition changes,
//! after the [starts of new fleets](ServiceLead::seen), which time their pods by it.

use crate::cache::compact::Compact;
use crate::cache::streams::Items;
use crate::fleet::service_lead::ServiceLead;
use crate::fleet::status::write::FleetWriter;
use celld_api::CelldFleet;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::StatefulSet;
use kube::ResourceExt;
use kube::core::DeserializeGuard;
use kube::runtime::reflector::{ObjectRef, Store};
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

/// StatefulSet changes handled at once.
const CONCURRENCY: usize = 16;

/// Hands `statefulset` to the writer with the fleet of the same name, if there is one.
async fn follow_one(
    writer: &FleetWriter,
    lead: &ServiceLead,
    fleets: &Store<DeserializeGuard<CelldFleet>>,
    statefulset: StatefulSet,
) {
    let Some(ns) = statefulset.namespace() else {
        return;
    };
    let Some(guard) = fleets.get(&ObjectRef::new(&statefulset.name_any()).within(&ns)) else {
        return;
    };
    if let Ok(fleet) = &guard.0 {
        lead.seen(
            &fleet.uid().unwrap_or_default(),
            &statefulset,
            Instant::now(),
        );
        writer.follow(fleet, statefulset).await;
    }
}

/// Follows every StatefulSet change in `statefulsets` until `shutdown` resolves.
pub async fn run(
    writer: Arc<FleetWriter>,
    lead: Arc<ServiceLead>,
    fleets: Store<DeserializeGuard<CelldFleet>>,
    statefulsets: Items<Compact<StatefulSet>>,
    shutdown: impl Future<Output = ()>,
) {
    let follow = statefulsets
        .filter_map(|item| async move { item.ok()?.expand().ok() })
        .for_each_concurrent(CONCURRENCY, |sts| {
            let (writer, lead, fleets) = (writer.clone(), lead.clone(), fleets.clone());
            async move { follow_one(&writer, &lead, &fleets, sts).await }
        });
    tokio::select! {
        () = follow => {}
        () = shutdown => {}
    }
}
