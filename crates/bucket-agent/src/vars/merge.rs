//! Merging the values of Secrets into the `vars` of a wrangler config's text. The result is
//! plain JSON (comments and trailing commas of a `wrangler.jsonc` are dropped, which JSONC
//! readers accept); it only lives in the deploy pod, for `celld deploy` to read.

use super::error::VarsError;
use super::jsonc;
use super::plan::{self, KeyInfo, Plan, SecretKeys};
use serde_json::Value;
use std::fmt;

/// The keys and values of one Secret. Its `Debug` shows key names and sizes only.
#[derive(Clone, PartialEq, Eq)]
pub struct SecretVars {
    /// The Secret's name.
    pub secret: String,
    /// Its keys and values, in merge order.
    pub values: Vec<(String, Vec<u8>)>,
}

impl fmt::Debug for SecretVars {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretVars")
            .field("secret", &self.secret)
            .field("keys", &self.keys().keys)
            .finish()
    }
}

impl SecretVars {
    /// The keys without their values.
    pub fn keys(&self) -> SecretKeys {
        SecretKeys {
            secret: self.secret.clone(),
            keys: self
                .values
                .iter()
                .map(|(name, value)| KeyInfo {
                    name: name.clone(),
                    size: value.len(),
                    text: std::str::from_utf8(value).is_ok(),
                })
                .collect(),
        }
    }
}

/// A merged config.
#[derive(Clone, PartialEq, Eq)]
pub struct Merged {
    /// The config's new text (holds the values: write it only where `celld deploy` reads it).
    pub text: String,
    /// What the merge did.
    pub plan: Plan,
}

impl fmt::Debug for Merged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Merged")
            .field("text", &format_args!("<{} bytes>", self.text.len()))
            .field("plan", &self.plan)
            .finish()
    }
}

/// The `vars` object of the config text `text` of `file`, parsed (JSON or JSONC); `None` when
/// the config has no `vars`.
pub fn config_vars(
    file: &str,
    text: &str,
) -> Result<(Value, Option<serde_json::Map<String, Value>>), VarsError> {
    let value: Value =
        serde_json::from_str(&jsonc::to_json(text)).map_err(|e| VarsError::ConfigSyntax {
            file: file.to_string(),
            message: e.to_string(),
        })?;
    let Value::Object(map) = &value else {
        return Err(VarsError::ConfigShape {
            file: file.to_string(),
            problem: "the top level is not an object",
        });
    };
    let vars = match map.get("vars") {
        None => None,
        Some(Value::Object(vars)) => Some(vars.clone()),
        Some(_) => {
            return Err(VarsError::ConfigShape {
                file: file.to_string(),
                problem: "\"vars\" is not an object",
            });
        }
    };
    Ok((value, vars))
}

/// Merges `secrets` into the `vars` of `text`, the content of the config file `file`.
pub fn merge(file: &str, text: &str, secrets: &[SecretVars]) -> Result<Merged, VarsError> {
    let (mut config, vars) = config_vars(file, text)?;
    let keys: Vec<SecretKeys> = secrets.iter().map(SecretVars::keys).collect();
    let plan = plan::plan(Some(&vars.clone().unwrap_or_default()), &keys)?;
    let mut vars = vars.unwrap_or_default();
    for secret in secrets {
        for (name, value) in &secret.values {
            // The plan checked every value is UTF-8.
            let text = String::from_utf8_lossy(value).into_owned();
            vars.insert(name.clone(), Value::String(text));
        }
    }
    if let Value::Object(map) = &mut config {
        map.insert("vars".to_string(), Value::Object(vars));
    }
    let mut text = serde_json::to_string_pretty(&config).map_err(|e| VarsError::ConfigSyntax {
        file: file.to_string(),
        message: e.to_string(),
    })?;
    text.push('\n');
    Ok(Merged { text, plan })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SENTINEL: &str = "s3cr3t-VALUE-never-shown";

    fn secret(name: &str, values: &[(&str, &[u8])]) -> SecretVars {
        SecretVars {
            secret: name.into(),
            values: values
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_vec()))
                .collect(),
        }
    }

    fn parsed(merged: &Merged) -> Value {
        serde_json::from_str(&merged.text).unwrap()
    }

    #[test]
    fn merges_into_json_without_vars() {
        let text = r#"{"name": "web", "main": "src/index.ts"}"#;
        let merged = merge(
            "wrangler.json",
            text,
            &[secret("web-vars", &[("API_KEY", SENTINEL.as_bytes())])],
        )
        .unwrap();
        assert_eq!(
            parsed(&merged),
            json!({"name": "web", "main": "src/index.ts", "vars": {"API_KEY": SENTINEL}})
        );
        assert!(merged.plan.overridden.is_empty());
        assert!(!format!("{merged:?}").contains(SENTINEL));
    }

    #[test]
    fn merges_into_jsonc_with_comments_trailing_commas_and_vars() {
        let text = r#"// the web Worker
{
  "name": "web", /* no bundling */
  "main": "src/index.ts",
  "vars": {
    "MODE": "production",
    "API_KEY": "dev-placeholder", // set from a Secret in the cluster
    "LIMITS": { "rps": 10 },
  },
}
"#;
        let merged = merge(
            "wrangler.jsonc",
            text,
            &[
                secret(
                    "web-vars",
                    &[("API_KEY", b"k1"), ("DB_URL", b"postgres://x")],
                ),
                secret("other", &[("CELLD_TOKEN", b"t")]),
            ],
        )
        .unwrap();
        assert_eq!(
            parsed(&merged)["vars"],
            json!({
                "MODE": "production",
                "API_KEY": "k1",
                "LIMITS": {"rps": 10},
                "DB_URL": "postgres://x",
                "CELLD_TOKEN": "t"
            })
        );
        assert_eq!(merged.plan.overridden, ["API_KEY"]);
    }

    #[test]
    fn errors_name_secret_and_key_never_the_value() {
        let config = r#"{"name": "web", "main": "a.js", "vars": {"X": "1"}}"#;
        let big = SENTINEL.repeat(400);
        let cases: Vec<Vec<SecretVars>> = vec![
            vec![secret("s", &[("bad-name", SENTINEL.as_bytes())])],
            vec![secret("s", &[("BIG", big.as_bytes())])],
            vec![secret("s", &[("BIN", &[0xff, 0xfe, b'x'])])],
            vec![
                secret("a", &[("T", SENTINEL.as_bytes())]),
                secret("b", &[("T", SENTINEL.as_bytes())]),
            ],
        ];
        for secrets in cases {
            let err = merge("wrangler.json", config, &secrets)
                .unwrap_err()
                .to_string();
            assert!(!err.contains(SENTINEL) && !err.contains("s3cr3t"), "{err}");
            assert!(err.contains("Secret"), "{err}");
        }
        let err = merge(
            "wrangler.json",
            config,
            &[secret("s", &[("BIG", big.as_bytes())])],
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("Secret s key BIG: the value is 9600 bytes"),
            "{err}"
        );
    }

    #[test]
    fn refuses_configs_it_cannot_merge_into() {
        let s = [secret("s", &[("A", b"1")])];
        let err = merge("wrangler.jsonc", "{\n  \"name\": oops\n}", &s)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("wrangler.jsonc: not valid JSON or JSONC"),
            "{err}"
        );
        assert!(err.contains("line 2"), "{err}");
        let err = merge("wrangler.json", r#"{"vars": ["A"]}"#, &s)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "wrangler.json: \"vars\" is not an object: fix the file; vars from Secrets are merged into its \"vars\" object"
        );
        let err = merge("wrangler.json", "[]", &s).unwrap_err().to_string();
        assert!(err.contains("the top level is not an object"), "{err}");
    }
}
