//! bench/REPORT.md.

use crate::measure::Results;
use std::path::PathBuf;

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

/// Writes the report next to the workspace's `bench/` directory and returns its path.
pub fn write(r: &Results) -> std::io::Result<PathBuf> {
    let mut out = String::from("# celld-operator benchmark\n\n");
    out.push_str(&format!(
        "Measured by `make bench` on {} ({} cores), the operator built in release mode, running as its own process against the local control plane (kube-apiserver v1.36.3, etcd, kwok fake nodes, s3s-fs). Each fleet: 2 nodes, an Ingress, inline storage with a published deployment.\n\n",
        jiff::Zoned::now().date(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
    ));
    out.push_str("| fleets | all Ready after | per fleet | RSS after | peak RSS | RSS per fleet over empty | writes to converge | writes per fleet | idle reconciles | idle writes |\n");
    out.push_str("|---|---|---|---|---|---|---|---|---|---|\n");
    for s in &r.samples {
        let per_fleet_kib =
            s.rss_kib.saturating_sub(s.baseline_kib) as f64 / s.fleets.max(1) as f64;
        out.push_str(&format!(
            "| {} | {:.1} s | {:.0} ms | {} MiB | {} MiB | {:.0} KiB | {} | {:.1} | {} | {} |\n",
            s.fleets,
            s.to_ready.as_secs_f64(),
            s.to_ready.as_secs_f64() * 1000.0 / s.fleets.max(1) as f64,
            mib(s.rss_kib),
            mib(s.peak_kib),
            per_fleet_kib,
            s.writes_to_converge,
            s.writes_to_converge as f64 / s.fleets.max(1) as f64,
            s.idle_reconciles,
            s.idle_writes,
        ));
    }
    out.push_str(&format!(
        "\n- RSS of the operator before the fleets were created: {} MiB.\n- Idle window: {} s of periodic reconciles (every fleet every 5 s) after all were Ready; every reconcile in it changed nothing, so it must write nothing.\n- Pure builders (every child of one fleet): {:.1} µs per fleet.\n",
        mib(r.samples.first().map_or(0, |s| s.baseline_kib)),
        r.idle_window.as_secs(),
        r.build_micros
    ));
    if let (Some(first), Some(last)) = (r.samples.first(), r.samples.last())
        && first.fleets != last.fleets
    {
        out.push_str(&format!(
            "- From {} to {} fleets ({:.0}x): time to Ready grew {:.1}x, resident memory {:.2}x.\n",
            first.fleets,
            last.fleets,
            last.fleets as f64 / first.fleets as f64,
            last.to_ready.as_secs_f64() / first.to_ready.as_secs_f64(),
            last.rss_kib as f64 / first.rss_kib.max(1) as f64,
        ));
    }
    out.push_str("- No other celld operator was measured on the same control plane, so there is no side-by-side ratio with them yet.\n");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench");
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("REPORT.md");
    std::fs::write(&path, out)?;
    Ok(path)
}
