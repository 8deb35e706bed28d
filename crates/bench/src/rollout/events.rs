//! The operator's Events while the rollout ran, read back from the API server once it settled
//! (`events.k8s.io/v1`, the rollout's namespace): how many of each kind of object, type and
//! reason. The audit log counts Event creates but, at its metadata level, cannot tell them
//! apart.

use crate::error::{Error, Result};
use k8s_openapi::api::events::v1::Event;
use kube::api::ListParams;
use kube::{Api, Client};
use std::collections::BTreeMap;

/// The operator's Events' reporting controller.
const REPORTER: &str = "celld-operator";

/// Events listed a page at a time.
const PAGE: u32 = 500;

/// Events counted by `"<kind> <type> <reason>"`.
pub type EventsByReason = BTreeMap<String, u64>;

/// The key `event` is counted under, when the operator published it at or after `since`.
fn key(event: &Event, since: jiff::Timestamp) -> Option<String> {
    if event.reporting_controller.as_deref() != Some(REPORTER) {
        return None;
    }
    let created = event.metadata.creation_timestamp.as_ref()?.0;
    if created.as_second() < since.as_second() {
        return None;
    }
    let kind = event
        .regarding
        .as_ref()
        .and_then(|r| r.kind.clone())
        .unwrap_or_default();
    Some(format!(
        "{kind} {} {}",
        event.type_.as_deref().unwrap_or("Normal"),
        event.reason.as_deref().unwrap_or_default()
    ))
}

/// Counts the operator's Events of `namespace` created at or after `since` (to the second).
pub async fn count(
    client: &Client,
    namespace: &str,
    since: jiff::Timestamp,
) -> Result<EventsByReason> {
    let api = Api::<Event>::namespaced(client.clone(), namespace);
    let mut counts = EventsByReason::new();
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(Error::kube("listing the rollout's Events"))?;
        for event in &page.items {
            if let Some(key) = key(event, since) {
                *counts.entry(key).or_default() += 1;
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => return Ok(counts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn event(reporter: &str, created: &str, type_: &str, reason: &str) -> Event {
        serde_json::from_value(json!({
            "metadata": {"name": "e", "creationTimestamp": created},
            "eventTime": created,
            "reportingController": reporter,
            "type": type_,
            "reason": reason,
            "regarding": {"kind": "CelldFleet", "name": "t0001"},
        }))
        .unwrap()
    }

    #[test]
    fn the_operator_s_events_since_the_apply_are_counted_by_kind_type_and_reason() {
        let since: jiff::Timestamp = "2026-01-01T00:00:10.700Z".parse().unwrap();
        let ours = event(REPORTER, "2026-01-01T00:00:10Z", "Normal", "Published");
        assert_eq!(
            key(&ours, since).as_deref(),
            Some("CelldFleet Normal Published")
        );
        let before = event(REPORTER, "2026-01-01T00:00:09Z", "Normal", "Published");
        assert_eq!(key(&before, since), None);
        let theirs = event("kubelet", "2026-01-01T00:00:11Z", "Warning", "Failed");
        assert_eq!(key(&theirs, since), None);
    }
}
