//! Settings a release brings that no node may use until every node of the fleet runs it
//! (celld's upgrade notes call them gates; the release table lists them as [`Held`]): which of a
//! fleet's spec.env variables use one, and from which release.

use super::releases::{Held, RELEASES, Triple, Use};
use k8s_openapi::api::core::v1::EnvVar;

/// A variable of spec.env that uses a held setting.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HeldUse<'a> {
    /// The variable.
    pub var: &'a EnvVar,
    /// The release every node must run before it is used.
    pub since: Triple,
    /// The setting's rule.
    pub held: &'static Held,
}

impl Held {
    /// Whether `var` uses this setting: a value from elsewhere (a Secret or ConfigMap) counts,
    /// since what it holds cannot be known here.
    pub fn used_by(&self, var: &EnvVar) -> bool {
        if var.name != self.name {
            return false;
        }
        if var.value_from.is_some() {
            return true;
        }
        let value = var.value.as_deref().unwrap_or_default().trim();
        match self.used {
            Use::Set => !value.is_empty() && value != "0",
            Use::RaisedAbove(default) => value
                .parse::<u64>()
                .map_or(!value.is_empty(), |n| n > default),
        }
    }
}

/// The variables of `env` that use a setting some release holds, with that release.
pub fn held_uses(env: &[EnvVar]) -> Vec<HeldUse<'_>> {
    env.iter()
        .filter_map(|var| {
            RELEASES.iter().find_map(|release| {
                let held = release.held.iter().find(|h| h.used_by(var))?;
                Some(HeldUse {
                    var,
                    since: release.version,
                    held,
                })
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(name: &str, value: &str) -> EnvVar {
        EnvVar {
            name: name.into(),
            value: Some(value.into()),
            ..EnvVar::default()
        }
    }

    #[test]
    fn what_uses_a_held_setting_of_0_6_1() {
        let used = |v: EnvVar| held_uses(std::slice::from_ref(&v)).len() == 1;
        assert!(used(var("CELLD_LTX_RETENTION_SECS", "86400")));
        assert!(
            !used(var("CELLD_LTX_RETENTION_SECS", "0")),
            "0 is celld's unset"
        );
        assert!(!used(var("CELLD_LTX_RETENTION_SECS", "")));
        assert!(
            used(var("CELLD_MAX_ASSET_FILE_BYTES", "52428800")),
            "raised"
        );
        assert!(
            !used(var("CELLD_MAX_ASSET_FILE_BYTES", "26214400")),
            "the default"
        );
        assert!(
            !used(var("CELLD_MAX_ASSET_FILE_BYTES", "1048576")),
            "lowered"
        );
        assert!(
            used(var("CELLD_MAX_ASSET_FILE_BYTES", "50Mi")),
            "unreadable: held"
        );
        assert!(!used(var("RUST_LOG", "debug")));
        let from_secret = EnvVar {
            name: "CELLD_LTX_RETENTION_SECS".into(),
            value_from: Some(Default::default()),
            ..EnvVar::default()
        };
        assert!(used(from_secret));
        let env = [var("CELLD_LTX_RETENTION_SECS", "60")];
        let uses = held_uses(&env);
        assert_eq!(uses[0].since, (0, 6, 1));
        assert!(uses[0].held.unset_before_rollback);
    }
}
