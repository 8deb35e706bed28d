//! Where the operator may read a bucket with its own cloud identity: for a fleet that names no
//! credentials Secret, the operator's identity would otherwise read any bucket it reaches on
//! behalf of any namespace (a confused deputy every tenant shares). Nowhere unless the
//! operator is started with `--own-identity-namespaces`.

use crate::cache::watch_scope::is_namespace_name;
use std::collections::BTreeSet;

/// The namespaces whose fleets the operator reads with its own identity.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum OwnIdentity {
    /// None (the default).
    #[default]
    Nowhere,
    /// Every namespace (`*`).
    Everywhere,
    /// These.
    In(BTreeSet<String>),
}

impl OwnIdentity {
    /// From the flag's value: `*`, or namespaces separated by commas (empty: nowhere).
    pub fn parse(value: &str) -> Result<Self, String> {
        let names: BTreeSet<String> = value
            .split(',')
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect();
        if names.contains("*") {
            return match names.len() {
                1 => Ok(Self::Everywhere),
                _ => Err("'*' (every namespace) goes alone".into()),
            };
        }
        if let Some(bad) = names.iter().find(|n| !is_namespace_name(n)) {
            return Err(format!("'{bad}' is not a namespace name"));
        }
        Ok(if names.is_empty() {
            Self::Nowhere
        } else {
            Self::In(names)
        })
    }

    /// Whether a fleet of namespace `ns` may be read with the operator's own identity.
    pub fn allows(&self, ns: &str) -> bool {
        match self {
            Self::Nowhere => false,
            Self::Everywhere => true,
            Self::In(names) => names.contains(ns),
        }
    }

    /// Why the operator has no credentials for `url`, read for a fleet of `ns` that names no
    /// credentials Secret, when it may not use its own identity there.
    pub fn refusal(url: &str, ns: &str) -> String {
        format!(
            "the operator has no credentials for {url}: the fleet names no credentials Secret, and the operator reads buckets with its own cloud identity only for the namespaces of its --own-identity-namespaces flag, which has not {ns}: set the fleet's spec.objectStorage.credentialsSecretRef (or use a CelldObjectStore with one) to a key that may read the bucket; the nodes keep their workload identity"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_lists_namespaces_or_every_one() {
        assert_eq!(OwnIdentity::parse(""), Ok(OwnIdentity::Nowhere));
        assert_eq!(OwnIdentity::parse("*"), Ok(OwnIdentity::Everywhere));
        let listed = OwnIdentity::parse("team-a, team-b").unwrap();
        assert!(listed.allows("team-a") && listed.allows("team-b") && !listed.allows("team-c"));
        assert!(!OwnIdentity::Nowhere.allows("default"));
        assert!(OwnIdentity::parse("*,team-a").is_err());
        assert!(OwnIdentity::parse("Team_A").is_err());
    }
}
