//! Watches the fleets and the previews of the bench's namespace and records when each was first
//! seen ready (a fleet with `Ready=True`; a preview in phase Ready).

use crate::error::Result;
use crate::measure::readiness::{Seen, Shared, fleet_ready, lock, wait_until, watch};
use celld_api::{CelldPreview, PreviewPhase};
use kube::{Api, Client};
use std::path::PathBuf;
use std::time::Duration;
use tokio::task::JoinHandle;

/// Whether a preview is in phase Ready (its fleet serves).
pub fn preview_ready(p: &CelldPreview) -> bool {
    p.status
        .as_ref()
        .is_some_and(|s| s.phase == PreviewPhase::Ready)
}

/// Watches of fleets and previews; stopped when dropped.
#[derive(Debug)]
pub struct PreviewWatches {
    fleets: Shared,
    previews: Shared,
    tasks: Vec<JoinHandle<()>>,
}

impl PreviewWatches {
    /// Starts watching `namespace`.
    pub fn start(client: &Client, namespace: &str) -> Self {
        let (fleets, a) = watch(
            Api::namespaced(client.clone(), namespace),
            fleet_ready,
            |_| false,
        );
        let (previews, b) = watch(
            Api::namespaced(client.clone(), namespace),
            preview_ready,
            |_| false,
        );
        PreviewWatches {
            fleets,
            previews,
            tasks: vec![a, b],
        }
    }

    /// What was seen of the fleets.
    pub fn fleets(&self) -> Seen {
        lock(&self.fleets).clone()
    }

    /// What was seen of the previews.
    pub fn previews(&self) -> Seen {
        lock(&self.previews).clone()
    }

    /// Waits until the fleet `name` has been seen Ready, failing after `timeout`; `alive` is
    /// checked on each round (the operator still running).
    pub async fn wait_fleet(
        &self,
        name: &str,
        timeout: Duration,
        logs: PathBuf,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        wait_until(
            &format!("the fleet {name} Ready"),
            timeout,
            logs,
            &mut alive,
            || {
                let seen = self.fleets();
                seen.ready
                    .contains_key(name)
                    .then_some(())
                    .ok_or_else(|| format!("{name} not Ready"))
            },
        )
        .await
    }

    /// Waits until `count` previews have been seen Ready, failing after `timeout`.
    pub async fn wait_previews(
        &self,
        count: usize,
        timeout: Duration,
        logs: PathBuf,
        mut alive: impl FnMut() -> Result<()>,
    ) -> Result<()> {
        wait_until("the bench's previews", timeout, logs, &mut alive, || {
            let (previews, fleets) = (self.previews(), self.fleets());
            (previews.ready.len() >= count)
                .then_some(())
                .ok_or_else(|| {
                    format!(
                        "{}/{count} previews Ready, {} fleets Ready (the parent's included)",
                        previews.ready.len(),
                        fleets.ready.len()
                    )
                })
        })
        .await
    }
}

impl Drop for PreviewWatches {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_preview_is_ready_in_phase_ready_only() {
        let preview = |status: serde_json::Value| -> CelldPreview {
            serde_json::from_value(json!({
                "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldPreview",
                "metadata": {"name": "pr-1", "namespace": "bench"},
                "spec": {"fleet": "web"},
                "status": status,
            }))
            .unwrap()
        };
        assert!(preview_ready(&preview(json!({"phase": "Ready"}))));
        assert!(!preview_ready(&preview(json!({"phase": "Pending"}))));
        assert!(!preview_ready(&preview(json!(null))));
    }
}
