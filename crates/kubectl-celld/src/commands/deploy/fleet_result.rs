//! What a fan-out did to each fleet, and what that adds up to: the exit code, the versions the
//! fleets got, and what an interruption left behind.

use super::targets::FleetId;
use crate::error::Error;
use crate::error::fan_out::FanOutIncomplete;
use std::collections::BTreeMap;
use std::time::Duration;

/// How one fleet's deploy ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Published (and, unless `--no-wait`, every ready node serves it).
    Published,
    /// Published, but not every ready node serves it: why (a node refused it, or the wait
    /// ended).
    NotAdopted(String),
    /// Nothing was published: why (refused before anything was created, or failed in the pod).
    Failed(String),
    /// Dry run: the fleet would be deployed.
    WouldDeploy,
    /// Dry run: the fleet would be refused: why.
    WouldFail(String),
    /// Ctrl-C while the fleet was being deployed; `publishing`: `celld deploy` had started, so
    /// the version may be published.
    Interrupted {
        /// Whether `celld deploy` had started.
        publishing: bool,
    },
    /// Ctrl-C before the fleet's turn: nothing was done to it.
    Untouched,
}

impl Outcome {
    /// Whether the fleet got what was asked: published (and adopted), or would be.
    pub fn ok(&self) -> bool {
        matches!(self, Self::Published | Self::WouldDeploy)
    }

    /// The RESULT cell of the table: a word, then the reason.
    pub fn describe(&self) -> String {
        let one_line = |why: &str| why.lines().map(str::trim).collect::<Vec<_>>().join(" ");
        match self {
            Self::Published => "published".to_string(),
            Self::NotAdopted(why) => format!("published, not adopted: {}", one_line(why)),
            Self::Failed(why) => format!("failed: {}", one_line(why)),
            Self::WouldDeploy => "would deploy".to_string(),
            Self::WouldFail(why) => format!("would fail: {}", one_line(why)),
            Self::Interrupted { publishing: true } => {
                "interrupted while celld deploy ran: the version may be published".to_string()
            }
            Self::Interrupted { publishing: false } => {
                "interrupted before celld deploy: nothing published".to_string()
            }
            Self::Untouched => "untouched (interrupted before its turn)".to_string(),
        }
    }
}

/// One fleet's row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetResult {
    /// The fleet.
    pub fleet: FleetId,
    /// Its bucket and where that comes from (see
    /// [`storage_cell`](super::storage_text::storage_cell)), once resolved.
    pub storage: Option<String>,
    /// The image of its deploy pod, once known.
    pub image: Option<String>,
    /// The version its pointer names after the deploy, when read back.
    pub version: Option<String>,
    /// How long its deploy took (from creating its Job), when it ran.
    pub took: Option<Duration>,
    /// How it ended.
    pub outcome: Outcome,
}

/// A warning when the fleets got different versions: the version is a hash of the bundle,
/// its config and vars, so one build gives one version unless the deploy images' celld or
/// esbuild differ or `--vars-from-secret` gives fleets different values.
pub fn versions_note(results: &[FleetResult]) -> Option<String> {
    let mut by_version: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for r in results {
        if let Some(v) = &r.version {
            by_version
                .entry(v.as_str())
                .or_default()
                .push(r.fleet.to_string());
        }
    }
    if by_version.len() < 2 {
        return None;
    }
    let groups: Vec<String> = by_version
        .iter()
        .map(|(version, fleets)| {
            let shown: Vec<&str> = fleets.iter().take(3).map(String::as_str).collect();
            let more = fleets.len().saturating_sub(shown.len());
            format!(
                "{version} on {} fleet{} ({}{})",
                fleets.len(),
                if fleets.len() == 1 { "" } else { "s" },
                shown.join(", "),
                if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    Some(format!(
        "warning: the fleets got different versions of the same build: {}. celld derives the version from the bundle, the config and its vars: they differ when the fleets' deploy images carry different celld or esbuild releases (each fleet's default deployer follows its own celld version; pass --deployer-image to use one for all) or when --vars-from-secret gives them different values",
        groups.join("; ")
    ))
}

/// The one version every published fleet got, when they agree.
pub fn common_version(results: &[FleetResult]) -> Option<&str> {
    let mut versions = results.iter().filter_map(|r| r.version.as_deref());
    let first = versions.next()?;
    versions.all(|v| v == first).then_some(first)
}

/// The summary line under the table.
pub fn summary(results: &[FleetResult], dry_run: bool) -> String {
    let total = results.len();
    let ok = results.iter().filter(|r| r.outcome.ok()).count();
    if dry_run {
        return format!(
            "Dry run: {ok} of {total} fleet{} would be deployed; nothing was created",
            if total == 1 { "" } else { "s" }
        );
    }
    let version = common_version(results)
        .map(|v| format!(" (version {v})"))
        .unwrap_or_default();
    format!(
        "Deployed to {ok} of {total} fleet{}{version}",
        if total == 1 { "" } else { "s" }
    )
}

/// The error after a fan-out where not every fleet succeeded; None when all did. `again`: the
/// command that deploys to the given fleets (NAMESPACE/NAME, comma-separated).
pub fn incomplete(
    results: &[FleetResult],
    dry_run: bool,
    again: impl Fn(&str) -> String,
) -> Option<Error> {
    let failed: Vec<String> = results
        .iter()
        .filter(|r| !r.outcome.ok())
        .map(|r| r.fleet.to_string())
        .collect();
    if failed.is_empty() {
        return None;
    }
    Some(Error::FanOut(Box::new(FanOutIncomplete {
        total: results.len(),
        succeeded: results.len() - failed.len(),
        again: again(&failed.join(",")),
        failed,
        dry_run,
    })))
}

/// What an interruption left behind, fleet by fleet (the table shows each).
pub fn interrupted_note(results: &[FleetResult]) -> String {
    let pick = |keep: fn(&Outcome) -> bool| -> Vec<String> {
        results
            .iter()
            .filter(|r| keep(&r.outcome))
            .map(|r| r.fleet.to_string())
            .collect()
    };
    let published = pick(|o| matches!(o, Outcome::Published | Outcome::NotAdopted(_)));
    let maybe = pick(|o| matches!(o, Outcome::Interrupted { publishing: true }));
    let before = pick(|o| matches!(o, Outcome::Interrupted { publishing: false }));
    let failed = pick(|o| matches!(o, Outcome::Failed(_)));
    let untouched = pick(|o| matches!(o, Outcome::Untouched));
    let mut parts = Vec::new();
    let mut say = |fleets: &[String], what: &str| {
        if !fleets.is_empty() {
            parts.push(format!("{} {what}: {}", fleets.len(), fleets.join(", ")));
        }
    };
    say(&published, "published");
    say(
        &maybe,
        "interrupted while celld deploy ran, so the version may be published (check with kubectl celld status)",
    );
    say(
        &before,
        "interrupted before celld deploy, nothing published",
    );
    say(&failed, "failed");
    say(&untouched, "untouched");
    parts.join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(name: &str, version: Option<&str>, outcome: Outcome) -> FleetResult {
        FleetResult {
            fleet: FleetId {
                namespace: "apps".into(),
                name: name.into(),
            },
            storage: None,
            image: None,
            version: version.map(str::to_string),
            took: None,
            outcome,
        }
    }

    #[test]
    fn all_published_is_no_error_some_is_partial_none_is_a_failure() {
        let again = |fleets: &str| format!("kubectl celld deploy ./w --fleets {fleets}");
        let all = [
            result("a", Some("0123456789abcdef"), Outcome::Published),
            result("b", Some("0123456789abcdef"), Outcome::Published),
        ];
        assert!(incomplete(&all, false, again).is_none());
        assert_eq!(
            summary(&all, false),
            "Deployed to 2 of 2 fleets (version 0123456789abcdef)"
        );

        let some = [
            result("a", Some("0123456789abcdef"), Outcome::Published),
            result("b", None, Outcome::Failed("celld deploy failed".into())),
            result(
                "c",
                Some("0123456789abcdef"),
                Outcome::NotAdopted("x".into()),
            ),
        ];
        let e = incomplete(&some, false, again).unwrap();
        assert_eq!(e.exit_code(), crate::error::fan_out::PARTIAL_EXIT_CODE);
        assert!(
            e.to_string()
                .ends_with("kubectl celld deploy ./w --fleets apps/b,apps/c"),
            "{e}"
        );

        let none = [result("a", None, Outcome::Failed("no Secret".into()))];
        assert_eq!(incomplete(&none, false, again).unwrap().exit_code(), 1);

        let dry = [
            result("a", None, Outcome::WouldDeploy),
            result("b", None, Outcome::WouldFail("spec.source".into())),
        ];
        assert_eq!(
            incomplete(&dry, true, again).unwrap().exit_code(),
            crate::error::fan_out::PARTIAL_EXIT_CODE
        );
        assert_eq!(
            summary(&dry, true),
            "Dry run: 1 of 2 fleets would be deployed; nothing was created"
        );
    }

    #[test]
    fn different_versions_are_flagged_with_their_fleets() {
        let same = [
            result("a", Some("0123456789abcdef"), Outcome::Published),
            result("b", None, Outcome::Failed("x".into())),
        ];
        assert_eq!(versions_note(&same), None);
        assert_eq!(common_version(&same), Some("0123456789abcdef"));
        let mut mixed: Vec<FleetResult> = (1..=5)
            .map(|i| {
                result(
                    &format!("pay-{i}"),
                    Some("0123456789abcdef"),
                    Outcome::Published,
                )
            })
            .collect();
        mixed.push(result("old", Some("fedcba9876543210"), Outcome::Published));
        assert_eq!(common_version(&mixed), None);
        insta::assert_snapshot!(versions_note(&mixed).unwrap(), @"warning: the fleets got different versions of the same build: 0123456789abcdef on 5 fleets (apps/pay-1, apps/pay-2, apps/pay-3 and 2 more); fedcba9876543210 on 1 fleet (apps/old). celld derives the version from the bundle, the config and its vars: they differ when the fleets' deploy images carry different celld or esbuild releases (each fleet's default deployer follows its own celld version; pass --deployer-image to use one for all) or when --vars-from-secret gives them different values");
    }

    #[test]
    fn an_interruption_says_what_each_fleet_was_left_with() {
        let results = [
            result("a", Some("0123456789abcdef"), Outcome::Published),
            result("b", None, Outcome::Interrupted { publishing: true }),
            result("c", None, Outcome::Interrupted { publishing: false }),
            result("d", None, Outcome::Untouched),
            result("e", None, Outcome::Untouched),
        ];
        insta::assert_snapshot!(interrupted_note(&results), @"1 published: apps/a; 1 interrupted while celld deploy ran, so the version may be published (check with kubectl celld status): apps/b; 1 interrupted before celld deploy, nothing published: apps/c; 2 untouched: apps/d, apps/e");
    }
}
