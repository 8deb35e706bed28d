//! How long `kubectl celld --version` takes to start and exit, against a floor measured in the
//! same run: a process that does nothing (`true`), so the cost of starting any process on this
//! machine is visible next to the plugin's own.

use crate::error::{Error, Result};
use crate::results::PluginStart;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Where `make bench` puts the release build of the plugin.
pub const PLUGIN_BIN_ENV: &str = "CELLD_PLUGIN_BIN";

/// Runs of each command; the median is reported.
pub const RUNS: usize = 50;

/// The start-up target of the plugin issue.
pub const TARGET: Duration = Duration::from_millis(20);

/// The release plugin named by `$CELLD_PLUGIN_BIN`.
pub fn binary() -> Result<PathBuf> {
    crate::operator::process::env_binary(
        PLUGIN_BIN_ENV,
        Error::NoPlugin,
        "finding the plugin binary ($CELLD_PLUGIN_BIN)",
    )
}

/// The median of [`RUNS`] runs of `program args`, each of which must succeed.
fn median_run(program: &Path, args: &[&str]) -> Result<Duration> {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let started = Instant::now();
        let status = Command::new(program)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .map_err(Error::io("running a start-up probe", program))?;
        let took = started.elapsed();
        if !status.success() {
            return Err(Error::Probe {
                command: format!("{} {}", program.display(), args.join(" ")),
                status: status.to_string(),
            });
        }
        times.push(took);
    }
    times.sort_unstable();
    Ok(times[RUNS / 2])
}

/// Measures the floor, then `plugin --version`, one right after the other.
pub fn measure(plugin: &Path) -> Result<PluginStart> {
    let floor = median_run(Path::new("true"), &[])?;
    let plugin_time = median_run(plugin, &["--version"])?;
    Ok(PluginStart {
        plugin: plugin_time,
        floor,
    })
}

/// The report's section on the plugin.
pub fn section(out: &mut String, p: &PluginStart) {
    let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1000.0);
    let mark = if p.plugin <= TARGET { " ✓" } else { " ✗" };
    let _ = writeln!(
        out,
        "\n## Plugin start-up\n\nThe release build of `kubectl-celld`, median of {RUNS} runs.\n"
    );
    let _ = writeln!(out, "| | target | measured |\n|---|---|---|");
    let _ = writeln!(out, "| **floor**: `true` | | {} |", ms(p.floor));
    let _ = writeln!(
        out,
        "| `kubectl celld --version` (× floor) | ≤ 20 ms | {} ({:.1}×){mark} |",
        ms(p.plugin),
        crate::results::ratio(p.plugin, p.floor)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn section_marks_the_target() {
        let mut out = String::new();
        section(
            &mut out,
            &PluginStart {
                plugin: Duration::from_micros(3_500),
                floor: Duration::from_micros(1_000),
            },
        );
        assert!(
            out.contains("| `kubectl celld --version` (× floor) | ≤ 20 ms | 3.5 ms (3.5×) ✓ |"),
            "{out}"
        );
        let mut slow = String::new();
        section(
            &mut slow,
            &PluginStart {
                plugin: Duration::from_millis(25),
                floor: Duration::from_millis(1),
            },
        );
        assert!(slow.contains("25.0 ms (25.0×) ✗"), "{slow}");
    }

    #[test]
    fn a_failing_probe_is_an_error() {
        let err = median_run(Path::new("false"), &[]).unwrap_err().to_string();
        assert!(err.contains("false"), "{err}");
    }
}
