//! A fan-out deploy after which not every fleet serves the new version: the per-fleet table has
//! already said why for each; the error names the fleets and the command that deploys to them
//! again. Its exit code tells a partial failure (some fleets were deployed) from a failure of
//! all.

/// The exit code of a fan-out deploy (or its dry run) after which some fleets were deployed
/// (or would be) and others not: distinct from 1, where none was.
pub const PARTIAL_EXIT_CODE: u8 = 4;

/// Some or all fleets of a fan-out were not deployed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} of {total} fleets {}: {}; the table above gives each fleet's reason. Once fixed, deploy to {} again with: {again}",
    .failed.len(),
    if *.dry_run { "would not be deployed" } else { "were not deployed" },
    .failed.join(", "),
    if .failed.len() == 1 { "it" } else { "them" }
)]
pub struct FanOutIncomplete {
    /// How many fleets the fan-out went to.
    pub total: usize,
    /// How many of them were deployed (or, in a dry run, would be).
    pub succeeded: usize,
    /// The others, as NAMESPACE/NAME.
    pub failed: Vec<String>,
    /// Whether this was a dry run.
    pub dry_run: bool,
    /// The command that deploys to the failed fleets only.
    pub again: String,
}

impl FanOutIncomplete {
    /// [`PARTIAL_EXIT_CODE`] when some fleets were deployed, else 1.
    pub fn exit_code(&self) -> u8 {
        if self.succeeded > 0 {
            PARTIAL_EXIT_CODE
        } else {
            1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn some_deployed_is_a_partial_failure_none_deployed_a_failure() {
        let one = FanOutIncomplete {
            total: 20,
            succeeded: 19,
            failed: vec!["apps/pay-07".into()],
            dry_run: false,
            again: "kubectl celld deploy ./w --fleets apps/pay-07".into(),
        };
        assert_eq!(one.exit_code(), PARTIAL_EXIT_CODE);
        insta::assert_snapshot!(one.to_string(), @"1 of 20 fleets were not deployed: apps/pay-07; the table above gives each fleet's reason. Once fixed, deploy to it again with: kubectl celld deploy ./w --fleets apps/pay-07");
        let all = FanOutIncomplete {
            total: 2,
            succeeded: 0,
            failed: vec!["apps/a".into(), "apps/b".into()],
            dry_run: true,
            again: "kubectl celld deploy ./w --fleets apps/a,apps/b".into(),
        };
        assert_eq!(all.exit_code(), 1);
        insta::assert_snapshot!(all.to_string(), @"2 of 2 fleets would not be deployed: apps/a, apps/b; the table above gives each fleet's reason. Once fixed, deploy to them again with: kubectl celld deploy ./w --fleets apps/a,apps/b");
    }
}
