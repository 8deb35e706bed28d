//! The namespaces the operator watches (`--namespaces`): every namespace (the cluster-wide
//! install) or a list (the namespace-scoped install, whose Roles grant it nothing elsewhere).

use std::collections::BTreeSet;

/// The namespaces whose fleets, stores and previews the operator watches and reconciles.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum WatchScope {
    /// Every namespace.
    #[default]
    All,
    /// Only these, each watched on its own (never a cluster-wide list or watch).
    Only(BTreeSet<String>),
}

impl WatchScope {
    /// From the flag's value: namespaces separated by commas; empty (or `*`) for every
    /// namespace.
    pub fn parse(value: &str) -> Result<Self, String> {
        let names: BTreeSet<String> = value
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect();
        if names.is_empty() || names.iter().all(|n| n == "*") {
            return Ok(Self::All);
        }
        if names.contains("*") {
            return Err("'*' (every namespace) goes alone".into());
        }
        if let Some(bad) = names.iter().find(|n| !is_namespace_name(n)) {
            return Err(format!(
                "'{bad}' is not a namespace name: give namespaces separated by commas (team-a,team-b)"
            ));
        }
        Ok(Self::Only(names))
    }

    /// One namespace.
    pub fn one(namespace: &str) -> Self {
        Self::Only(BTreeSet::from([namespace.to_string()]))
    }

    /// The namespaces to watch one by one; None for one watch of every namespace.
    pub fn namespaces(&self) -> Option<Vec<String>> {
        match self {
            Self::All => None,
            Self::Only(names) => Some(names.iter().cloned().collect()),
        }
    }

    /// Whether objects of namespace `ns` are watched.
    pub fn contains(&self, ns: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(names) => names.contains(ns),
        }
    }
}

/// An RFC 1123 label: what a namespace's name is.
pub fn is_namespace_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= 63
        && n.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !n.starts_with('-')
        && !n.ends_with('-')
}

impl std::fmt::Display for WatchScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::All => f.write_str("every namespace"),
            Self::Only(names) => {
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                f.write_str(&names.join(","))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_namespaces_or_everything() {
        assert_eq!(WatchScope::parse(""), Ok(WatchScope::All));
        assert_eq!(WatchScope::parse("*"), Ok(WatchScope::All));
        let two = WatchScope::parse(" team-b,team-a ,team-a").unwrap();
        assert_eq!(
            two.namespaces(),
            Some(vec!["team-a".to_string(), "team-b".to_string()])
        );
        assert!(two.contains("team-a") && !two.contains("kube-system"));
        assert_eq!(two.to_string(), "team-a,team-b");
        assert_eq!(WatchScope::All.namespaces(), None);
        assert!(WatchScope::All.contains("anything"));
    }

    #[test]
    fn bad_names_are_refused_with_the_expected_form() {
        for bad in ["Team", "a_b", "-a", "a,*"] {
            let err = WatchScope::parse(bad).unwrap_err();
            assert!(
                err.contains("namespace name") || err.contains("goes alone"),
                "{bad}: {err}"
            );
        }
    }
}
