//! Admission fuzz: thousands of CelldFleet, CelldObjectStore and CelldRollout manifests
//! generated from valid ones, one to three fields mutated at a time (valid, boundary and
//! hostile values per field family), applied with server-side apply to the real API server with
//! the operator running. Each case must be refused with a message naming a field, or admitted
//! and then reconciled to a status that says what is going on: never silent.
//!
//! Rollout cases ([`rollouts`]) come on top of the fleet and store cases (15 per 100), from a
//! stream of their own and spread among them. Each applies a fleet labelled for it, then a
//! rollout whose base ships an image to that fleet in two waves and asks the fuzz's own webhook
//! [`gate`] after each: the first wave really starts (the fleet gets its deploy Job), and a
//! mutated selector may take every fleet of the namespace, or none (the waves then pass through
//! the gate to Succeeded). Their fields: the source (image reference and layout, sourceRef,
//! path, retries, timeout, deployer image), the selector, the waves (how far, selector, bake,
//! maxParallel, approval, how many), the gates (progressDeadline, webhook names, URLs with
//! link-local and metadata addresses, timeouts, retries, repeated names), onFailure, paused and
//! the annotations that pause, promote and abort. An admitted rollout must get a status for its
//! generation with Ready and, unless Ready is True, Reconciling or Stalled, each with a reason
//! and a message ([`rollout_verdict`]); and it must hold nothing its CRD's rules promise to
//! refuse, as the operator reads it ([`judge`]).
//!
//! It runs on a private control plane: thousands of fleets and their Services would crowd the
//! shared one (its Service IP range, its API server) for the other tests, and one operator
//! watches every namespace there, as in production.
//!
//! `CELLD_FUZZ_SEED` (a number) replays another seed, `CELLD_FUZZ_CASES` sets how many fleet
//! and store cases (the rollout cases follow: 15 per 100). The failing cases, whole, go to
//! `fuzz-failures.json` in the suite's work directory, every verdict (with its message) to
//! `fuzz-outcomes.json`.

#[macro_use]
mod values;
mod batches;
mod cases;
mod families;
mod fields;
mod gate;
mod judge;
mod pending;
mod rollout_verdict;
mod rollouts;
mod snapshot;
mod tally;
mod verdict;

use crate::cluster::{Cluster, Tuning, work_dir};
use crate::fixtures::apply;
use crate::sentinels::Sentinels;
use batches::{NamespaceRun, Verdict};
use celld_fixtures::manifests::store_manifest;
use celld_testkit::faults::PrivateControlPlane;
use std::path::Path;
use std::time::Instant;
use tokio::sync::Mutex;

/// The seed unless `CELLD_FUZZ_SEED` says otherwise.
const SEED: u64 = 0x000C_E11D_5EED;
/// Fleet and store cases unless `CELLD_FUZZ_CASES` says otherwise (a store case applies two
/// manifests); the rollout cases (each also two manifests) come on top.
const CASES: usize = 2000;
/// Namespaces the cases are spread over, run side by side.
const NAMESPACES: usize = 4;
/// Cases applied before waiting for their statuses.
const BATCH: usize = 100;

fn env_number(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value:?} is not a number")),
    )
}

#[tokio::test]
async fn generated_manifests_are_refused_naming_a_field_or_reconciled_never_silent() {
    let seed = env_number("CELLD_FUZZ_SEED").unwrap_or(SEED);
    let count = env_number("CELLD_FUZZ_CASES").map_or(CASES, |n| n as usize);
    println!(
        "admission fuzz: seed {seed} (CELLD_FUZZ_SEED to replay another), {count} fleet and store cases and {} rollout cases",
        rollouts::count(count)
    );
    let started = Instant::now();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("testenv-fuzz");
    let plane = PrivateControlPlane::start(&dir)
        .await
        .expect("a private control plane for the admission fuzz (needs `make testenv`)");
    let cluster = Cluster::private(&plane).await;
    let run_prefix = cluster.s3.unique_prefix("resilience-fuzz");
    let gate = gate::Gate::start().await;
    let cases = cases::generate(
        seed,
        count,
        &cluster.s3,
        run_prefix.trim_end_matches('/'),
        &gate.url,
    );

    let mut sentinels = Sentinels::default();
    let mut namespaces = Vec::new();
    for i in 0..NAMESPACES {
        let namespace = cluster.namespace(&format!("resilience-fuzz-{i}")).await;
        let ns = namespace.name().to_string();
        let client = &cluster.client;
        sentinels
            .working_secret(client, &ns, "creds", &cluster.s3)
            .await;
        sentinels
            .sentinel_secret(client, &ns, "creds-sentinel")
            .await;
        sentinels.partial_secret(client, &ns, "creds-partial").await;
        apply(client, &ns, &store_manifest("store", &cluster.s3, "creds"))
            .await
            .expect("the shared store applied");
        namespaces.push(namespace);
    }
    // A fleet's first reconcile writes its status; looking at thousands of fleets again every
    // few seconds would only slow the run down.
    let tuning = Tuning {
        resync: 300,
        pending_resync: 300,
    };
    let operator = Mutex::new(cluster.operator(None, tuning).await);

    let mut shares: Vec<Vec<cases::Case>> = vec![Vec::new(); NAMESPACES];
    for case in cases {
        shares[case.index % NAMESPACES].push(case);
    }
    let credentials = sentinels.values().to_vec();
    let runs: Vec<NamespaceRun> =
        futures::future::join_all(namespaces.iter().zip(shares).map(|(namespace, share)| {
            batches::run(
                &cluster,
                namespace.name(),
                share,
                BATCH,
                &operator,
                &credentials,
            )
        }))
        .await;

    let mut operator = operator.into_inner();
    let mut crashes: Vec<String> = runs.iter().flat_map(|r| r.crashes.clone()).collect();
    if !operator.is_running() {
        crashes.push(format!(
            "the operator exited; its log: {}",
            operator.log_path().display()
        ));
    }
    let panics = operator.panics().expect("the operator log");
    let ns_names: Vec<&str> = namespaces.iter().map(|n| n.name()).collect();
    let mut scan = batches::final_scan(&cluster, &ns_names, &[&operator], sentinels.values()).await;
    for run in &runs {
        scan.merge(&run.leaks);
    }

    let outcomes: Vec<&batches::Outcome> = runs.iter().flat_map(|r| &r.outcomes).collect();
    let failures: Vec<&&batches::Outcome> = outcomes
        .iter()
        .filter(|o| {
            !matches!(
                o.verdict,
                Verdict::Refused | Verdict::Reconciled | Verdict::Unreadable
            )
        })
        .collect();
    let failures_file = work_dir().join("fuzz-failures.json");
    let dump: Vec<serde_json::Value> = failures
        .iter()
        .map(|o| {
            serde_json::json!({
                "case": o.case.index, "verdict": format!("{:?}", o.verdict), "detail": o.detail,
                "mutations": o.case.mutations.iter().map(cases::Mutation::describe).collect::<Vec<_>>(),
                "manifest": o.case.manifest, "companion": o.case.companion,
            })
        })
        .collect();
    std::fs::write(
        &failures_file,
        serde_json::to_string_pretty(&dump).expect("failures as JSON"),
    )
    .expect("the failing cases written");
    let every: Vec<serde_json::Value> = outcomes
        .iter()
        .map(|o| {
            serde_json::json!({
                "case": o.case.index, "kind": o.case.kind_label(), "verdict": format!("{:?}", o.verdict),
                "detail": o.detail, "ending": o.ending,
                "status_after_s": o.time_to_status.map(|t| t.as_secs_f64()),
                "batch": o.batch.0, "batch_waited_s": o.batch.1.as_secs_f64(),
                "mutations": o.case.mutations.iter().map(cases::Mutation::describe).collect::<Vec<_>>(),
            })
        })
        .collect();
    std::fs::write(
        work_dir().join("fuzz-outcomes.json"),
        serde_json::to_string_pretty(&every).expect("outcomes as JSON"),
    )
    .expect("every verdict written");

    tally::report(&tally::Summary {
        seed,
        outcomes: &outcomes,
        namespaces: NAMESPACES,
        batch: BATCH,
        crashes: &crashes,
        panics: &panics,
        leaks: &scan,
        stalled_polls: runs.iter().map(|r| r.stalled_polls).sum(),
        gate_calls: gate.calls(),
        runtime: started.elapsed(),
    });

    assert!(
        crashes.is_empty(),
        "operator crashes:\n{}",
        crashes.join("\n")
    );
    assert!(
        panics.is_empty(),
        "the operator panicked:\n{}",
        panics.join("\n")
    );
    scan.assert_clean("admission fuzz");
    let shown: Vec<String> = failures
        .iter()
        .take(25)
        .map(|o| format!("{:?}: {}\n    {}", o.verdict, o.case.describe(), o.detail))
        .collect();
    assert!(
        failures.is_empty(),
        "seed {seed}: {} of {} cases were silent, refused without naming a field, admitted against their rules, or failed to apply (all in {}); the first ones:\n{}",
        failures.len(),
        outcomes.len(),
        failures_file.display(),
        shown.join("\n")
    );
    drop(operator);
    for namespace in namespaces {
        namespace.cleanup().await.expect("namespace deleted");
    }
    plane
        .stop()
        .await
        .expect("the private control plane stopped");
}
