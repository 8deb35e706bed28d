//! What /proc says about a process: resident memory, CPU time, open TCP connections.

use std::collections::HashSet;
use std::time::Duration;

/// Resident memory in KiB (`VmRSS` of `/proc/PID/status`), 0 when unreadable.
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status_field_kib(&status, "VmRSS:")
}

/// The part of the resident memory that is file-backed, in KiB (`RssFile`): mostly the
/// binary's code, paged in as code paths first run; the kernel can drop it at any time.
pub fn rss_file_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status_field_kib(&status, "RssFile:")
}

/// Whether the process runs: it exists and is no zombie (one that exited, not yet reaped).
pub fn is_running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/status")).is_ok_and(|status| {
        !status
            .lines()
            .any(|l| l.starts_with("State:") && l.contains("zombie"))
    })
}

/// A `kB` field of `/proc/PID/status`, 0 when absent.
fn status_field_kib(status: &str, name: &str) -> u64 {
    status
        .lines()
        .find(|l| l.starts_with(name))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// User plus system CPU time of a process so far, in clock ticks, from `/proc/PID/stat`.
pub fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat_cpu_ticks(&stat).unwrap_or(0)
}

/// utime + stime (fields 14 and 15) of a `/proc/PID/stat` line. The command name (field 2)
/// is in parentheses and may hold spaces, so fields are counted after its closing one.
fn stat_cpu_ticks(stat: &str) -> Option<u64> {
    let after_comm = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = after_comm.split_whitespace().collect();
    // after_comm starts at field 3 (state): field n is at index n - 3.
    let utime: u64 = fields.get(14 - 3)?.parse().ok()?;
    let stime: u64 = fields.get(15 - 3)?.parse().ok()?;
    Some(utime + stime)
}

/// How long one clock tick is (`getconf CLK_TCK`; 100 per second when it cannot be asked).
pub fn clock_tick() -> Duration {
    let per_second = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(100);
    Duration::from_secs(1) / per_second
}

/// The remote ports of a process's open TCP connections: its socket descriptors that are
/// ESTABLISHED TCP connections in its network namespace (`/proc/PID/fd` against
/// `/proc/PID/net/tcp{,6}`).
pub fn established_tcp_remote_ports(pid: u32) -> Vec<u16> {
    let inodes = socket_inodes(pid);
    ["tcp", "tcp6"]
        .iter()
        .map(|table| {
            std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default()
        })
        .flat_map(|text| established(&text))
        .filter(|(inode, _)| inodes.contains(inode))
        .map(|(_, port)| port)
        .collect()
}

/// The inodes of the sockets a process holds open.
fn socket_inodes(pid: u32) -> HashSet<u64> {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return HashSet::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|target| socket_inode(&target.to_string_lossy()))
        .collect()
}

/// The inode of a `socket:[12345]` link target.
fn socket_inode(target: &str) -> Option<u64> {
    target
        .strip_prefix("socket:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// The inode and remote port of each ESTABLISHED (state `01`) row of a `/proc/net/tcp` table.
fn established(table: &str) -> Vec<(u64, u16)> {
    table
        .lines()
        .skip(1)
        .filter_map(|row| {
            let cols: Vec<&str> = row.split_whitespace().collect();
            if cols.get(3) != Some(&"01") {
                return None;
            }
            let port = cols.get(2)?.rsplit(':').next()?;
            Some((
                cols.get(9)?.parse().ok()?,
                u16::from_str_radix(port, 16).ok()?,
            ))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rss_is_read_from_the_status_file() {
        let status = "Name:\tcelld-operator\nVmPeak:\t  900 kB\nVmRSS:\t   23456 kB\n";
        assert_eq!(status_field_kib(status, "VmRSS:"), 23456);
        assert_eq!(status_field_kib(status, "VmHWM:"), 0);
        let split = "VmRSS:\t   20000 kB\nRssAnon:\t    6000 kB\nRssFile:\t   14000 kB\n";
        assert_eq!(status_field_kib(split, "RssFile:"), 14000);
    }

    #[test]
    fn cpu_time_counts_user_and_system_ticks_after_a_name_with_spaces() {
        let stat = "4242 (celld op (x)) S 1 4242 4242 0 -1 4194560 100 0 0 0 1234 567 0 0 20 0 9 0 100 1000 200";
        assert_eq!(stat_cpu_ticks(stat), Some(1234 + 567));
        assert_eq!(stat_cpu_ticks("4242 (short) S 1"), None);
    }

    #[test]
    fn only_established_sockets_of_the_process_are_connections() {
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n\
            0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000 0 0 111 1 0\n\
            1: 0100007F:9C40 0100007F:192B 01 00000000:00000000 00:00000000 00000000 0 0 222 1 0\n\
            2: 0100007F:9C41 0100007F:192B 01 00000000:00000000 00:00000000 00000000 0 0 333 1 0\n";
        assert_eq!(established(table), [(222, 0x192B), (333, 0x192B)]);
        assert_eq!(socket_inode("socket:[222]"), Some(222));
        assert_eq!(socket_inode("pipe:[222]"), None);
    }

    #[test]
    fn this_process_has_a_clock_tick_and_cpu_time() {
        assert!(clock_tick() > Duration::ZERO);
        let busy: u64 = (0..3_000_000u64).map(std::hint::black_box).sum();
        assert!(busy > 0);
        assert!(rss_kib(std::process::id()) > 0);
        assert!(is_running(std::process::id()));
        assert!(!is_running(u32::MAX));
    }
}
