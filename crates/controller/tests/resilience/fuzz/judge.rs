//! What an admitted rollout must not hold, by the promises of its CRD's rules: each is checked
//! on the object as stored, the way the operator reads it. The rules promise that a wave's
//! fleets is a count or a percentage the operator can count with, that durations are within
//! their bounds, and that a webhook URL names no link-local address or cloud metadata endpoint
//! (read as the operator's resolver reads a host: `getaddrinfo` takes `2852039166`,
//! `0xa9fea9fe` and `0251.0376.0251.0376` for 169.254.169.254).

use celld_api::CelldRollout;
use celld_api::fleet::parse_duration;
use celld_api::rollout::waves::reach;
use serde_json::Value;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::time::Duration;

/// A part of a numbers-and-dots IPv4 address as `inet_aton` reads it: decimal, `0x` hex, or
/// octal with a leading 0.
fn part(text: &str) -> Option<u64> {
    let (digits, radix) = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None if text.len() > 1 && text.starts_with('0') => (&text[1..], 8),
        None => (text, 10),
    };
    if digits.is_empty() && radix == 16 {
        return Some(0);
    }
    u64::from_str_radix(digits, radix).ok()
}

/// The IPv4 address `inet_aton` (and so `getaddrinfo`) reads `host` as: one to four parts, the
/// last filling the bytes left.
fn inet_aton(host: &str) -> Option<Ipv4Addr> {
    let parts: Vec<u64> = host.split('.').map(part).collect::<Option<_>>()?;
    let (last, leading) = parts.split_last()?;
    if leading.len() > 3 || leading.iter().any(|p| *p > 255) {
        return None;
    }
    let room = 8 * (4 - leading.len() as u32);
    if *last >= 1u64 << room {
        return None;
    }
    let value = leading
        .iter()
        .fold(0u64, |acc, p| (acc << 8) | p)
        .checked_shl(room)?
        | last;
    Some(Ipv4Addr::from(u32::try_from(value).ok()?))
}

fn link_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_link_local(),
        IpAddr::V6(v6) => {
            (v6.segments()[0] & 0xffc0) == 0xfe80
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)
                || v6.to_ipv4_mapped().is_some_and(|v4| v4.is_link_local())
        }
    }
}

/// The host of an `http(s)://` URL, without user, port or brackets.
fn host(url: &str) -> Option<String> {
    let rest = url.split_once("://")?.1;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit('@').next()?;
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next()?,
        None => authority.split(':').next()?,
    };
    Some(host.to_ascii_lowercase())
}

/// Why admission should have refused the webhook URL `url`, if it should have.
fn forbidden_url(url: &str) -> Option<String> {
    let host = host(url)?;
    let name = host.trim_end_matches('.');
    if name == "metadata.google.internal" {
        return Some(format!(
            "webhook URL {url:?} names the metadata endpoint {name}"
        ));
    }
    let zoneless = host.split('%').next().unwrap_or(&host);
    let ip = zoneless
        .parse::<Ipv6Addr>()
        .map(IpAddr::V6)
        .ok()
        .or_else(|| inet_aton(&host).map(IpAddr::V4))?;
    link_local(ip).then(|| {
        format!(
            "webhook URL {url:?} reaches the link-local address {ip} (a resolver reads {host:?} so)"
        )
    })
}

/// Why `text` (the duration at `at`) should have been refused, if it should have.
fn out_of_bounds(at: &str, text: &str, min: u64, max: u64) -> Option<String> {
    match parse_duration(text).map(|d: Duration| d.as_secs()) {
        None => Some(format!(
            "{at} {text:?} is not a duration the operator reads"
        )),
        Some(s) if s < min || s > max => {
            Some(format!("{at} {text:?} is {s}s, outside {min}s..{max}s"))
        }
        Some(_) => None,
    }
}

/// Why the admitted rollout `stored` should have been refused, by its CRD's promises; `None`
/// when nothing says so.
pub fn forbidden(stored: &Value) -> Option<String> {
    let rollout: CelldRollout = match serde_json::from_value(stored.clone()) {
        Ok(r) => r,
        Err(e) => {
            return Some(format!(
                "the operator cannot read it as a CelldRollout: {e}"
            ));
        }
    };
    let spec = &rollout.spec;
    let mut found = Vec::new();
    for (i, wave) in spec.waves.iter().enumerate() {
        if let Some(fleets) = &wave.fleets
            && reach(fleets, 1000).is_none()
        {
            found.push(format!(
                "spec.waves[{i}].fleets {fleets:?} is neither a count nor a percentage the operator counts with (it takes no fleet)"
            ));
        }
        found.extend(out_of_bounds(
            &format!("spec.waves[{i}].bake"),
            &wave.bake,
            0,
            86_400,
        ));
    }
    found.extend(out_of_bounds(
        "spec.source.timeout",
        &spec.source.timeout,
        30,
        86_400,
    ));
    found.extend(out_of_bounds(
        "spec.gates.progressDeadline",
        &spec.gates.progress_deadline,
        60,
        86_400,
    ));
    for hook in &spec.gates.webhooks {
        found.extend(forbidden_url(&hook.url));
        found.extend(out_of_bounds(
            &format!("spec.gates.webhooks[{}].timeout", hook.name),
            &hook.timeout,
            1,
            300,
        ));
    }
    (!found.is_empty()).then(|| found.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hosts_as_a_resolver_does() {
        let metadata = Ipv4Addr::new(169, 254, 169, 254);
        for host in [
            "2852039166",
            "0xa9fea9fe",
            "0251.0376.0251.0376",
            "169.0xfe.169.254",
            "169.254.43518",
        ] {
            assert_eq!(inet_aton(host), Some(metadata), "{host}");
        }
        assert_eq!(inet_aton("gate.fuzz.invalid"), None);
        assert_eq!(inet_aton("127.0.0.1"), Some(Ipv4Addr::LOCALHOST));
        assert_eq!(inet_aton("256.1.1.1"), None);
        assert!(forbidden_url("http://[::ffff:a9fe:a9fe]/x").is_some());
        assert!(forbidden_url("http://[fe90::1]/x").is_some());
        assert!(forbidden_url("http://metadata.google.internal./x").is_some());
        assert!(forbidden_url("http://127.0.0.1:9/check").is_none());
        assert!(forbidden_url("https://slo.example.com/celld?window=5m#wave").is_none());
    }
}
