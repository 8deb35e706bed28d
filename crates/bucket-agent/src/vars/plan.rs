//! What merging Secrets into a Worker's `vars` would do, from the key names and sizes alone:
//! the plugin checks this before uploading anything, the pod again before merging.
//!
//! A key that is already in the config's `vars` takes the Secret's value (the config's value
//! is typically a placeholder for local development); the plan lists it so the plugin can say
//! so. The same key in two Secrets is refused.

use super::error::VarsError;
use super::limits::{MAX_TOTAL_BYTES, MAX_VALUE_BYTES, suggest, valid_name};
use serde_json::{Map, Value};

/// One key of a Secret, without its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyInfo {
    /// The key.
    pub name: String,
    /// The value's size in bytes.
    pub size: usize,
    /// Whether the value is UTF-8 text.
    pub text: bool,
}

/// The keys of one Secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretKeys {
    /// The Secret's name.
    pub secret: String,
    /// Its keys, in the order they are merged.
    pub keys: Vec<KeyInfo>,
}

/// What a merge does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Every key taken from a Secret, with the Secret it comes from, in merge order.
    pub keys: Vec<(String, String)>,
    /// The keys whose value in the config's `vars` a Secret replaces.
    pub overridden: Vec<String>,
    /// Size of all the vars after the merge (see [`super::MAX_TOTAL_BYTES`]); when the config
    /// is not known, of the Secrets' keys only.
    pub total: usize,
}

/// Size of one entry of `vars`, as counted against [`MAX_TOTAL_BYTES`].
pub fn entry_size(name: &str, value: &Value) -> usize {
    name.len()
        + match value {
            Value::String(s) => s.len(),
            other => other.to_string().len(),
        }
}

/// Checks `secrets` against the rules and `config_vars` (the config's `vars`; `None` when the
/// config is not known here, as for a source baked into an image).
pub fn plan(
    config_vars: Option<&Map<String, Value>>,
    secrets: &[SecretKeys],
) -> Result<Plan, VarsError> {
    let mut plan = Plan::default();
    let empty = Map::new();
    let config = config_vars.unwrap_or(&empty);
    let mut total: usize = config.iter().map(|(k, v)| entry_size(k, v)).sum();
    for secret in secrets {
        let name = &secret.secret;
        if secret.keys.is_empty() {
            return Err(VarsError::Empty {
                secret: name.clone(),
            });
        }
        for key in &secret.keys {
            check_key(name, key)?;
            if let Some((_, first)) = plan.keys.iter().find(|(k, _)| *k == key.name) {
                return Err(VarsError::TwoSecrets {
                    key: key.name.clone(),
                    first: first.clone(),
                    second: name.clone(),
                });
            }
            if let Some(old) = config.get(&key.name) {
                total -= entry_size(&key.name, old);
                plan.overridden.push(key.name.clone());
            }
            total += key.name.len() + key.size;
            plan.keys.push((key.name.clone(), name.clone()));
        }
        if total > MAX_TOTAL_BYTES {
            return Err(VarsError::TotalTooLarge {
                secret: name.clone(),
                size: total,
            });
        }
    }
    plan.total = total;
    Ok(plan)
}

fn check_key(secret: &str, key: &KeyInfo) -> Result<(), VarsError> {
    if !valid_name(&key.name) {
        return Err(VarsError::BadName {
            secret: secret.to_string(),
            key: key.name.clone(),
            suggestion: suggest(&key.name),
        });
    }
    if !key.text {
        return Err(VarsError::NotText {
            secret: secret.to_string(),
            key: key.name.clone(),
        });
    }
    if key.size > MAX_VALUE_BYTES {
        return Err(VarsError::ValueTooLarge {
            secret: secret.to_string(),
            key: key.name.clone(),
            size: key.size,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(name: &str, size: usize) -> KeyInfo {
        KeyInfo {
            name: name.into(),
            size,
            text: true,
        }
    }

    fn secret(name: &str, keys: Vec<KeyInfo>) -> SecretKeys {
        SecretKeys {
            secret: name.into(),
            keys,
        }
    }

    #[test]
    fn secret_wins_over_the_config_and_is_listed() {
        let config = json!({"API_KEY": "dev", "MODE": "prod"});
        let plan = plan(
            config.as_object(),
            &[secret(
                "web-vars",
                vec![key("API_KEY", 10), key("TOKEN", 4)],
            )],
        )
        .unwrap();
        assert_eq!(plan.overridden, ["API_KEY"]);
        assert_eq!(
            plan.keys,
            [
                ("API_KEY".to_string(), "web-vars".to_string()),
                ("TOKEN".to_string(), "web-vars".to_string())
            ]
        );
        assert_eq!(
            plan.total,
            "MODE".len() + 4 + "API_KEY".len() + 10 + "TOKEN".len() + 4
        );
    }

    #[test]
    fn refuses_a_key_in_two_secrets() {
        let err = plan(
            None,
            &[
                secret("a", vec![key("TOKEN", 1)]),
                secret("b", vec![key("TOKEN", 1)]),
            ],
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "key TOKEN is in both Secret a and Secret b: the vars would depend on the order of the flags; remove the key from one of them"
        );
    }

    #[test]
    fn refuses_bad_names_binary_and_large_values() {
        let err = plan(None, &[secret("s", vec![key("api-key", 1)])]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Secret s has key 'api-key', which is not a valid vars name (letters, digits and '_', not starting with a digit): rename the key in the Secret, for example to api_key"
        );
        let binary = KeyInfo {
            text: false,
            ..key("CERT", 3)
        };
        let err = plan(None, &[secret("s", vec![binary])]).unwrap_err();
        assert!(matches!(err, VarsError::NotText { .. }), "{err}");
        assert!(plan(None, &[secret("s", vec![key("A", MAX_VALUE_BYTES)])]).is_ok());
        let err = plan(None, &[secret("s", vec![key("A", MAX_VALUE_BYTES + 1)])]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Secret s key A: the value is 5121 bytes, more than the 5120 bytes a var may hold: keep large data in the bucket or a KV store and put only a reference in the Secret"
        );
        let err = plan(None, &[secret("s", vec![])]).unwrap_err();
        assert!(matches!(err, VarsError::Empty { .. }), "{err}");
    }

    #[test]
    fn bounds_the_total_with_the_config() {
        let keys: Vec<KeyInfo> = (0..13).map(|i| key(&format!("K{i:02}"), 5000)).collect();
        assert!(plan(None, &[secret("s", keys.clone())]).is_ok());
        let config = json!({"BIG": "x".repeat(5000)});
        let err = plan(config.as_object(), &[secret("s", keys.clone())]).unwrap_err();
        assert!(
            matches!(err, VarsError::TotalTooLarge { ref secret, size } if secret == "s" && size > MAX_TOTAL_BYTES),
            "{err}"
        );
        // A key that replaces the config's value counts once.
        let config = json!({"K00": "x".repeat(5000)});
        assert!(plan(config.as_object(), &[secret("s", keys)]).is_ok());
    }
}
