//! What gave out when a run failed: the local control plane's components (running or exited,
//! and what their logs say), etcd's database against its quota, and the machine's memory and
//! disk. Read before the control plane is stopped, so a failure names the component and its
//! error rather than only what the bench saw time out.

use crate::measure::proc_stats::{is_running, rss_kib};
use std::fmt;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// The components up.sh starts that every run needs, in the order they depend on each other.
pub const COMPONENTS: [&str; 6] = [
    "etcd",
    "kube-apiserver",
    "kube-controller-manager",
    "kube-scheduler",
    "kwok",
    "s3s-fs",
];

/// etcd's database quota: up.sh leaves `--quota-backend-bytes` at its default, 2 GiB. Past it
/// etcd refuses writes ("mvcc: database space exceeded").
pub const ETCD_QUOTA_BYTES: u64 = 2 << 30;

/// Log lines that say a component gave out, whichever writes them.
const FATAL: [&str; 7] = [
    "database space exceeded",
    "too many open files",
    "cannot allocate memory",
    "out of memory",
    "no space left on device",
    "etcdserver: request timed out",
    "audit buffer queue blocked",
];

/// How much of the end of each log is searched.
const LOG_TAIL_BYTES: u64 = 1 << 20;

/// Error lines of an exited component's log shown.
const EXIT_LINES: usize = 3;

/// Characters of a log line shown.
const LINE_CHARS: usize = 300;

/// The machine is short of memory below this, KiB.
const LOW_MEMORY_KIB: u64 = 256 << 10;

/// The disk is short below this, KiB.
const LOW_DISK_KIB: u64 = 1 << 20;

/// One component as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Component {
    /// Its name (its pid file and log under the state directory).
    pub name: &'static str,
    /// Its resident memory, KiB, while it runs; `None` once it exited.
    pub rss_kib: Option<u64>,
    /// What its log says went wrong: its last error lines when it exited, the last line saying
    /// it gave out ([`FATAL`]) while it runs.
    pub said: Vec<String>,
    /// The last line of its log.
    pub last_line: Option<String>,
}

/// The control plane and the machine as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Health {
    /// Each of [`COMPONENTS`].
    pub components: Vec<Component>,
    /// The size of etcd's database file, bytes.
    pub etcd_db_bytes: Option<u64>,
    /// The machine's available memory (`MemAvailable`), KiB.
    pub memory_available_kib: Option<u64>,
    /// Free space on the state directory's disk, KiB.
    pub disk_free_kib: Option<u64>,
}

/// Looks at the control plane whose state is in `dir`.
pub fn inspect(dir: &Path) -> Health {
    let components = COMPONENTS
        .iter()
        .map(|&name| {
            let pid = std::fs::read_to_string(dir.join("run").join(format!("{name}.pid")))
                .ok()
                .and_then(|p| p.trim().parse::<u32>().ok());
            let rss_kib = pid.filter(|&p| is_running(p)).map(rss_kib);
            let tail = log_tail(&dir.join("logs").join(format!("{name}.log")));
            let said = if rss_kib.is_none() {
                last_errors(&tail, EXIT_LINES)
            } else {
                fatal_line(&tail).into_iter().collect()
            };
            Component {
                name,
                rss_kib,
                said,
                last_line: last_line(&tail),
            }
        })
        .collect();
    Health {
        components,
        etcd_db_bytes: std::fs::metadata(dir.join("etcd/member/snap/db"))
            .ok()
            .map(|m| m.len()),
        memory_available_kib: memory_available_kib(),
        disk_free_kib: disk_free_kib(dir),
    }
}

impl Health {
    /// What gave out, one sentence each; empty when nothing did.
    pub fn gave_out(&self) -> Vec<String> {
        let mut out = Vec::new();
        for c in &self.components {
            match (c.rss_kib, c.said.is_empty()) {
                (None, true) => out.push(format!(
                    "{} exited without an error in its log (logs/{}.log): a signal ended it, the \
kernel's out-of-memory killer for one (see `dmesg`); its last line: «{}»",
                    c.name,
                    c.name,
                    c.last_line.as_deref().unwrap_or("")
                )),
                (None, false) => out.push(format!(
                    "{} exited; its log (logs/{}.log) last says: «{}»",
                    c.name,
                    c.name,
                    c.said.join(" ⏎ ")
                )),
                (Some(_), false) => out.push(format!(
                    "{} runs but its log says: «{}»",
                    c.name,
                    c.said.join(" ⏎ ")
                )),
                (Some(_), true) => {}
            }
        }
        if let Some(db) = self
            .etcd_db_bytes
            .filter(|&b| b * 100 >= ETCD_QUOTA_BYTES * 95)
        {
            out.push(format!(
                "etcd's database is full: {} of its {} quota (etcd then refuses every write: \
«mvcc: database space exceeded»)",
                size(db),
                size(ETCD_QUOTA_BYTES)
            ));
        }
        if let Some(kib) = self.memory_available_kib.filter(|&k| k < LOW_MEMORY_KIB) {
            out.push(format!(
                "the machine is out of memory: {} available",
                size(kib * 1024)
            ));
        }
        if let Some(kib) = self.disk_free_kib.filter(|&k| k < LOW_DISK_KIB) {
            out.push(format!(
                "the state directory's disk is full: {} free",
                size(kib * 1024)
            ));
        }
        out
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let gave_out = self.gave_out();
        if gave_out.is_empty() {
            write!(
                f,
                "no component of the control plane gave out: all {} run",
                self.components.len()
            )?;
        } else {
            write!(f, "what gave out: {}", gave_out.join("; "))?;
        }
        let running: Vec<String> = self
            .components
            .iter()
            .filter_map(|c| c.rss_kib.map(|k| format!("{} {}", c.name, size(k * 1024))))
            .collect();
        if !running.is_empty() {
            write!(f, ". Resident: {}", running.join(", "))?;
        }
        if let Some(db) = self.etcd_db_bytes {
            write!(
                f,
                "; etcd's database {} of its {} quota",
                size(db),
                size(ETCD_QUOTA_BYTES)
            )?;
        }
        if let Some(kib) = self.memory_available_kib {
            write!(
                f,
                "; the machine has {} of memory available",
                size(kib * 1024)
            )?;
        }
        if let Some(kib) = self.disk_free_kib {
            write!(f, " and {} of disk free", size(kib * 1024))?;
        }
        Ok(())
    }
}

/// Bytes as MiB or GiB.
fn size(bytes: u64) -> String {
    let mib = bytes as f64 / f64::from(1 << 20);
    if mib >= 1024.0 {
        format!("{:.1} GiB", mib / 1024.0)
    } else {
        format!("{mib:.0} MiB")
    }
}

/// The last [`LOG_TAIL_BYTES`] of a log, empty when it cannot be read.
fn log_tail(path: &Path) -> String {
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    if file
        .seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL_BYTES)))
        .is_err()
    {
        return String::new();
    }
    let mut bytes = Vec::new();
    let _ = file.read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The last `n` lines of `text` that report an error, oldest first.
fn last_errors(text: &str, n: usize) -> Vec<String> {
    let mut errors: Vec<String> = text
        .lines()
        .rev()
        .filter(|l| is_error(l))
        .take(n)
        .map(shown)
        .collect();
    errors.reverse();
    errors
}

/// The last non-empty line of `text`.
fn last_line(text: &str) -> Option<String> {
    text.lines().rev().find(|l| !l.trim().is_empty()).map(shown)
}

/// Whether a log line reports an error: klog's `E` and `F` levels (`E1203 07:04:39...`), a
/// structured error level, a panic or a fatal error.
fn is_error(line: &str) -> bool {
    let klog = line.len() > 5
        && matches!(line.as_bytes()[0], b'E' | b'F')
        && line.as_bytes()[1..5].iter().all(u8::is_ascii_digit);
    let lower = line.to_lowercase();
    klog || [
        "\"level\":\"error\"",
        "level=error",
        "panic",
        "fatal",
        "error:",
    ]
    .iter()
    .any(|e| lower.contains(e))
}

/// The last line of `text` that says its component gave out ([`FATAL`]).
fn fatal_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .find(|l| {
            let lower = l.to_lowercase();
            FATAL.iter().any(|f| lower.contains(f))
        })
        .map(shown)
}

/// A log line as shown: trimmed, at most [`LINE_CHARS`] characters.
fn shown(line: &str) -> String {
    let line = line.trim();
    match line.char_indices().nth(LINE_CHARS) {
        Some((end, _)) => format!("{}…", &line[..end]),
        None => line.to_string(),
    }
}

/// `MemAvailable` of `/proc/meminfo`, KiB.
fn memory_available_kib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    text.lines()
        .find(|l| l.starts_with("MemAvailable:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Free space on `dir`'s file system, KiB (`df -Pk`).
fn disk_free_kib(dir: &Path) -> Option<u64> {
    let out = std::process::Command::new("df")
        .arg("-Pk")
        .arg(dir)
        .output()
        .ok()?;
    df_available_kib(&String::from_utf8_lossy(&out.stdout))
}

/// The "Available" column of `df -Pk`'s one row.
fn df_available_kib(text: &str) -> Option<u64> {
    text.lines().nth(1)?.split_whitespace().nth(3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(name: &'static str, rss_kib: Option<u64>, said: &[&str]) -> Component {
        Component {
            name,
            rss_kib,
            said: said.iter().map(|s| s.to_string()).collect(),
            last_line: said.last().map(|s| s.to_string()),
        }
    }

    fn healthy() -> Health {
        Health {
            components: COMPONENTS
                .iter()
                .map(|&n| component(n, Some(100 << 10), &[]))
                .collect(),
            etcd_db_bytes: Some(300 << 20),
            memory_available_kib: Some(8 << 20),
            disk_free_kib: Some(20 << 20),
        }
    }

    #[test]
    fn a_healthy_control_plane_says_nothing_gave_out() {
        let text = healthy().to_string();
        assert!(text.starts_with("no component of the control plane gave out: all 6 run. Resident: etcd 100 MiB, kube-apiserver 100 MiB"), "{text}");
        assert!(text.ends_with("; etcd's database 300 MiB of its 2.0 GiB quota; the machine has 8.0 GiB of memory available and 20.0 GiB of disk free"), "{text}");
    }

    #[test]
    fn an_exited_component_is_named_with_the_end_of_its_log() {
        let mut h = healthy();
        h.components[1] = component(
            "kube-apiserver",
            None,
            &["E0101 storage error", "F0101 etcd unreachable"],
        );
        h.components[0].said = vec!["etcdserver: mvcc: database space exceeded".into()];
        h.etcd_db_bytes = Some(ETCD_QUOTA_BYTES);
        let text = h.to_string();
        assert!(text.starts_with("what gave out: etcd runs but its log says: «etcdserver: mvcc: database space exceeded»; kube-apiserver exited; its log (logs/kube-apiserver.log) last says: «E0101 storage error ⏎ F0101 etcd unreachable»; etcd's database is full: 2.0 GiB of its 2.0 GiB quota"), "{text}");
        assert!(!text.contains("kube-apiserver 100 MiB"), "{text}");
    }

    #[test]
    fn a_silent_exit_points_at_the_oom_killer_and_shortages_are_named() {
        let mut h = healthy();
        h.components[4] = component("kwok", None, &[]);
        h.components[4].last_line = Some("{\"level\":\"INFO\",\"msg\":\"Patch pod\"}".into());
        h.memory_available_kib = Some(100 << 10);
        h.disk_free_kib = Some(10 << 10);
        let gave_out = h.gave_out();
        assert_eq!(gave_out.len(), 3, "{gave_out:?}");
        assert_eq!(
            gave_out[0],
            "kwok exited without an error in its log (logs/kwok.log): a signal ended it, the kernel's out-of-memory killer for one (see `dmesg`); its last line: «{\"level\":\"INFO\",\"msg\":\"Patch pod\"}»"
        );
        assert_eq!(
            gave_out[1],
            "the machine is out of memory: 100 MiB available"
        );
        assert_eq!(
            gave_out[2],
            "the state directory's disk is full: 10 MiB free"
        );
    }

    #[test]
    fn logs_are_searched_for_what_gives_out() {
        let log = "I0101 fine\nW0101 Too many open files in system\nI0101 fine again\n";
        assert_eq!(
            fatal_line(log).as_deref(),
            Some("W0101 Too many open files in system")
        );
        assert_eq!(fatal_line("I0101 fine\n"), None);
        let log = "I0101 start\nE0101 first\nI0101 between\n{\"level\":\"ERROR\",\"msg\":\"second\"}\npanic: third\nI0101 last\n\n";
        assert_eq!(
            last_errors(log, 2),
            ["{\"level\":\"ERROR\",\"msg\":\"second\"}", "panic: third"]
        );
        assert_eq!(last_line(log).as_deref(), Some("I0101 last"));
        assert_eq!(
            last_errors("I0101 Event occurred\nEvery thing fine\n", 3),
            Vec::<String>::new()
        );
        assert_eq!(shown(&"x".repeat(400)).chars().count(), LINE_CHARS + 1);
        let df = "Filesystem 1024-blocks Used Available Capacity Mounted on\n/dev/vda 263174212 67000000 29000000 70% /\n";
        assert_eq!(df_available_kib(df), Some(29_000_000));
    }

    #[test]
    fn an_empty_state_directory_finds_every_component_exited() {
        let dir = tempfile::tempdir().unwrap();
        let h = inspect(dir.path());
        assert!(h.components.iter().all(|c| c.rss_kib.is_none()));
        assert_eq!(h.etcd_db_bytes, None);
        assert!(h.disk_free_kib.is_some());
    }
}
