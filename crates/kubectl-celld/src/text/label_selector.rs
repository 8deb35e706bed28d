//! kubectl's label selector syntax (`team=web,tier!=canary,region in (eu,us),!legacy`) turned
//! into the LabelSelector an object holds: equalities become matchLabels, every other
//! requirement a matchExpressions entry. Each error names the requirement and the syntax.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};
use std::collections::BTreeMap;

/// The syntax, for error messages.
const SYNTAX: &str = "write KEY=VALUE, KEY!=VALUE, 'KEY in (A,B)', 'KEY notin (A,B)', KEY (the label is set) or !KEY (it is not), separated by commas (for example app=web,tier!=canary); keys and values are letters, digits, '-', '_' and '.', and a key may start with a DNS prefix and '/'";

/// The requirements of `text`, split at the commas outside parentheses.
fn terms(text: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1).ok_or_else(|| {
                    format!("the selector '{text}' closes a parenthesis it never opened: {SYNTAX}")
                })?;
            }
            ',' if depth == 0 => {
                out.push(text[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth > 0 {
        return Err(format!(
            "the selector '{text}' leaves a parenthesis open: {SYNTAX}"
        ));
    }
    out.push(text[start..].trim());
    Ok(out)
}

/// Whether `name` is a label name (and a non-empty label value): at most 63 letters, digits,
/// '-', '_' and '.', starting and ending with a letter or digit.
fn is_name(name: &str) -> bool {
    let ends = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    name.len() <= 63
        && ends(name.chars().next())
        && ends(name.chars().last())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
}

/// Whether `prefix` is a label key's prefix: a DNS subdomain.
fn is_prefix(prefix: &str) -> bool {
    prefix.len() <= 253
        && prefix.split('.').all(|label| {
            let ends =
                |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
            ends(label.chars().next())
                && ends(label.chars().last())
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

/// Whether `key` is a label key: `NAME` or `PREFIX/NAME`.
fn is_key(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => is_prefix(prefix) && is_name(name),
        None => is_name(key),
    }
}

/// Whether `value` is a label value: empty, or like a name.
fn is_value(value: &str) -> bool {
    value.is_empty() || is_name(value)
}

/// A set requirement: `KEY in (A,B)` or `KEY notin (A,B)`; None when `term` is not one.
fn set_requirement(term: &str) -> Option<Result<LabelSelectorRequirement, ()>> {
    let (key, rest) = term.split_once(char::is_whitespace)?;
    let rest = rest.trim_start();
    let (operator, rest) = if let Some(rest) = rest.strip_prefix("notin") {
        ("NotIn", rest)
    } else {
        ("In", rest.strip_prefix("in")?)
    };
    let list = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    let values: Vec<String> = list.split(',').map(|v| v.trim().to_string()).collect();
    let valid = is_key(key) && values.iter().all(|v| !v.is_empty() && is_value(v));
    Some(if valid {
        Ok(LabelSelectorRequirement {
            key: key.to_string(),
            operator: operator.to_string(),
            values: Some(values),
        })
    } else {
        Err(())
    })
}

/// One requirement, as an equality (`KEY`, `VALUE`) or an expression.
enum Requirement {
    Equals(String, String),
    Expression(LabelSelectorRequirement),
}

fn requirement(term: &str) -> Option<Requirement> {
    let expression = |key: &str, operator: &str, values: Option<Vec<String>>| {
        is_key(key).then(|| {
            Requirement::Expression(LabelSelectorRequirement {
                key: key.to_string(),
                operator: operator.to_string(),
                values,
            })
        })
    };
    if let Some(found) = set_requirement(term) {
        return found.ok().map(Requirement::Expression);
    }
    if let Some(key) = term.strip_prefix('!') {
        return expression(key.trim(), "DoesNotExist", None);
    }
    if let Some((key, value)) = term.split_once("!=") {
        let (key, value) = (key.trim(), value.trim());
        return is_value(value)
            .then(|| expression(key, "NotIn", Some(vec![value.to_string()])))
            .flatten();
    }
    if let Some((key, value)) = term.split_once('=') {
        let value = value.strip_prefix('=').unwrap_or(value);
        let (key, value) = (key.trim(), value.trim());
        return (is_key(key) && is_value(value))
            .then(|| Requirement::Equals(key.to_string(), value.to_string()));
    }
    expression(term, "Exists", None)
}

/// Parses `text`, kubectl's label selector syntax.
pub fn parse(text: &str) -> Result<LabelSelector, String> {
    if text.trim().is_empty() {
        return Err(format!("the selector is empty: {SYNTAX}"));
    }
    let mut labels = BTreeMap::new();
    let mut expressions = Vec::new();
    for term in terms(text)? {
        match requirement(term) {
            Some(Requirement::Equals(key, value)) => {
                if labels.insert(key.clone(), value).is_some() {
                    return Err(format!(
                        "the selector '{text}' sets label {key} twice: give each key one value"
                    ));
                }
            }
            Some(Requirement::Expression(e)) => expressions.push(e),
            None => {
                return Err(format!(
                    "'{term}' in the selector '{text}' is not a label requirement: {SYNTAX}"
                ));
            }
        }
    }
    Ok(LabelSelector {
        match_labels: (!labels.is_empty()).then_some(labels),
        match_expressions: (!expressions.is_empty()).then_some(expressions),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> String {
        serde_json::to_string(&parse(text).unwrap()).unwrap()
    }

    #[test]
    fn equalities_become_match_labels() {
        assert_eq!(
            json("app.kubernetes.io/part-of=web, ring==main"),
            r#"{"matchLabels":{"app.kubernetes.io/part-of":"web","ring":"main"}}"#
        );
        assert_eq!(json("tier="), r#"{"matchLabels":{"tier":""}}"#);
    }

    #[test]
    fn other_requirements_become_expressions() {
        insta::assert_snapshot!(
            json("app=web,tier!=canary,region in (eu, us),zone notin (a),!legacy,team"),
            @r#"{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["canary"]},{"key":"region","operator":"In","values":["eu","us"]},{"key":"zone","operator":"NotIn","values":["a"]},{"key":"legacy","operator":"DoesNotExist"},{"key":"team","operator":"Exists"}],"matchLabels":{"app":"web"}}"#
        );
    }

    #[test]
    fn anything_else_is_refused_naming_the_requirement() {
        for (bad, says) in [
            ("", "the selector is empty"),
            ("app=web,", "'' in the selector"),
            ("app=web,,tier=x", "'' in the selector"),
            ("app=a=b", "'app=a=b' in the selector"),
            ("a b", "'a b' in the selector"),
            ("region in (eu,)", "'region in (eu,)' in the selector"),
            ("region in eu", "'region in eu' in the selector"),
            ("region in (eu", "leaves a parenthesis open"),
            ("region)", "closes a parenthesis"),
            ("app=web,app=api", "sets label app twice"),
            ("!", "'!' in the selector"),
            ("=web", "'=web' in the selector"),
        ] {
            let e = parse(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
        insta::assert_snapshot!(parse("app~web").unwrap_err(), @"'app~web' in the selector 'app~web' is not a label requirement: write KEY=VALUE, KEY!=VALUE, 'KEY in (A,B)', 'KEY notin (A,B)', KEY (the label is set) or !KEY (it is not), separated by commas (for example app=web,tier!=canary); keys and values are letters, digits, '-', '_' and '.', and a key may start with a DNS prefix and '/'");
    }
}
