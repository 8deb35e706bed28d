//! Where the CPU went while the fleets converged: the machine's busy share of its cores
//! (`/proc/stat`) and the CPU time of each process that shares them (the control plane's
//! components, the operator, the bench itself). On a machine of few cores they all compete
//! with the API server, so a run that spends more CPU outside it leaves it less.

use super::proc_stats::{clock_tick, cpu_ticks};
use std::time::{Duration, Instant};

/// CPU use over one window.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CpuUse {
    /// How long the window was.
    pub window: Duration,
    /// The machine's cores.
    pub cores: usize,
    /// The share of all cores' time that was busy (not idle, not waiting for I/O), 0 to 1;
    /// `None` where `/proc/stat` could not be read.
    pub machine_busy: Option<f64>,
    /// The CPU time (user + system) of each process measured, by name.
    pub processes: Vec<(String, Duration)>,
}

impl CpuUse {
    /// The CPU time of the process named `name`, if it was measured.
    pub fn of(&self, name: &str) -> Option<Duration> {
        self.processes
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, cpu)| *cpu)
    }
}

/// A measurement under way: what was read when it started.
#[derive(Debug)]
pub struct CpuMeter {
    started: Instant,
    machine: Option<MachineTicks>,
    processes: Vec<(String, u32, u64)>,
}

impl CpuMeter {
    /// Starts measuring the machine and `processes` (name, pid).
    pub fn start(processes: Vec<(String, u32)>) -> Self {
        CpuMeter {
            started: Instant::now(),
            machine: machine_ticks(),
            processes: processes
                .into_iter()
                .map(|(name, pid)| {
                    let ticks = cpu_ticks(pid);
                    (name, pid, ticks)
                })
                .collect(),
        }
    }

    /// What was used from the start until now.
    pub fn stop(&self) -> CpuUse {
        let window = self.started.elapsed();
        let tick = clock_tick();
        let machine = machine_ticks();
        let machine_busy = match (&self.machine, &machine) {
            (Some(before), Some(after)) => before.busy_share(after),
            _ => None,
        };
        CpuUse {
            window,
            cores: machine.map_or(0, |m| m.cores),
            machine_busy,
            processes: self
                .processes
                .iter()
                .map(|(name, pid, before)| {
                    let used = cpu_ticks(*pid).saturating_sub(*before);
                    (name.clone(), tick * u32::try_from(used).unwrap_or(u32::MAX))
                })
                .collect(),
        }
    }
}

/// The machine's CPU time so far, in clock ticks, summed over its cores.
#[derive(Debug, Clone, Copy, PartialEq)]
struct MachineTicks {
    busy: u64,
    total: u64,
    cores: usize,
}

impl MachineTicks {
    /// The busy share of the time from `self` to `later`, 0 to 1.
    fn busy_share(&self, later: &MachineTicks) -> Option<f64> {
        let total = later.total.checked_sub(self.total).filter(|&t| t > 0)?;
        let busy = later.busy.saturating_sub(self.busy);
        Some(busy as f64 / total as f64)
    }
}

fn machine_ticks() -> Option<MachineTicks> {
    parse_stat(&std::fs::read_to_string("/proc/stat").ok()?)
}

/// The first line of `/proc/stat` (`cpu user nice system idle iowait irq softirq steal …`),
/// and its cores (the `cpuN` lines).
fn parse_stat(stat: &str) -> Option<MachineTicks> {
    let mut lines = stat.lines();
    let all = lines.next()?.strip_prefix("cpu ")?;
    let fields: Vec<u64> = all
        .split_whitespace()
        .map(|f| f.parse().ok())
        .collect::<Option<_>>()?;
    let field = |i: usize| fields.get(i).copied().unwrap_or(0);
    let idle = field(3) + field(4);
    // guest and guest_nice (8, 9) are already counted in user and nice.
    let busy = field(0) + field(1) + field(2) + field(5) + field(6) + field(7);
    let cores = lines
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count();
    Some(MachineTicks {
        busy,
        total: busy + idle,
        cores,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  100 10 50 800 40 0 5 5 7 0\ncpu0 50 5 25 400 20 0 3 2 0 0\ncpu1 50 5 25 400 20 0 2 3 0 0\nintr 1 2 3\nctxt 9\n";

    #[test]
    fn proc_stat_gives_busy_and_total_ticks_and_the_cores() {
        let m = parse_stat(STAT).unwrap();
        assert_eq!(m.busy, 100 + 10 + 50 + 5 + 5);
        assert_eq!(m.total, m.busy + 800 + 40);
        assert_eq!(m.cores, 2);
    }

    #[test]
    fn the_busy_share_is_of_the_ticks_between_two_readings() {
        let before = MachineTicks {
            busy: 100,
            total: 1000,
            cores: 2,
        };
        let after = MachineTicks {
            busy: 250,
            total: 1200,
            cores: 2,
        };
        assert_eq!(before.busy_share(&after), Some(0.75));
        assert_eq!(before.busy_share(&before), None, "no time passed");
    }

    #[test]
    fn cpu_time_is_what_each_process_used_since_the_start() {
        let me = std::process::id();
        let meter = CpuMeter::start(vec![("bench".into(), me), ("gone".into(), u32::MAX)]);
        let spin = Instant::now();
        let mut x = 0u64;
        while spin.elapsed() < Duration::from_millis(300) {
            x = std::hint::black_box(x.wrapping_add(1));
        }
        let used = meter.stop();
        assert!(
            used.of("bench").unwrap() >= Duration::from_millis(100),
            "{used:?}"
        );
        assert_eq!(used.of("gone"), Some(Duration::ZERO));
        assert!(used.machine_busy.is_some_and(|b| b > 0.0 && b <= 1.0));
        assert!(used.cores >= 1);
    }
}
