//! The report's section on how everything was measured.

use super::format::{thousands, times};
use super::pairs::of;
use super::targets::AT_1000;
use crate::plane::health::ETCD_QUOTA_BYTES;
use crate::results::Results;
use crate::settings::{
    APISERVER_FLAGS, CALIBRATION_GAIN, CAPACITY_READS_PER_SECOND, CHURN_REST, CHURN_SETTLE,
    CONCURRENCY, CONTROLLER_MANAGER_FLAGS, FIRST_CAPACITY_AGE, FLEETS_PER_NAMESPACE, IDLE_WINDOW,
    MAX_NODES, QUIET, REPLICAS, SETTLE_LIMIT, SETTLE_PER_FLEET, SOURCED_EVERY, pods_of,
    ready_timeout,
};
use std::fmt::Write as _;
use std::time::Duration;

/// The time the whole run is meant to fit in.
const TIME_BUDGET: Duration = Duration::from_secs(20 * 60);

/// Writes the section "How it was measured" of `r` to `out`.
pub(super) fn method(out: &mut String, r: &Results) {
    let others = if r.single.is_some() {
        ""
    } else {
        " The churn gets a third, the previews a fourth, each on the fewest fake nodes its pods fit on \
(nothing there is timed against a floor)."
    };
    let _ = writeln!(
        out,
        "\n## How it was measured\n\n\
- Every fleet count runs at least twice (the largest once per pair, below), each time on a fresh local control plane of its own, so nothing \
is left from a previous run in etcd, the API server's caches or kwok \
(`testenv/scripts/up.sh` with its own state directory; kube-apiserver v1.36.3, etcd, kwok fake \
nodes with room for {per_node} pods each, s3s-fs; kube-controller-manager with \
`{CONTROLLER_MANAGER_FLAGS}`: with its default of 5 StatefulSet syncs at a time, each waiting on \
API round trips, from a few thousand fleets on the StatefulSet statuses fall far behind their \
pods, and the controller-manager, not the API server, would set the pace of both runs): once for the floor, once for the operator, \
both on the same number of fake nodes (below).{others} The fleets are spread over namespaces of \
{FLEETS_PER_NAMESPACE} (`bench-0`, `bench-1`, …), as a platform's are over its teams' and \
applications': the control plane's Endpoints, EndpointSlice and PodDisruptionBudget controllers \
scan every Service, pod or budget of a namespace on each change of a pod in it, so in one \
namespace their work grows with the square of the fleets. Each fleet: {REPLICAS} nodes (`replicas: {REPLICAS}`), an Ingress, inline S3 \
storage with a credentials Secret (one per namespace), and a published deployment (`deploy/current.json` in its \
bucket prefix) before it is created; one fleet in {SOURCED_EVERY} also declares its Worker \
(`spec.source`, an image pinned by digest), which the operator publishes with a deploy Job whose \
pod the bench ends as `celld deploy` would (so the idle window covers fleets with a source).\n\
- **Floor**: the least an operator that reports readiness must send. The fleets are created as in \
the operator's run (the same {CONCURRENCY} client tasks; nothing reconciles them), and as each \
create returns, its deployment pointer is read from its bucket (by the operator's object-store \
client, with the keys of its Secret: a correct operator sizes the StatefulSet by it, since celld \
nodes exit at boot without a deployment, and reports it), then every child the operator would \
make for that fleet (NetworkPolicy, peer Service, StatefulSet, Service, PodDisruptionBudget, \
Ingress) is rendered by the operator's own builders (`celld_operator::children::*::build`) and \
applied by server-side apply; when a watch sees the fleet's StatefulSet ready and every child of \
the fleet was applied (no correct operator says a fleet serves before its Service and Ingress \
exist) each of its nodes is asked its state (`GET /state`, by the operator's client of the \
nodes' API, at the same stand-in for it as in the operator's run: the status says which version \
every node serves) and its status says `Ready=True`, by server-side apply on the status \
subresource as the operator writes it (its replica counts, its selector, its nodes, the \
condition in its words). That is one status per fleet: the operator writes one at creation \
too (`Ready=False`, `Reconciling=True`, which GitOps tools read), but coalesces it into the \
Ready one when its pods are ready before its turn to be written comes, as they are for most \
fleets when a thousand start at once, so a floor that always wrote it would send more than the \
operator. {CONCURRENCY} concurrent client tasks share these requests: a Ready status due first, then \
the other children of fleets whose StatefulSet a watch saw ready, then what goes with the next \
fleet's pods (its NetworkPolicy, peer Service and StatefulSet, in the order the creates returned), \
while fewer than {starting} fleets have pods starting (their StatefulSet applied and not yet seen \
ready). The NetworkPolicy and the peer Service go with the pods because a correct operator has \
them in place before its pods run, as this one does: the policy keeps the internal port, which \
carries celld's unauthenticated operator API, inside the fleet, and the peer Service gives each \
pod the DNS name it advertises to its peers; a floor that held them back until the pods were \
ready would let pods run unfenced and unnamed, as no correct operator does. The public Service, PodDisruptionBudget and \
Ingress wait for the pods, so the control plane makes the Endpoints and EndpointSlices of the \
public Service once, with the running pods in them. The \
floor's client is the bench, built with the release profile as the \
operator is. It runs as the operator's ServiceAccount, so the API server authorizes it \
as it does the operator. Timed, like the operator, from the first create (no child can be \
applied before its fleet exists) until a watch has seen every fleet `Ready=True` (and every \
StatefulSet with its {REPLICAS} pods ready): the floor's converge. Both clocks start with the API \
server ready to store fleets: it builds a custom resource's storage and compiles its validation \
rules on the first request that needs them, which the operator's start (listing the fleets) does \
before its clock, and a create of the first fleet sent as a dry run before the floor's (else the \
floor's first creates wait for it). \
The operator's converge over the floor's is the **converge ratio**; below 1.0 the floor is \
wrong.\n\
- **Fake nodes**: kwok does each fake node's work in turn, so on too few the floor is bound by \
kwok, not by the API server. Unless `--nodes` gives their number, the floor of the largest fleet \
count runs first on the fewest nodes its pods fit on, then on twice as many, and so on until a run \
is less than {gain:.0} % faster than the one before (at most {max_nodes} nodes, or the fewest if \
more); the fastest run sets the fake nodes of every floor and operator run of the fleet counts and \
is the floor of the largest count. On a busy machine one slow run can end the doubling early: \
the curve is in the report.\n\
- **Operator**: the release build of `celld-operator` as its own process, with its default \
settings (every namespace, resync every 60 s) except leader election (off: one replica, and \
Lease renewals would be counted as idle writes). It runs as the ServiceAccount \
`celld-system/celld-operator` bound to the generated ClusterRole of `config/rbac/role.yaml`, \
with a token from the TokenRequest API. The fleets are created from {CONCURRENCY} concurrent \
client tasks; times run from the first create. A StatefulSet is ready, and a fleet Ready, when \
a watch of the bench first sees it so (`readyReplicas` = {REPLICAS}; condition `Ready=True`). \
A fleet's **status lag** is the time between the two (fleets with spec.source left out: their \
Ready waits for their source's publish), given as its median, 99th percentile and largest, \
for the floor's fleets too, and split by the audit log's record of the status write that said \
Ready (the last one the API server received before the fleet was seen Ready): until the API \
server received it (the writer's part, its own watch of the StatefulSet included) and in the \
API server, as percentiles over the fleets, and for the largest also until the bench's watch \
saw the fleet Ready.\n\
- **Settled**: every fleet Ready and no write by the operator for {quiet} s (at most {limit} s, \
or {per_fleet} ms per fleet when that is longer, after all were Ready); the moment of its last \
write. **Idle**: the {idle} s after that (one resync period: every fleet is reconciled once in \
it). A fleet's status first shows its nodes' capacity (`status.capacity`) once a reading of \
them is worth a write: at its first reconcile once the fleet is {age} old and its nodes \
were read (in turn, at the operator's `--capacity-reads-per-second`, {reads} node reads a second by \
default{round}). That is a once-only \
write per fleet, and until a fleet's nodes were read its own resyncs read them. So when the idle \
window would end after the first fleet is {age} old, the bench first waits until its watch \
has seen every fleet show its capacity (at most {age} and two rounds from the first create) \
and then for the operator's writes to stop again, and reads the memory after that: idle measures \
the steady state. The bench's watch counts the fleets whose status first showed their capacity \
in the window, and the zero-write target is judged on the writes beyond those. A run waits up to {ready_base} s and a second per fleet for every fleet to be Ready.",
        per_node = crate::settings::PODS_PER_NODE,
        starting = thousands(crate::settings::STARTING_AT_ONCE as u64),
        gain = CALIBRATION_GAIN * 100.0,
        max_nodes = MAX_NODES,
        quiet = QUIET.as_secs(),
        limit = SETTLE_LIMIT.as_secs(),
        per_fleet = SETTLE_PER_FLEET.as_millis(),
        idle = IDLE_WINDOW.as_secs(),
        ready_base = ready_timeout(0).as_secs(),
        age = span(FIRST_CAPACITY_AGE),
        reads = CAPACITY_READS_PER_SECOND,
        round = capacity_round(r),
    );
    if let Some(largest) = r.scales.last().filter(|_| !r.repeats.is_empty()) {
        let pairs = of(largest, &r.repeats);
        let (low, high) = pairs
            .iter()
            .map(|s| s.converge_ratio())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), r| {
                (lo.min(r), hi.max(r))
            });
        let _ = writeln!(
            out,
            "- **Pairs**: {fleets} fleets ran {count} pairs of floor and operator (`--pairs`), one after \
the other, floor first, each on a fresh control plane: one pair's converge ratio moves from run \
to run on a shared machine (here from {low} to {high}), so the ratio and the idle CPU at that \
count are judged on the median of the pairs, a pair below 1.00× left out of the converge median; \
the table's column is the first pair.",
            fleets = thousands(largest.fleets() as u64),
            count = pairs.len(),
            low = times(low),
            high = times(high),
        );
    }
    if r.single.is_none() {
        let _ = writeln!(
            out,
            "- **Churn**: a cycle's fleets are gone when no fleet and no StatefulSet is left; the control plane \
may still be garbage-collecting their pods then, so a cycle after the first can take \
longer to Ready (the churn's table gives each cycle's times).\n\
- **Previews**: the control plane also has the `celld-previews` admission policy of \
`config/admission`. The deployments of one parent fleet and of each preview's fleet are \
published first (a preview's in its prefix, `<previews bucket>/<namespace>/<preview>`); the \
parent, a fleet as above with `spec.previews` ({preview_replicas} node per preview, a TTL of \
{ttl}), is created, and once it is Ready and the operator has settled the memory is read; then \
the previews are created from {CONCURRENCY} concurrent client tasks, timed from the first \
create until a watch has seen every preview in phase Ready (its fleet `Ready=True`), settled and \
idle as above; then as many previews again, until all are Ready and the operator settled, and \
the memory is read once more. What a preview costs is the memory that second batch added, \
divided by its previews: the first batch also pays the one-time costs (the preview path's code \
paged in, the runtime's and the caches' first allocations) that the scale targets spread over \
{target_fleets} fleets; its budget is what the {rss_target} MiB target leaves over the empty \
operator, divided by {target_fleets} fleets.",
            preview_replicas = crate::previews::workload::PREVIEW_REPLICAS,
            ttl = crate::previews::workload::TTL,
            rss_target = AT_1000.rss_mib,
            target_fleets = thousands(AT_1000.fleets as u64),
        );
    }
    let _ = writeln!(
        out,
        "- **API requests** come from the API server's audit log (`CELLD_TESTENV_AUDIT=1`, metadata \
level, extra flags `{APISERVER_FLAGS}`), counted by the operator's username (the floor's too: it \
runs as the operator's ServiceAccount), once per audit ID, by the time the API server received \
them; from the first create (or apply) on (the operator's start-up lists and watches are not \
counted). A write is a create, update, patch, delete or deletecollection. A watch counts once, \
when opened. **The API server's load** is every user's requests in the same log, each audit ID \
once, from the first create (or apply) until every fleet was Ready: their number over that time \
is its rate; a request's latency runs from `requestReceivedTimestamp` to the `stageTimestamp` of \
its `ResponseComplete` event (a long-running request, logged when its response starts, has none); \
percentiles by nearest rank.\n\
- **Memory** is the operator's `VmRSS` (`/proc/PID/status`); the empty operator's is read {warm} s \
after it started, before any fleet exists, and every memory figure is also given as a ratio to \
it. The control plane's is the `VmRSS` of kube-apiserver and etcd once the operator settled.{churn_memory} \
**CPU** is utime + stime from `/proc/PID/stat` over the idle window.{connections}\n\
- When a run fails, the bench looks at its control plane before stopping it and says what gave \
out: a component that exited (with the end of its log), a log line that says one gave out (etcd's \
database full, too many open files, no memory, no disk), etcd's database against its {quota} GiB \
quota, and the machine's memory and disk; the logs are kept.\n\
- The machine is shared and noisy: times are given as ratios to the floor measured in the same \
run, memory as ratios to the empty operator. Whole run: {total} on {cores} cores, {date} \
(1-minute load average {load_start:.1} at the start, {load_end:.1} at the end). The bench tool, \
the floor's client, is built with the workspace's release profile as the operator is: a debug \
build spends several times the CPU on each request, which the API server's cores then miss.",
        warm = crate::settings::WARM_UP.as_secs(),
        churn_memory = if r.single.is_some() {
            String::new()
        } else {
            format!(
                " In the churn it is read {rest} s after one fleet came and went before the cycles (the warm \
empty operator: its code for a reconcile paged in, its one-time state built), as each cycle's \
last fleet is gone (does it grow cycle after cycle?); after the churn it is read {rest} s after the last fleet is gone and again, judged, \
{settle} s after: by then the deleted fleets' last resyncs have left the operator's queue and its connection \
pools have closed the connections idle since (after 90 s); its file-backed part (`RssFile`: \
mostly the binary's code, paged in as code paths first run, which the kernel may drop at any \
time) is shown beside.",
                rest = CHURN_REST.as_secs(),
                settle = CHURN_SETTLE.as_secs(),
            )
        },
        connections = if r.single.is_some() {
            ""
        } else {
            " **TCP connections** are the operator's socket descriptors that are ESTABLISHED in \
`/proc/PID/net/tcp{,6}`."
        },
        quota = ETCD_QUOTA_BYTES >> 30,
        total = minutes(r.total),
        cores = r.cores,
        date = r.date,
        load_start = r.load.0,
        load_end = r.load.1,
    );
    if !r.steps.is_empty() {
        let steps: Vec<String> = r
            .steps
            .iter()
            .map(|s| format!("{} {}", s.what, minutes(s.took)))
            .collect();
        let _ = writeln!(
            out,
            "- Time per run, control plane start and stop included: {}.",
            steps.join("; ")
        );
    }
    if r.total > TIME_BUDGET && r.single.is_none() {
        let _ = writeln!(
            out,
            "- The whole run took longer than the {} minutes `make bench` is meant to fit in on a \
2-core machine; the times per run above show where it went.",
            TIME_BUDGET.as_secs() / 60
        );
    }
}

/// How long one round of capacity reads takes for the largest fleet count measured, as
/// ": a round of N fleets of R nodes takes T"; nothing when no count was measured.
fn capacity_round(r: &Results) -> String {
    let Some(fleets) = r.scales.last().map(|s| s.fleets()) else {
        return String::new();
    };
    let round = Duration::from_secs(pods_of(fleets) as u64 / CAPACITY_READS_PER_SECOND);
    format!(
        ": a round of {} fleets of {REPLICAS} nodes takes {}",
        thousands(fleets as u64),
        span(round)
    )
}

/// A span of time as the method writes it: "5 min" for whole minutes, "3 min 20 s" otherwise.
fn span(d: Duration) -> String {
    let s = d.as_secs();
    match (s / 60, s % 60) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

fn minutes(d: Duration) -> String {
    let s = d.as_secs();
    format!("{} min {:02} s", s / 60, s % 60)
}
