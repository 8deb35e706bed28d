//! Waiting for many fleets at once and measuring when each got there; figures for the report.

use crate::conditions::typed_summary;
use celld_api::CelldFleet;
use kube::api::ListParams;
use kube::{Api, Client, ResourceExt};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Polls the fleets of `ns` until each of `names` satisfies `check`; returns, per fleet, how
/// long after `since` it first did. Panics after `timeout` naming the fleets that did not, with
/// their conditions.
pub async fn until_each(
    client: &Client,
    ns: &str,
    names: &[String],
    what: &str,
    since: Instant,
    timeout: Duration,
    check: impl Fn(&CelldFleet) -> bool,
) -> BTreeMap<String, Duration> {
    let api: Api<CelldFleet> = Api::namespaced(client.clone(), ns);
    let mut reached = BTreeMap::new();
    let deadline = Instant::now() + timeout;
    loop {
        let fleets = api.list(&ListParams::default()).await;
        let mut pending = Vec::new();
        if let Ok(fleets) = &fleets {
            for name in names {
                if reached.contains_key(name) {
                    continue;
                }
                match fleets.items.iter().find(|f| &f.name_any() == name) {
                    Some(f) if check(f) => {
                        reached.insert(name.clone(), since.elapsed());
                    }
                    Some(f) => pending.push(format!("{name}: {}", typed_summary(f))),
                    None => pending.push(format!("{name}: not found")),
                }
            }
        }
        if reached.len() == names.len() {
            return reached;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: {} of {} fleets in {ns} did not get there within {timeout:?}: {}{}",
            names.len() - reached.len(),
            names.len(),
            pending.join("; "),
            fleets
                .err()
                .map(|e| format!(" (last list failed: {e})"))
                .unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// `1.2 s`.
pub fn seconds(d: Duration) -> String {
    format!("{:.1} s", d.as_secs_f64())
}

/// `median / max` of some durations, in seconds.
pub fn median_max(values: impl IntoIterator<Item = Duration>) -> String {
    let mut v: Vec<Duration> = values.into_iter().collect();
    if v.is_empty() {
        return "-".into();
    }
    v.sort();
    format!("{} / {}", seconds(v[v.len() / 2]), seconds(v[v.len() - 1]))
}

/// The line every report section starts with: when, on how many cores, by which test.
pub fn measured(test: &str) -> String {
    format!(
        "Measured on {} ({} cores) by `cargo test -p celld-operator --test resilience {test}`.",
        jiff::Zoned::now().date(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    )
}
