//! The report's section on the rollout: a CelldRollout over many fleets on two stores, its
//! waves against their floor (each wave's publish round trip and its bake), its requests, and
//! the operator at rest once it finished.

use super::format::{mib, ms, secs, thousands, times, verdict};
use super::requests::{Column, table};
use super::targets::AT_1000;
use crate::results::rollout::{RolloutRun, WaveRun};
use crate::rollout::workload::WAVES;
use crate::settings::{CONCURRENCY, QUIET};
use std::fmt::Write as _;
use std::time::Duration;

/// Writes the rollout section, linking its plot `plot`.
pub fn rollout(out: &mut String, r: &RolloutRun, plot: &str) {
    intro(out, r);
    summary(out, r);
    waves(out, r);
    let _ = writeln!(
        out,
        "\n![the rollout's waves on a timeline from the apply, the operator's above the floor's]({plot})"
    );
    let _ = writeln!(
        out,
        "\n### Requests of the rollout, per fleet\n\nThe operator's requests from the apply until it \
settled, by resource and verb, reads and writes, divided by the {} fleets: a deploy Job and a status or \
more per fleet, the rollout's own statuses, and the Events of both.\n",
        thousands(r.fleets as u64)
    );
    table(
        out,
        &[Column {
            header: format!("rollout over {} fleets", thousands(r.fleets as u64)),
            counts: &r.by_resource,
            per: r.fleets,
        }],
    );
    events(out, r);
    plane(out, r);
    let _ = writeln!(
        out,
        "\n### Requests in the idle minute after it, by resource and verb\n\nThe operator's requests in \
the {} s after it settled, counted (not per fleet).\n",
        r.idle_window.as_secs()
    );
    table(
        out,
        &[Column {
            header: "idle window".into(),
            counts: &r.idle_by_resource,
            per: 1,
        }],
    );
}

/// The control plane over the floor's rounds and over the rollout: its CPU, the API server's
/// load and everyone's writes.
fn plane(out: &mut String, r: &RolloutRun) {
    let (floor, rollout) = (&r.floor_plane, &r.rollout_plane);
    let _ = writeln!(
        out,
        "\n### The control plane: the floor's rounds beside the rollout\n\nOver the floor's {} rounds \
before the rollout (one after the other, each waited for), and from the apply until the rollout was \
`Succeeded`: where the machine's CPU went (the machine is shared: its busy share counts other work \
too), what the API server handled from everyone, and everyone's writes by resource and verb, divided \
by the fleets (the floor's rounds publish to each fleet once too).\n",
        r.waves.iter().filter(|w| w.fleets > 0).count()
    );
    let (floor_name, rollout_name) = ("the floor's rounds", "the rollout");
    super::cpu::header(out, "window");
    super::cpu::row(out, floor_name, &floor.cpu);
    super::cpu::row(out, rollout_name, &rollout.cpu);
    out.push('\n');
    super::server::header(out, "window");
    super::server::row(out, floor_name, &floor.server, floor.kwok_refused);
    super::server::row(out, rollout_name, &rollout.server, rollout.kwok_refused);
    out.push('\n');
    table(
        out,
        &[
            Column {
                header: "the floor's rounds, everyone".into(),
                counts: &floor.writes,
                per: r.fleets,
            },
            Column {
                header: "the rollout, everyone".into(),
                counts: &rollout.writes,
                per: r.fleets,
            },
        ],
    );
}

/// The operator's Events while the rollout ran, per fleet, by kind, type and reason.
fn events(out: &mut String, r: &RolloutRun) {
    if r.events.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\n### Events of the rollout, per fleet\n\nThe operator's Events in the rollout's namespace \
created from the apply on (read back from the API server once it settled), by the kind of object, \
type and reason, divided by the fleets.\n\n| object | type | reason | per fleet |\n|---|---|---|---|"
    );
    for (key, n) in &r.events {
        let mut words = key.splitn(3, ' ');
        let (kind, type_, reason) = (
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
            words.next().unwrap_or_default(),
        );
        let _ = writeln!(
            out,
            "| {kind} | {type_} | {reason} | {:.2} |",
            *n as f64 / r.fleets.max(1) as f64
        );
    }
}

fn intro(out: &mut String, r: &RolloutRun) {
    let bake = r.waves.first().map_or(Duration::ZERO, |w| w.bake);
    let _ = writeln!(
        out,
        "\n## Rollout\n\nOne CelldRollout shipping an image revision to {fleets} fleets of one namespace \
(a rollout ships to its own namespace's fleets), spread in turn over {stores} CelldObjectStores, each \
reading a bucket of its own on the S3 server; waves `{waves}` (each counted over all the fleets, earlier \
waves included), each baking {bake} s, no bound on a wave's fleets publishing at once, no webhook; on \
{nodes} under one operator on a fresh control plane. The fleets were created and Ready (after {ready}) \
and the operator had settled before the rollout was applied. kwok runs no container: the bench plays \
the kubelet of every deploy pod as soon as a watch sees it, as the rollout tests do (it writes the \
fleet's pointer to name the new version as `celld deploy` would, tells the stand-in for the nodes' API \
that the fleet's pointer moved, and annotates the pod for kwok to end it Succeeded with the script's \
result), and the stand-in answers the nodes' adoption (`POST /reload`, then `GET /state`). Times come \
from the bench's watches of the rollout, the fleets and the deploy pods.\n\n\
The floor of a wave is its publish round trip and its bake. The round trip: as many deploy Jobs as the \
wave has fleets, rendered by the operator's own builder for those fleets, created at once from \
{CONCURRENCY} client tasks in the fleets' namespace (where the control plane's Endpoints, EndpointSlice \
and PodDisruptionBudget controllers look at every Service and budget of the namespace on each change of a \
pod, as they do for the operator's deploy pods), without an owner or the operator's label (so the \
operator neither caches nor deletes them), played by the same stand-in, until \
a watch has seen every one `Complete`, with no operator acting; measured once before the rollout and \
once after its idle window, the faster counting. An operator that publishes with deploy Jobs cannot \
see a wave's last publish end sooner after the wave starts (it creates the Jobs once it knows the wave \
started, and reads a publish as done from its Job), nor pass a wave before its bake ran; the status \
writes in between (each fleet's, the rollout's) and the watches that carry them are left out, so the \
floor is below what any operator can reach. The rollout's floor is the sum of its waves'; a wave \
without fleets neither publishes nor bakes.",
        fleets = thousands(r.fleets as u64),
        stores = r.stores,
        waves = WAVES.join(", "),
        bake = bake.as_secs(),
        nodes = crate::settings::fake_nodes(r.nodes),
        ready = secs(r.fleets_ready),
    );
}

/// One row of a two-column table.
fn row(out: &mut String, label: &str, target: &str, measured: String) {
    let target = if target.is_empty() {
        " ".to_string()
    } else {
        format!(" {target} ")
    };
    let _ = writeln!(out, "| {label} |{target}| {measured} |");
}

fn summary(out: &mut String, r: &RolloutRun) {
    let _ = writeln!(out, "\n| | target | measured |\n|---|---|---|");
    row(
        out,
        "**floor**: every wave's publish round trip and bake (the bakes alone)",
        "",
        format!("{} ({})", secs(r.floor()), secs(r.bakes())),
    );
    row(
        out,
        "apply → rollout `Succeeded` (× the floor)",
        "",
        format!("{} ({})", secs(r.succeeded), times(r.ratio())),
    );
    row(out, "apply → first wave `Publishing`", "", at(r.first_wave));
    let note = if r.writes_stopped {
        ""
    } else {
        " (writes never stopped)"
    };
    row(
        out,
        &format!("apply → settled (no write for {} s)", QUIET.as_secs()),
        "",
        format!("{}{note}", secs(r.settled)),
    );
    let t = r.to_settle;
    row(
        out,
        "API requests until settled (writes)",
        "",
        format!("{} ({})", thousands(t.requests), thousands(t.writes)),
    );
    let allowance = AT_1000.requests_over_floor.unwrap_or(0.0);
    let most = r.request_floor_per_fleet() + allowance;
    let per = r.requests_per_fleet();
    row(
        out,
        "… per fleet",
        &format!("≤ the floor's + {allowance:.0}"),
        format!("{per:.1}{}", verdict(per <= most)),
    );
    row(
        out,
        "… the floor's per fleet: a deploy Job and a status per fleet, and the rollout's statuses (2 a wave and 1)",
        "",
        format!("{:.2}", r.request_floor_per_fleet()),
    );
    row(
        out,
        "server errors (5xx) until settled",
        "0",
        format!("{}{}", t.server_errors, verdict(t.server_errors == 0)),
    );
    let statuses = r.statuses.max(1);
    row(
        out,
        "rollout statuses written (seen by a watch): per fleet, average and largest size",
        "",
        format!(
            "{} ({:.2}), {:.0} KiB and {:.0} KiB",
            thousands(r.statuses),
            r.statuses as f64 / r.fleets.max(1) as f64,
            r.status_bytes as f64 / statuses as f64 / 1024.0,
            r.largest_status as f64 / 1024.0
        ),
    );
    row(
        out,
        "… their JSON written in all",
        "",
        mib(r.status_bytes / 1024),
    );
    row(
        out,
        "rollout reconciles while it progressed (the operator's log), fleet reconciles until settled (its metrics)",
        "",
        format!(
            "{}, {}",
            thousands(r.rollout_reconciles),
            r.fleet_reconciles
                .map_or_else(|| "–".to_string(), thousands)
        ),
    );
    row(
        out,
        "operator CPU seconds, apply → settled",
        "",
        format!("{:.2}", r.cpu.as_secs_f64()),
    );
    row(
        out,
        "the stand-in for the deploy pods: its time per pod, seen → played (p50, p99, largest)",
        "",
        format!(
            "{}, {}, {} over {} pods",
            ms(r.player.spread.p50),
            ms(r.player.spread.p99),
            ms(r.player.max),
            thousands(r.player.pods)
        ),
    );
    row(
        out,
        "… of which until the pointer was written (the S3 server's; p50, p99)",
        "",
        format!("{}, {}", ms(r.player.pointer.p50), ms(r.player.pointer.p99)),
    );
    if r.capacity_first_shown > 0 {
        row(
            out,
            "fleets first showing their capacity meanwhile (a once-only write at 5 minutes of age)",
            "",
            thousands(r.capacity_first_shown),
        );
    }
    let idle = r.idle_requests_per_minute();
    row(
        out,
        "API requests per idle minute once it finished",
        &format!(
            "≤ {:.0} at {}",
            AT_1000.idle_requests,
            thousands(AT_1000.fleets as u64)
        ),
        format!(
            "{idle:.0} ({:.2} a second){}",
            idle / 60.0,
            verdict(idle <= AT_1000.idle_requests)
        ),
    );
    row(
        out,
        "writes per idle minute",
        "0",
        format!(
            "{:.0}{}",
            r.idle_writes_per_minute(),
            verdict(r.idle.writes == 0)
        ),
    );
    row(
        out,
        "server errors (5xx) while idle",
        "0",
        format!(
            "{}{}",
            r.idle.server_errors,
            verdict(r.idle.server_errors == 0)
        ),
    );
    let cpu = r.idle_cpu_seconds_per_minute();
    row(
        out,
        "CPU seconds per idle minute",
        &format!(
            "≤ {} at {}",
            AT_1000.idle_cpu,
            thousands(AT_1000.fleets as u64)
        ),
        format!("{cpu:.2}{}", verdict(cpu <= AT_1000.idle_cpu)),
    );
    row(
        out,
        "node GET /state reads per idle minute (capacity)",
        "",
        format!("{:.0}", r.idle_state_reads_per_minute()),
    );
    let empty = r.empty_rss_kib.max(1) as f64;
    row(
        out,
        "resident memory with the fleets settled, before the rollout (× empty operator)",
        "",
        format!(
            "{} ({})",
            mib(r.before_rss_kib),
            times(r.before_rss_kib as f64 / empty)
        ),
    );
    row(
        out,
        "resident memory after the rollout settled (× empty operator)",
        "",
        format!(
            "{} ({})",
            mib(r.settled_rss_kib),
            times(r.settled_rss_kib as f64 / empty)
        ),
    );
}

/// A time from a wave's start, or `–`.
fn at(d: Option<Duration>) -> String {
    d.map_or_else(|| "–".to_string(), secs)
}

fn waves(out: &mut String, r: &RolloutRun) {
    let _ = writeln!(
        out,
        "\n### Wave by wave\n\nEach wave's times run from the moment a watch first saw it `Publishing` \
(the status that passes a wave starts the next): until the operator's first and last create of one \
of its fleets' deploy Jobs was received (the audit log), the last of its deploy pods was seen (the \
Job controller made it), the stand-in had played the last (pointer \
written, pod annotated to end), the last was seen Succeeded, the last of its fleets' statuses said it \
serves the new version (Adopted, Ready), the wave was seen `Baking` and `Passed`. *baked* is from \
`Baking` to `Passed`. The floor's rounds are the publish round trips of the wave's size before the \
rollout and after its idle window.\n"
    );
    let _ = writeln!(
        out,
        "| wave | fleets | floor: round trip + bake | passed (× floor) | Jobs created: first, last | pods seen | played | pods Succeeded | fleets serving | `Baking` | baked | floor's rounds |\n\
|---|---|---|---|---|---|---|---|---|---|---|---|"
    );
    for w in &r.waves {
        wave_row(out, w);
    }
}

fn wave_row(out: &mut String, w: &WaveRun) {
    let rounds: Vec<String> = w.floor_rounds.iter().map(|r| secs(r.complete)).collect();
    let passed = match w.passed {
        Some(p) if w.fleets > 0 => format!("{} ({})", secs(p), times(w.ratio())),
        other => at(other),
    };
    let _ = writeln!(
        out,
        "| {} | {} | {} + {} | {passed} | {}, {} | {} | {} | {} | {} | {} | {} | {} |",
        w.number,
        w.fleets,
        secs(w.round_trip()),
        secs(w.floor_bake()),
        at(w.first_job),
        at(w.jobs_created),
        at(w.pods_seen),
        at(w.played),
        at(w.pods_succeeded),
        at(w.serving),
        at(w.baking),
        at(w.baked()),
        if rounds.is_empty() {
            "–".to_string()
        } else {
            rounds.join(", ")
        },
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::results::rollout::tests::run;

    #[test]
    fn the_rollout_is_judged_against_its_floor_wave_by_wave() {
        let mut md = String::new();
        rollout(&mut md, &run(), "rollout.svg");
        assert!(md.contains("\n## Rollout\n"), "{md}");
        assert!(md.contains("waves `1, 10%, 50%, 100%`"), "{md}");
        assert!(
            md.contains(
                "| **floor**: every wave's publish round trip and bake (the bakes alone) | | 27.8 s (20.0 s) |"
            ),
            "{md}"
        );
        assert!(
            md.contains("| apply → rollout `Succeeded` (× the floor) | | 34.0 s (1.22×) |"),
            "{md}"
        );
        assert!(
            md.contains("| … per fleet | ≤ the floor's + 5 | 5.0 ✓ |"),
            "{md}"
        );
        assert!(
            md.contains("| 3 | 80 | 2.4 s + 5.0 s | 9.0 s (1.22×) | 0.1 s, 0.2 s | 0.3 s | 0.3 s | 0.9 s | 1.5 s | 1.6 s | 7.4 s | 2.5 s, 2.4 s |"),
            "{md}"
        );
        assert!(
            md.contains("| API requests per idle minute once it finished | ≤ 50 at 1,000 | 45 (0.75 a second) ✓ |"),
            "{md}"
        );
        assert!(
            md.contains("| CPU seconds per idle minute | ≤ 0.5 at 1,000 | 0.12 ✓ |"),
            "{md}"
        );
        assert!(
            md.contains("| celldrollouts/status | patch | 1.50 |"),
            "{md}"
        );
        assert!(md.contains("| rollout statuses written (seen by a watch): per fleet, average and largest size | | 300 (1.50), 49 KiB and 59 KiB |"), "{md}");
        assert!(!md.contains("capacity meanwhile"), "{md}");
        assert!(md.contains("](rollout.svg)"), "{md}");
        assert!(
            md.contains("| CelldFleet | Normal | Published | 1.00 |"),
            "{md}"
        );
        assert!(md.contains("| celldfleets | watch | 2.00 |"), "{md}");
        assert!(
            md.contains("| apply → first wave `Publishing` | | 0.4 s |"),
            "{md}"
        );
        assert!(md.contains("| resident memory with the fleets settled, before the rollout (× empty operator) | | 24.0 MiB (1.50×) |"), "{md}");
    }
}
