//! The Events the operator published on the bench's fleets, read back from the API server
//! (`events.k8s.io/v1`, every namespace) once it settled: how many of each type, and the
//! Warnings by reason. The audit log counts Event creates but, at its metadata level, cannot
//! tell a Warning from a Normal one.

use crate::error::{Error, Result};
use celld_api::CelldFleet;
use k8s_openapi::api::events::v1::Event;
use kube::api::ListParams;
use kube::{Api, Client, Resource};
use std::collections::BTreeMap;

/// The operator's Events' reporting controller (its default `reporter`).
const REPORTER: &str = "celld-operator";

/// Events listed a page at a time.
const PAGE: u32 = 500;

/// The Events the operator published on fleets.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventCounts {
    /// Normal Events.
    pub normal: u64,
    /// Warning Events, by reason.
    pub warnings: BTreeMap<String, u64>,
}

impl EventCounts {
    /// Every Warning Event.
    pub fn warnings(&self) -> u64 {
        self.warnings.values().sum()
    }

    /// Counts `event` when the operator published it on a fleet.
    fn add(&mut self, event: &Event) {
        let on_fleet = event
            .regarding
            .as_ref()
            .and_then(|r| r.kind.as_deref())
            .is_some_and(|kind| kind == CelldFleet::kind(&()));
        if !on_fleet || event.reporting_controller.as_deref() != Some(REPORTER) {
            return;
        }
        match event.type_.as_deref() {
            Some("Warning") => {
                *self
                    .warnings
                    .entry(event.reason.clone().unwrap_or_default())
                    .or_default() += 1;
            }
            _ => self.normal += 1,
        }
    }
}

/// Lists every Event through `client` and counts the operator's on fleets.
pub async fn count(client: &Client) -> Result<EventCounts> {
    let api = Api::<Event>::all(client.clone());
    let mut counts = EventCounts::default();
    let mut params = ListParams::default().limit(PAGE);
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(Error::kube("listing the Events"))?;
        for event in &page.items {
            counts.add(event);
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
    use k8s_openapi::api::core::v1::ObjectReference;

    fn event(kind: &str, reporter: &str, type_: &str, reason: &str) -> Event {
        Event {
            regarding: Some(ObjectReference {
                kind: Some(kind.into()),
                ..ObjectReference::default()
            }),
            reporting_controller: Some(reporter.into()),
            type_: Some(type_.into()),
            reason: Some(reason.into()),
            ..Event::default()
        }
    }

    #[test]
    fn only_the_operators_events_on_fleets_count_warnings_by_reason() {
        let mut counts = EventCounts::default();
        for e in [
            event("CelldFleet", REPORTER, "Warning", "NodeStateUnreadable"),
            event("CelldFleet", REPORTER, "Warning", "NodeStateUnreadable"),
            event("CelldFleet", REPORTER, "Warning", "ApplyFailed"),
            event("CelldFleet", REPORTER, "Normal", "Applied"),
            // Another controller's, and the operator's on another kind.
            event("CelldFleet", "statefulset-controller", "Warning", "Failed"),
            event("Pod", REPORTER, "Warning", "Other"),
        ] {
            counts.add(&e);
        }
        assert_eq!(counts.normal, 1);
        assert_eq!(counts.warnings(), 3);
        assert_eq!(
            counts.warnings.into_iter().collect::<Vec<_>>(),
            [
                ("ApplyFailed".to_string(), 1),
                ("NodeStateUnreadable".to_string(), 2)
            ]
        );
    }
}
