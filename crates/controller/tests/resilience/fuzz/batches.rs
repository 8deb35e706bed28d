//! Runs the cases of one namespace, a batch at a time: apply every manifest, wait until each
//! admitted fleet, store and rollout has a status that says what is going on (or the bound
//! passed), judge what the admitted rollouts hold, look for leaked credentials in what exists,
//! then delete the batch.

use super::cases::Case;
use super::judge;
use super::pending::Pending;
use super::snapshot::{search_leaks, snapshot};
use super::verdict::{Admission, names_a_field};
use crate::cluster::Cluster;
use crate::fixtures::{api, apply, publish_pointer};
use crate::leaks::{self, LeakScan};
use celld_fixtures::OperatorProcess;
use futures::{StreamExt, stream};
use kube::api::DeleteParams;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

/// A batch is waited for at least this long before an object without a status counts as
/// silent...
pub const MIN_WAIT: Duration = Duration::from_secs(60);
/// ...and only once no other object of the batch got its status for this long...
pub const QUIET: Duration = Duration::from_secs(30);
/// ...and never longer than this.
pub const MAX_WAIT: Duration = Duration::from_secs(300);

/// How often a batch's fleets and stores are looked at.
const POLL: Duration = Duration::from_secs(2);

/// Applies in flight at once, per namespace.
const PARALLEL_APPLIES: usize = 6;

/// What became of one case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    /// Refused, with a message naming the field.
    Refused,
    /// Refused, with a message that names no field.
    RefusedUnnamed,
    /// Admitted, and its status says what is going on.
    Reconciled,
    /// Admitted, and no status says anything within the bound.
    Silent,
    /// Admitted (and reconciled), though it holds what its CRD's rules promise to refuse.
    AdmittedForbidden,
    /// The API server could not read the request (no admission rule involved).
    Unreadable,
    /// The apply failed other than by a refusal.
    ApplyFailed,
}

/// A case's verdict, with what was seen, and how long its status took.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub case: Case,
    pub verdict: Verdict,
    pub detail: String,
    pub time_to_status: Option<Duration>,
    /// How the fleet ended, for a reconciled case (`Ready=False/NoDeployment`...).
    pub ending: Option<String>,
    /// Its batch in its namespace, and how long that batch waited for statuses.
    pub batch: (usize, Duration),
}

/// What one namespace's run found besides the verdicts.
#[derive(Debug, Default)]
pub struct NamespaceRun {
    pub outcomes: Vec<Outcome>,
    /// Polls the API server did not answer, or answered slowly.
    pub stalled_polls: usize,
    pub crashes: Vec<String>,
    pub leaks: LeakScan,
}

/// Applies a case; returns the admission of its manifest and of its companion fleet, which goes
/// after a store (it uses it) and before a rollout (it selects it).
async fn apply_case(cluster: &Cluster, ns: &str, case: &Case) -> (Admission, Option<Admission>) {
    let companion_first = case.kind_label() == "CelldRollout";
    let mut companion = None;
    if companion_first && let Some(fleet) = &case.companion {
        companion = Some(Admission::of(apply(&cluster.client, ns, fleet).await));
    }
    let main = Admission::of(apply(&cluster.client, ns, &case.manifest).await);
    if !companion_first && let Some(fleet) = &case.companion {
        companion = Some(Admission::of(apply(&cluster.client, ns, fleet).await));
    }
    (main, companion)
}

/// Runs `cases` in `ns`, `batch` at a time, with `operator` watching the namespace (and
/// others: it is started again if it exited).
pub async fn run(
    cluster: &Cluster,
    ns: &str,
    cases: Vec<Case>,
    batch: usize,
    operator: &Mutex<OperatorProcess>,
    credentials: &[String],
) -> NamespaceRun {
    let mut result = NamespaceRun::default();
    let batches: Vec<Vec<Case>> = cases.chunks(batch).map(<[Case]>::to_vec).collect();
    let last = batches.len().saturating_sub(1);
    for (number, cases) in batches.into_iter().enumerate() {
        stream::iter(cases.iter().filter(|c| c.deployed))
            .for_each_concurrent(PARALLEL_APPLIES, |c| async move {
                publish_pointer(&cluster.s3, &c.prefix, "0123456789abcdef").await;
            })
            .await;
        let admissions: Vec<(Admission, Option<Admission>)> = stream::iter(cases.iter())
            .map(|c| apply_case(cluster, ns, c))
            .buffered(PARALLEL_APPLIES)
            .collect()
            .await;
        let applied = Instant::now();

        let mut pending: Vec<Pending> = cases
            .iter()
            .zip(&admissions)
            .enumerate()
            .filter_map(|(i, (case, (main, companion)))| {
                Pending::of(i, case, main, companion.as_ref())
            })
            .collect();

        let mut last_progress = Instant::now();
        let mut snap = snapshot(cluster, ns).await;
        loop {
            let before = pending.iter().filter(|p| p.done.is_some()).count();
            for p in pending.iter_mut().filter(|p| p.done.is_none()) {
                p.check(&snap, cluster.gateway_api, applied.elapsed());
            }
            let done = pending.iter().filter(|p| p.done.is_some()).count();
            if !snap.healthy {
                result.stalled_polls += 1;
            }
            if done > before || !snap.healthy {
                last_progress = Instant::now();
            }
            let waited = applied.elapsed();
            if done == pending.len()
                || waited >= MAX_WAIT
                || (waited >= MIN_WAIT && last_progress.elapsed() >= QUIET)
            {
                break;
            }
            tokio::time::sleep(POLL).await;
            snap = snapshot(cluster, ns).await;
        }

        let batch_wait = applied.elapsed();
        search_leaks(cluster, ns, &snap, credentials, &mut result.leaks).await;

        for (i, (case, (main, companion))) in cases.iter().zip(&admissions).enumerate() {
            let waited = pending.iter().find(|p| p.case == i);
            let silent = waited.is_some_and(|p| p.done.is_none());
            let (verdict, detail) = match main {
                Admission::Failed { error } => (Verdict::ApplyFailed, error.clone()),
                _ if silent => (
                    Verdict::Silent,
                    waited.map(|p| p.last.clone()).unwrap_or_default(),
                ),
                Admission::Unreadable { message } => (Verdict::Unreadable, message.clone()),
                Admission::Refused { message } if names_a_field(message) => {
                    (Verdict::Refused, message.clone())
                }
                Admission::Refused { message } => (Verdict::RefusedUnnamed, message.clone()),
                Admission::Admitted { .. } => match rollout_forbidden(&snap.rollouts, case) {
                    Some(why) => (Verdict::AdmittedForbidden, why),
                    None => (Verdict::Reconciled, String::new()),
                },
            };
            let detail = match companion {
                Some(Admission::Failed { error }) => {
                    format!("{detail}; the companion fleet failed to apply: {error}")
                }
                _ => detail,
            };
            result.outcomes.push(Outcome {
                case: case.clone(),
                verdict,
                detail,
                time_to_status: waited.and_then(|p| p.done),
                ending: waited.and_then(|p| p.ending.clone()),
                batch: (number, batch_wait),
            });
        }

        let mut operator = operator.lock().await;
        if !operator.is_running() {
            result.crashes.push(format!(
                "the operator exited during batch {number} of {ns}; its log: {}",
                operator.log_path().display()
            ));
            operator
                .restart()
                .await
                .expect("the operator started again");
        }
        drop(operator);
        if number != last {
            delete_batch(cluster, ns, &cases).await;
        }
    }
    result
}

/// Why admission should have refused the rollout of `case`, as stored, if it should have.
fn rollout_forbidden(
    rollouts: &BTreeMap<String, serde_json::Value>,
    case: &Case,
) -> Option<String> {
    if case.kind_label() != "CelldRollout" {
        return None;
    }
    rollouts.get(case.name()).and_then(judge::forbidden)
}

async fn delete_batch(cluster: &Cluster, ns: &str, cases: &[Case]) {
    let targets: Vec<(&str, String)> = cases
        .iter()
        .flat_map(|c| {
            let mut t = vec![(c.kind_label(), c.name().to_string())];
            if let Some(fleet) = &c.companion {
                let name = fleet["metadata"]["name"].as_str().unwrap_or_default();
                t.push(("CelldFleet", name.to_string()));
            }
            t
        })
        .collect();
    stream::iter(targets)
        .for_each_concurrent(PARALLEL_APPLIES, |(kind, name)| async move {
            // Refused objects do not exist: not found is fine.
            let _ = api(&cluster.client, ns, kind)
                .delete(&name, &DeleteParams::background())
                .await;
        })
        .await;
}

/// The leak check of what is left at the end: the last batch, every Event, the operator's log
/// and what the plugin prints.
pub async fn final_scan(
    cluster: &Cluster,
    namespaces: &[&str],
    operators: &[&OperatorProcess],
    credentials: &[String],
) -> LeakScan {
    let logs: Vec<&std::path::Path> = operators.iter().map(|o| o.log_path()).collect();
    leaks::scan(cluster, namespaces, &logs, credentials).await
}
