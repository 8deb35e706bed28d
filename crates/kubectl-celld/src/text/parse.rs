//! Parsers for flag values: durations, `KEY=VALUE` pairs, quantities, tolerations, Gateway
//! references, preview names and lifetimes. Each error says what a valid value looks like.

use std::time::Duration;

/// Parses a Go-style duration as kubectl takes it: `90s`, `5m`, `1h30m`, `250ms`; a bare number
/// is seconds.
pub fn duration(s: &str) -> Result<Duration, String> {
    let bad = || format!("'{s}' is not a duration: write it like 30s, 5m, 1h30m or 250ms");
    let s = s.trim();
    if s.is_empty() {
        return Err(bad());
    }
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = s;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let value: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ms" => 0.001,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        rest = &rest[unit_len..];
        total += Duration::from_secs_f64(value * unit);
    }
    Ok(total)
}

/// A `KEY=VALUE` flag value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The part before the first `=`.
    pub key: String,
    /// The part after it (may be empty).
    pub value: String,
}

/// Parses `KEY=VALUE` (the value may be empty or contain `=`).
pub fn key_value(s: &str) -> Result<KeyValue, String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok(KeyValue {
            key: k.to_string(),
            value: v.to_string(),
        }),
        _ => Err(format!(
            "'{s}' is not KEY=VALUE (for example RUST_LOG=debug)"
        )),
    }
}

/// Checks a Kubernetes quantity (`500m`, `1.5`, `256Mi`, `1e3`) and returns it unchanged.
pub fn quantity(s: &str) -> Result<String, String> {
    let bad =
        || format!("'{s}' is not a Kubernetes quantity: write it like 500m, 2, 256Mi or 10Gi");
    let body = s.strip_prefix(['+', '-']).unwrap_or(s);
    let number_end = body
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(body.len());
    let (number, suffix) = body.split_at(number_end);
    let digits = number.chars().filter(char::is_ascii_digit).count();
    if digits == 0 || number.matches('.').count() > 1 {
        return Err(bad());
    }
    let suffix_ok = matches!(
        suffix,
        "" | "Ki"
            | "Mi"
            | "Gi"
            | "Ti"
            | "Pi"
            | "Ei"
            | "n"
            | "u"
            | "m"
            | "k"
            | "M"
            | "G"
            | "T"
            | "P"
            | "E"
    ) || suffix.strip_prefix(['e', 'E']).is_some_and(|exp| {
        let exp = exp.strip_prefix(['+', '-']).unwrap_or(exp);
        !exp.is_empty() && exp.chars().all(|c| c.is_ascii_digit())
    });
    if suffix_ok {
        Ok(s.to_string())
    } else {
        Err(bad())
    }
}

/// A toleration in kubectl's taint syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TolerationArg {
    /// Taint key; None tolerates every taint (`*`).
    pub key: Option<String>,
    /// Value to match; None matches any value (operator Exists).
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute; None matches every effect.
    pub effect: Option<String>,
}

/// Parses `KEY[=VALUE][:EFFECT]`, or `*` for every taint.
pub fn toleration(s: &str) -> Result<TolerationArg, String> {
    if s == "*" {
        return Ok(TolerationArg {
            key: None,
            value: None,
            effect: None,
        });
    }
    let (kv, effect) = match s.rsplit_once(':') {
        Some((kv, e)) => (kv, Some(e)),
        None => (s, None),
    };
    if let Some(e) = effect
        && !matches!(e, "NoSchedule" | "PreferNoSchedule" | "NoExecute")
    {
        return Err(format!(
            "'{s}': the effect '{e}' is not NoSchedule, PreferNoSchedule or NoExecute"
        ));
    }
    let (key, value) = match kv.split_once('=') {
        Some((k, v)) => (k, Some(v.to_string())),
        None => (kv, None),
    };
    if key.is_empty() {
        return Err(format!(
            "'{s}' is not a toleration: write KEY[=VALUE][:EFFECT], e.g. dedicated=celld:NoSchedule, or * for every taint"
        ));
    }
    Ok(TolerationArg {
        key: Some(key.to_string()),
        value,
        effect: effect.map(str::to_string),
    })
}

/// A Gateway reference from `[NAMESPACE/]NAME[:SECTION]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayArg {
    /// The Gateway's namespace, when not the fleet's.
    pub namespace: Option<String>,
    /// The Gateway's name.
    pub name: String,
    /// The listener to attach to.
    pub section: Option<String>,
}

/// Parses `[NAMESPACE/]NAME[:SECTION]`.
pub fn gateway(s: &str) -> Result<GatewayArg, String> {
    let bad = || {
        format!(
            "'{s}' is not a Gateway reference: write [NAMESPACE/]NAME[:SECTION], e.g. infra/public:https"
        )
    };
    let (rest, section) = match s.split_once(':') {
        Some((r, sec)) if !sec.is_empty() => (r, Some(sec.to_string())),
        Some(_) => return Err(bad()),
        None => (s, None),
    };
    let (namespace, name) = match rest.split_once('/') {
        Some((ns, n)) if !ns.is_empty() => (Some(ns.to_string()), n),
        Some(_) => return Err(bad()),
        None => (None, rest),
    };
    if name.is_empty() || name.contains('/') {
        return Err(bad());
    }
    Ok(GatewayArg {
        namespace,
        name: name.to_string(),
        section,
    })
}

/// The longest preview name: it becomes its fleet's name and the first label of its host.
pub const PREVIEW_NAME_MAX: usize = 52;

/// Checks a preview name as its CRD does: a DNS label of at most [`PREVIEW_NAME_MAX`]
/// characters that starts with a letter (`pr-123`).
pub fn preview_name(s: &str) -> Result<String, String> {
    let valid = s.len() <= PREVIEW_NAME_MAX
        && s.starts_with(|c: char| c.is_ascii_lowercase())
        && s.ends_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if valid {
        Ok(s.to_string())
    } else {
        Err(format!(
            "'{s}' is not a preview name: it becomes the preview's host and fleet name, so start with a letter, use only lowercase letters, digits and '-', end with a letter or digit, at most {PREVIEW_NAME_MAX} characters (for example pr-123)"
        ))
    }
}

/// Checks a preview lifetime as the operator reads it (`72h`, `90m`, `1h30m`, at least a
/// minute) and returns it unchanged.
pub fn preview_ttl(s: &str) -> Result<String, String> {
    celld_api::rules::ttl::parse(s).map(|_| s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(duration("90s").unwrap(), Duration::from_secs(90));
        assert_eq!(duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(duration("1h30m").unwrap(), Duration::from_secs(5400));
        assert_eq!(duration("250ms").unwrap(), Duration::from_millis(250));
        assert_eq!(duration("1.5h").unwrap(), Duration::from_secs(5400));
        for bad in ["", "m", "5x", "5 m", "-5s", "h5"] {
            assert!(duration(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn preview_names_are_dns_labels_of_at_most_52_characters() {
        for good in ["pr-123", "a", "feature-x2", &format!("p{}", "r".repeat(51))] {
            assert_eq!(preview_name(good).as_deref(), Ok(good), "{good}");
        }
        for bad in [
            "",
            "PR-1",
            "1pr",
            "pr-",
            "pr_1",
            "pr.1",
            &format!("p{}", "r".repeat(52)),
        ] {
            assert!(preview_name(bad).is_err(), "{bad:?} should not parse");
        }
        assert_eq!(preview_ttl("1h30m").as_deref(), Ok("1h30m"));
        assert!(preview_ttl("2d").is_err());
    }

    #[test]
    fn key_values() {
        assert_eq!(
            key_value("A=b=c").unwrap(),
            KeyValue {
                key: "A".into(),
                value: "b=c".into()
            }
        );
        assert_eq!(key_value("A=").unwrap().value, "");
        assert!(key_value("=x").is_err());
        assert!(key_value("novalue").is_err());
    }

    #[test]
    fn quantities() {
        for ok in [
            "500m", "2", "1.5", "256Mi", "10Gi", "1e3", "+1", "0.5Gi", "2E+2",
        ] {
            assert!(quantity(ok).is_ok(), "{ok} should parse");
        }
        for bad in ["", "Mi", "1.2.3", "10GB", "1e", "abc", "1 Gi"] {
            assert!(quantity(bad).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn tolerations() {
        assert_eq!(
            toleration("dedicated=celld:NoSchedule").unwrap(),
            TolerationArg {
                key: Some("dedicated".into()),
                value: Some("celld".into()),
                effect: Some("NoSchedule".into())
            }
        );
        assert_eq!(toleration("gpu").unwrap().value, None);
        assert_eq!(toleration("*").unwrap().key, None);
        assert!(toleration("a:Sometimes").is_err());
        assert!(toleration("=v").is_err());
    }

    #[test]
    fn gateways() {
        assert_eq!(
            gateway("infra/public:https").unwrap(),
            GatewayArg {
                namespace: Some("infra".into()),
                name: "public".into(),
                section: Some("https".into())
            }
        );
        assert_eq!(gateway("gw").unwrap().namespace, None);
        for bad in ["", "/gw", "ns/", "gw:", "a/b/c"] {
            assert!(gateway(bad).is_err(), "{bad} should not parse");
        }
    }
}
