//! How long a node's lease (`nodes/<node>.json` in the bucket) outlives the node: celld's
//! supervisor contract restarts a fenced node (exit code 3) "after at least one lease TTL,
//! 10 s", and a full stop (v0.4.1 → v0.5.0) starts the new version only once every old node's
//! lease expired.

use k8s_openapi::api::core::v1::EnvVar;
use std::time::Duration;

/// The exit code of a node that fenced itself: it lost its lease's compare-and-swap (or could
/// not renew it) and stopped serving its cells; the supervisor restarts it after at least one
/// lease TTL.
pub const FENCE_EXIT_CODE: i32 = 3;

/// celld's lease TTL when nothing sets it.
pub const LEASE_TTL: Duration = Duration::from_secs(10);

/// celld's TTL tunable, in milliseconds.
pub const TTL_MS: &str = "CELLD_TTL_MS";

/// How long to wait after the last node stopped for its lease to expire: [`LEASE_TTL`], or
/// [`TTL_MS`] when `env` sets it higher as a literal number (a longer wait is always safe).
pub fn lease_lifetime(env: &[EnvVar]) -> Duration {
    let set = env
        .iter()
        .find(|e| e.name == TTL_MS)
        .and_then(|e| e.value.as_deref())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_millis);
    set.map_or(LEASE_TTL, |d| d.max(LEASE_TTL))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lease_lives_ten_seconds_or_longer_when_spec_env_says_so() {
        let env = |value: &str| {
            vec![EnvVar {
                name: TTL_MS.into(),
                value: Some(value.into()),
                ..EnvVar::default()
            }]
        };
        assert_eq!(lease_lifetime(&[]), LEASE_TTL);
        assert_eq!(lease_lifetime(&env("30000")), Duration::from_secs(30));
        assert_eq!(lease_lifetime(&env("2000")), LEASE_TTL, "never shorter");
        assert_eq!(lease_lifetime(&env("soon")), LEASE_TTL);
    }
}
