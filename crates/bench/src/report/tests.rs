//! The report's tests, on the results of [`fixtures`](super::fixtures).

use super::fixtures::{results, scale};
use super::*;
use crate::results::Nodes;
use std::time::Duration;

#[test]
fn the_table_has_a_column_per_fleet_count_with_ratios_and_verdicts() {
    let md = render(&results());
    let lines: Vec<&str> = md.lines().collect();
    assert!(
        lines.contains(&"| | target | 100 fleets | 1,000 fleets |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| **floor**: first create → all StatefulSets ready | | 10.0 s | 50.0 s |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| **floor**: first create → all fleets Ready (one status per fleet, once its StatefulSet is ready and its children applied) | | 10.0 s | 50.0 s |"),
        "{md}"
    );
    assert!(lines.contains(&"| first create → all StatefulSets ready (× the floor's) | | 19.0 s (1.90×) | 149.0 s (2.98×) |"), "{md}");
    assert!(lines.contains(&"| **converge**: first create → all fleets Ready (× the floor's) | ≤ 1.1× at 1,000 | 20.0 s (2.00×) | 150.0 s (3.00×) ✗ |"), "{md}");
    assert!(lines.contains(&"| status lag: max over fleets (without spec.source) of Ready − StatefulSet ready | ≤ 5 s | 6.5 s ✗ | 6.5 s ✗ |"), "{md}");
    assert!(
        lines.contains(&"| … p50, p99 over the fleets | | 0.4 s, 2.1 s | 0.4 s, 2.1 s |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| … the largest, from the StatefulSet ready: until the API server received the write that said Ready; in the API server; until the bench's watch saw it | | 2.9 s, 3.4 s, 0.2 s (f123) | 2.9 s, 3.4 s, 0.2 s (f123) |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| … from the StatefulSet ready until the API server received the write that said Ready: p50, p99; that write in the API server: p50, p99 | | 0.2 s, 1.1 s; 0.1 s, 0.5 s | 0.2 s, 1.1 s; 0.1 s, 0.5 s |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| … the floor's (not judged): max; p50, p99; until its write, in the API server; the largest's split | | 0.3 s; 0.1 s, 0.2 s; 0.1 s, 0.1 s; 0.0 s, 0.1 s; – | 0.3 s; 0.1 s, 0.2 s; 0.1 s, 0.1 s; 0.0 s, 0.1 s; – |"),
        "{md}"
    );
    assert!(
        lines.contains(
            &"| API requests until settled (writes) | | 12,345 (1,100) | 12,345 (1,100) |"
        ),
        "{md}"
    );
    assert!(
        lines.contains(
            &"| … per fleet (writes per fleet) | ≤ the floor's + 5 at 1,000 | 123.5 (11.0) | 12.3 (1.1) ✗ |"
        ),
        "{md}"
    );
    // The absolute targets are judged at 1,000 fleets only.
    assert!(
        lines.contains(&"| API requests per idle minute | ≤ 50 at 1,000 | 40 | 40 ✓ |"),
        "{md}"
    );
    assert!(lines.contains(&"| first capacity round, waited for before idle: all fleets show their capacity (how many), then settled | | – (idle ended before any fleet was 5 min old) | – (idle ended before any fleet was 5 min old) |"), "{md}");
    assert!(lines.contains(&"| resident memory after settling (× empty operator) | ≤ 64 MiB at 1,000 | 32.0 MiB (2.00×) | 80.0 MiB (5.00×) ✗ |"), "{md}");
    assert!(
        lines.contains(&"| CPU seconds per idle minute | ≤ 0.5 at 1,000 | 1.50 | 1.50 ✗ |"),
        "{md}"
    );
    assert!(
        lines
            .contains(&"| … the floor's, per fleet (writes per fleet) | | 7.0 (7.0) | 7.0 (7.0) |"),
        "{md}"
    );
    assert!(lines.contains(&"| control plane's resident memory after settling: kube-apiserver, etcd | | 900.0 MiB, 200.0 MiB | 900.0 MiB, 200.0 MiB |"), "{md}");
    assert!(
        md.contains("a ratio below 1.0 means the floor is wrong"),
        "{md}"
    );
    assert!(md.contains("(scaling.svg)"));
}

#[test]
fn the_header_says_how_the_bench_was_invoked_and_where_its_fake_nodes_came_from() {
    let md = render(&results());
    assert!(md.starts_with("# celld-operator at scale\n\nWritten by `celld-bench 100 1000` (as `make bench BENCH_FLEETS=\"100 1000\"` runs it): every fleet count on 6 fake nodes the calibration chose (below). The operator against a floor"), "{md}");
    let mut given = results();
    given.invocation = ["100", "300", "1000", "--nodes", "8"]
        .map(String::from)
        .to_vec();
    given.nodes = Some(Nodes::Given(8));
    let md = render(&given);
    assert!(md.contains("\n\nWritten by `celld-bench 100 300 1000 --nodes 8` (as `make bench BENCH_FLEETS=\"100 300 1000 --nodes 8\"` runs it): every fleet count on 8 fake nodes as `--nodes` asked (not calibrated). "), "{md}");
    let mut previews_alone = results();
    previews_alone.invocation = ["--only", "previews"].map(String::from).to_vec();
    previews_alone.nodes = None;
    let md = render(&previews_alone);
    assert!(md.contains("\n\nWritten by `celld-bench --only previews` (as `make bench BENCH_FLEETS=\"--only previews\"` runs it). The operator"), "{md}");
}

#[test]
fn a_converge_ratio_below_1_says_the_floor_is_wrong() {
    let mut r = results();
    r.scales[1].floor.fleets_ready = Duration::from_secs(200);
    let md = render(&r);
    assert!(
        md.contains("| 150.0 s (0.75×) — below 1: the floor is wrong, not judged; measure again |"),
        "{md}"
    );
}

#[test]
fn a_pair_below_1_is_flagged_and_left_out_of_the_median() {
    let mut r = results();
    r.scales[1] = scale(1000, 100, 130, 50 * 1024);
    r.repeats = vec![
        scale(1000, 100, 97, 50 * 1024),
        scale(1000, 100, 110, 50 * 1024),
    ];
    let md = render(&r);
    let lines: Vec<&str> = md.lines().collect();
    // Counted, the 0.97× pair would make the median 1.10×, within the target.
    assert!(lines.contains(&"| **converge**: first create → all fleets Ready (× the floor's) | ≤ 1.1× at 1,000 | 20.0 s (2.00×) | 130.0 s (1.30×; median of 2 of 3 pairs 1.20×, pair 2 excluded: ratio 0.97× < 1.00×, the floor was slow) ✗ |"), "{md}");
    assert!(
        lines.contains(&"| 2 | 100.0 s | 97.0 s | 0.97× (excluded: below 1.00×, the floor was slow) | 12.3 (7.0) | 0 | 1.50 | 50.0 MiB |"),
        "{md}"
    );
    assert!(
        md.contains("Median converge ratio **1.20×** (2 of 3 pairs, pair 2 excluded: ratio 0.97× < 1.00×, the floor was slow; spread 1.10×–1.30×; target ≤ 1.1×) ✗; median CPU per idle minute 1.50 s (target ≤ 0.5 s) ✗."),
        "{md}"
    );
    // Every pair below 1: nothing is judged.
    r.scales[1] = scale(1000, 100, 95, 50 * 1024);
    r.repeats[1] = scale(1000, 100, 99, 50 * 1024);
    let md = render(&r);
    assert!(md.contains("| 95.0 s (0.95×; no pair counts, pair 1 excluded: ratio 0.95× < 1.00×, pair 2 excluded: ratio 0.97× < 1.00×, pair 3 excluded: ratio 0.99× < 1.00×, their floors were slow) — below 1: the floor is wrong, not judged; measure again |"), "{md}");
    assert!(
        md.contains("\nNo converge ratio to judge: pair 1 excluded"),
        "{md}"
    );
}

#[test]
fn the_fake_nodes_show_the_calibration_curve_and_the_choice() {
    let md = render(&results());
    let lines: Vec<&str> = md.lines().collect();
    assert!(md.contains("from 3 (room for 800 pods each), doubled until a run was less than 5 % faster than the one before; the fastest run chose the fake nodes of every floor and operator run above (6)"), "{md}");
    assert!(lines.contains(&"| 3 | 120.0 s |  | 333 |"), "{md}");
    assert!(
        lines.contains(&"| 6 (chosen) | 50.0 s | 0.42× | 800 |"),
        "{md}"
    );
    assert!(lines.contains(&"| 12 | 52.0 s | 1.04× | 769 |"), "{md}");
    let mut given = results();
    given.nodes = Some(Nodes::Given(40));
    assert!(render(&given).contains("had 40 fake nodes, as `--nodes` asked (not calibrated)"));
}

#[test]
fn the_api_server_has_a_row_per_run_with_its_rate_latencies_cluster_ips_and_kwok_s_refusals() {
    let md = render(&results());
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines.contains(&"| floor, 100 fleets | 10.0 s | 4,000 | 400 | 2.0 ms | 8.0 ms | 40.0 ms | 1,000 | 4.0 ms | 16.0 ms | 80.0 ms | 1.0 ms | 0 |"), "{md}");
    assert!(lines.contains(&"| operator, 1,000 fleets | 150.0 s | 50,000 | 333 | 3.0 ms | 12.0 ms | 60.0 ms | 12,500 | 6.0 ms | 24.0 ms | 120 ms | 1.0 ms | 200 |"), "{md}");
    assert!(md.contains("*kwok refused* counts the stage plays"), "{md}");
    assert!(
        md.contains("*cluster IP p50* is how long the API server took"),
        "{md}"
    );
}

#[test]
fn the_cpu_has_a_row_per_run_with_the_machine_s_busy_share_and_each_process() {
    let md = render(&results());
    let lines: Vec<&str> = md.lines().collect();
    assert!(
        md.contains("the share of the machine's 2 cores that was busy"),
        "{md}"
    );
    assert!(lines.contains(&"| run | converge | machine busy | kube-apiserver | etcd | kube-controller-manager | kube-scheduler | kwok | s3s-fs | operator | bench |"), "{md}");
    assert!(
        lines.contains(
            &"| floor, 100 fleets | 10.0 s | 95 % | 50.0 s | – | – | – | – | – | – | 7.0 s |"
        ),
        "{md}"
    );
    assert!(
        lines.contains(
            &"| operator, 1,000 fleets | 150.0 s | 90 % | 40.0 s | – | – | – | – | – | 12.3 s | – |"
        ),
        "{md}"
    );
}

#[test]
fn one_count_alone_is_judged_at_10000_in_its_own_report() {
    let mut r = results();
    r.single = Some(10_000);
    r.invocation = ["--single", "10000", "--nodes", "25"]
        .map(String::from)
        .to_vec();
    r.nodes = Some(Nodes::Given(25));
    r.scales = vec![scale(10_000, 600, 630, 200 * 1024)];
    r.scales[0].operator.capacity_round = Some(crate::results::CapacityRound {
        shown: 10_000,
        took: Duration::from_secs(2_280),
        settled: Duration::from_secs(2_291),
    });
    r.churn = None;
    r.previews = None;
    r.rollout = None;
    r.plugin = None;
    r.skipped.clear();
    let md = render(&r);
    let lines: Vec<&str> = md.lines().collect();
    assert!(md.starts_with("# celld-operator at 10,000 fleets\n\nWritten by `celld-bench --single 10000 --nodes 25` (as `make bench FLEETS=\"10000 --nodes 25\"` runs it): one fleet count alone, on 25 fake nodes as `--nodes` asked (not calibrated). The operator against a floor"), "{md}");
    assert!(lines.contains(&"| **converge**: first create → all fleets Ready (× the floor's) | ≤ 1.1× at 10,000 | 630.0 s (1.05×) ✓ |"), "{md}");
    assert!(lines.contains(&"| resident memory after settling (× empty operator) | ≤ 256 MiB at 10,000 | 200.0 MiB (12.50×) ✓ |"), "{md}");
    assert!(
        lines.contains(&"| CPU seconds per idle minute | ≤ 1 at 10,000 | 1.50 ✗ |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| API requests per idle minute | ≤ 50 at 10,000 | 40 ✓ |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| … per fleet (writes per fleet) | | 1.2 (0.1) |"),
        "{md}"
    );
    assert!(lines.contains(&"| first capacity round, waited for before idle: all fleets show their capacity (how many), then settled | | 2280.0 s (10,000), 2291.0 s |"), "{md}");
    assert!(!md.contains("scaling.svg"), "{md}");
    assert!(!md.contains("## Churn"), "{md}");
    assert_eq!(file_name(Some(10_000), None), "REPORT-10000.md");
    assert_eq!(file_name(None, None), "REPORT.md");
}

#[test]
fn a_rollout_alone_has_a_report_of_its_own_with_only_its_section() {
    let mut r = results();
    r.invocation = ["--rollout", "200"].map(String::from).to_vec();
    r.rollout_alone = Some(200);
    r.nodes = None;
    r.scales.clear();
    r.churn = None;
    r.previews = None;
    r.plugin = None;
    r.skipped.clear();
    let md = render(&r);
    assert!(md.starts_with("# celld-operator: a rollout over 200 fleets\n\nWritten by `celld-bench --rollout 200` (as `make bench BENCH_FLEETS=\"--rollout 200\"` runs it). A CelldRollout under the operator against a floor"), "{md}");
    assert!(!md.contains("No fleet count was measured"), "{md}");
    assert!(md.contains("\n## Rollout\n"), "{md}");
    assert!(
        !md.contains("## Previews") && !md.contains("scaling.svg"),
        "{md}"
    );
    assert_eq!(file_name(None, Some(200)), "REPORT-rollout-200.md");
}

#[test]
fn the_largest_count_s_pairs_are_listed_and_judged_on_their_median() {
    let mut r = results();
    r.scales[1] = scale(1000, 100, 125, 50 * 1024);
    r.repeats = vec![
        scale(1000, 100, 105, 50 * 1024),
        scale(1000, 100, 108, 50 * 1024),
    ];
    r.repeats[0].operator.idle_cpu = Duration::from_millis(400);
    r.repeats[1].operator.idle_cpu = Duration::from_millis(450);
    let md = render(&r);
    let lines: Vec<&str> = md.lines().collect();
    assert!(lines.contains(&"| **converge**: first create → all fleets Ready (× the floor's) | ≤ 1.1× at 1,000 | 20.0 s (2.00×) | 125.0 s (1.25×; median of 3 pairs 1.08×) ✓ |"), "{md}");
    assert!(
        lines.contains(&"| CPU seconds per idle minute | ≤ 0.5 at 1,000 | 1.50 | 1.50 (median of 3 pairs 0.45) ✓ |"),
        "{md}"
    );
    assert!(md.contains("### 1,000 fleets, pair by pair"), "{md}");
    assert!(
        lines.contains(&"| 2 | 100.0 s | 105.0 s | 1.05× | 12.3 (7.0) | 0 | 0.40 | 50.0 MiB |"),
        "{md}"
    );
    assert!(
        md.contains("Median converge ratio **1.08×** (spread 1.05×–1.25×; target ≤ 1.1×) ✓; median CPU per idle minute 0.45 s (target ≤ 0.5 s) ✓."),
        "{md}"
    );
    // One pair: no such section, and the ratio stands alone.
    assert!(!render(&results()).contains("pair by pair"));
}

#[test]
fn everyone_s_writes_while_converging_show_the_floor_s_run_beside_the_operator_s() {
    let md = render(&results());
    assert!(
        md.contains("### Everyone's writes while 1,000 fleets converged, per fleet"),
        "{md}"
    );
    assert!(
        md.contains("| resource | verb | operator's run, 1,000 | floor's run, 1,000 |\n|---|---|---|---|\n| endpoints | update | 2.00 | 0.25 |"),
        "{md}"
    );
}

#[test]
fn a_count_below_10000_measured_alone_is_judged_at_1000() {
    let mut r = results();
    r.single = Some(1000);
    r.scales = vec![scale(1000, 100, 105, 50 * 1024)];
    let md = render(&r);
    assert!(md.contains("| 105.0 s (1.05×) ✓ |"), "{md}");
    assert!(
        md.contains("| resident memory after settling (× empty operator) | ≤ 64 MiB at 1,000 |"),
        "{md}"
    );
}

#[test]
fn the_churn_and_what_was_not_measured_have_sections() {
    let md = render(&results());
    assert!(
        md.contains(
            "| resident memory 120 s after the churn (× empty) | ≤ 1.2× | 18.0 MiB (1.12×) ✓ |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| resident memory 10 s after the churn (× empty) | | 24.0 MiB (1.50×) |"),
        "{md}"
    );
    assert!(
        md.contains("| resident memory as each cycle's fleets were gone | | 25.0 MiB, 25.5 MiB |"),
        "{md}"
    );
    assert!(
        md.contains("| … of which file-backed (the binary's code paged in), empty → warm → 120 s after | | 10.0 MiB → 11.0 MiB → 11.0 MiB |"),
        "{md}"
    );
    assert!(
        md.contains("| resident memory 10 s after one fleet came and went, before the cycles: the warm empty operator (× empty) | | 17.0 MiB (1.06×) |"),
        "{md}"
    );
    assert!(
        md.contains("| … × the warm empty operator | | 1.06× |"),
        "{md}"
    );
    assert!(md.contains(
        "| cycles (first create → all Ready + deletion → all gone) | | 30.0 s (20.0 s + 10.0 s), 31.0 s (19.0 s + 12.0 s) |"
    ), "{md}");
    assert!(
        md.contains(
            "| open TCP connections 120 s after the churn (API server, S3, other) | | 3 (2, 1, 0) |"
        ),
        "{md}"
    );
    assert!(
        md.contains("| API requests over the churn (writes, 5xx) | | 9,000 (4,000, 2) |"),
        "{md}"
    );
    assert!(md.contains("- 3,000 fleets: not asked"), "{md}");
    let (churn, previews, rollout, plugin) = (
        md.find("\n## Churn").unwrap(),
        md.find("\n## Previews").unwrap(),
        md.find("\n## Rollout").unwrap(),
        md.find("\n## Plugin start-up").unwrap(),
    );
    assert!(
        churn < previews && previews < rollout && rollout < plugin,
        "{md}"
    );
    assert!(md.contains("- **Previews**: "), "{md}");
    assert!(
        md.contains("| `kubectl celld --version` (× floor) | ≤ 20 ms | 4.2 ms (4.7×) ✓ |"),
        "{md}"
    );
    assert!(!md.contains("took longer than the 20 minutes"), "{md}");
    let mut slow = results();
    slow.total = Duration::from_secs(21 * 60);
    assert!(render(&slow).contains("took longer than the 20 minutes"));
    assert!(md.contains("Whole run: 12 min 34 s on 2 cores, 2026-01-01 (1-minute load average 2.5 at the start, 3.3 at the end)."), "{md}");
    assert!(
        md.contains(
            "- Time per run, control plane start and stop included: floor, 100 fleets 1 min 01 s."
        ),
        "{md}"
    );
}

#[test]
fn requests_are_broken_down_per_fleet_by_resource_and_verb_next_to_the_floor() {
    let mut r = results();
    r.scales[1]
        .operator
        .by_resource
        .insert(("events".into(), "create".into()), 500);
    let md = render(&r);
    let lines: Vec<&str> = md.lines().collect();
    assert!(
        lines.contains(
            &"| resource | verb | 100 fleets | floor, 100 | 1,000 fleets | floor, 1,000 |"
        ),
        "{md}"
    );
    assert!(
        lines.contains(&"| celldfleets/status | patch | 3.00 | 1.00 | 3.00 | 1.00 |"),
        "{md}"
    );
    // A kind only one run sent shows 0 for the others.
    assert!(
        lines.contains(&"| events | create | 0.00 | 0.00 | 0.50 | 0.00 |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| secrets | get | 0.50 | 0.00 | 0.50 | 0.00 |"),
        "{md}"
    );
    assert!(
        lines.contains(&"| statefulsets | patch | 1.00 | 1.00 | 1.00 | 1.00 |"),
        "{md}"
    );
}

#[test]
fn numbers_are_grouped_by_thousands() {
    assert_eq!(thousands(0), "0");
    assert_eq!(thousands(999), "999");
    assert_eq!(thousands(1000), "1,000");
    assert_eq!(thousands(1234567), "1,234,567");
}

#[test]
fn the_method_gives_the_spread_of_this_run_s_pairs() {
    let mut r = results();
    r.scales[1] = scale(1000, 100, 125, 50 * 1024);
    r.repeats = vec![
        scale(1000, 100, 105, 50 * 1024),
        scale(1000, 100, 108, 50 * 1024),
    ];
    let md = render(&r);
    assert!(
        md.contains("- **Pairs**: 1,000 fleets ran 3 pairs of floor and operator (`--pairs`), one after the other, floor first, each on a fresh control plane: one pair's converge ratio moves from run to run on a shared machine (here from 1.05× to 1.25×), so"),
        "{md}"
    );
    r.repeats[0] = scale(1000, 100, 97, 50 * 1024);
    assert!(render(&r).contains("(here from 0.97× to 1.25×)"), "{md}");
}

#[test]
fn the_method_times_a_round_of_capacity_reads_for_the_largest_count() {
    let md = render(&results());
    assert!(
        md.contains("at its first reconcile once the fleet is 5 min old and its nodes were read (in turn, at the operator's `--capacity-reads-per-second`, 10 node reads a second by default: a round of 1,000 fleets of 2 nodes takes 3 min 20 s)."),
        "{md}"
    );
    assert!(
        md.contains("(at most 5 min and two rounds from the first create)"),
        "{md}"
    );
    let mut alone = results();
    alone.single = Some(10_000);
    alone.scales = vec![scale(10_000, 600, 630, 200 * 1024)];
    assert!(
        render(&alone).contains("a round of 10,000 fleets of 2 nodes takes 33 min 20 s)"),
        "{md}"
    );
}
