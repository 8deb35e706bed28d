//! spec.env against the celld version of spec.image, at admission: a variable the version
//! refuses at startup (from the release table) is refused on the fleet, naming the variable,
//! the release and what to set instead. The version is read from the image tag as
//! [`image_version`](crate::contract::version::image_version) reads it; an image whose version
//! cannot be known (a digest alone, `latest`) passes here and the operator reports it instead.
//!
//! A setting a release holds until every node runs it (CELLD_LTX_RETENTION_SECS from 0.6.1) is
//! refused on an image tagged with an older version: its nodes could never use it, and a
//! rollback below the release must drop it first. An image at or above the release passes, and
//! the operator holds the setting back until every node runs it.
//!
//! 0.4.1's bound of the drain-token wait by ¾ of the shutdown bound, and a raised
//! CELLD_MAX_ASSET_FILE_BYTES, are checked by the operator alone: a rule reading the numbers in
//! spec.env values, which have no length bound, is estimated at 16 times the API server's budget
//! for one rule.

use super::bounds;
use crate::contract::releases::{Held, RELEASES, Refusal, Triple, Use, display};
use kube::core::Rule;
use schemars::Schema;

/// Schema transform of the fleet spec: the rules below.
pub fn schema(schema: &mut Schema) {
    if let Some(root) = schema.pointer_mut("") {
        bounds::add_rules(root, &[], &rules());
    }
}

/// A regular expression for a number at least `n` (no leading zeros, as semantic versions).
fn number_at_least(n: u64) -> String {
    let digits = n.to_string();
    let len = digits.len();
    let mut alternatives = vec![format!("[1-9][0-9]{{{len},}}"), digits.clone()];
    for (i, c) in digits.char_indices() {
        if c < '9' {
            let next = char::from(c as u8 + 1);
            alternatives.push(format!(
                "{}[{next}-9]{}",
                &digits[..i],
                "[0-9]".repeat(len - i - 1)
            ));
        }
    }
    format!("({})", alternatives.join("|"))
}

/// A regular expression for an image whose tag is a version at least `v`, digest-pinned or
/// not (`…/celld:v0.5.0`, `…/celld:0.5.1-rc.1@sha256:…`).
pub fn image_at_least((major, minor, patch): Triple) -> String {
    let any = "[0-9]+";
    let version = [
        format!("{}[.]{any}[.]{any}", number_at_least(major + 1)),
        format!("{major}[.]{}[.]{any}", number_at_least(minor + 1)),
        format!("{major}[.]{minor}[.]{}", number_at_least(patch)),
    ]
    .join("|");
    format!("^.*:v?({version})([-+][-+.0-9A-Za-z]*)?(@[^@]*)?$")
}

fn names(refusal: &Refusal) -> String {
    if refusal.is_prefix() {
        format!("every {}* variable", refusal.name)
    } else {
        refusal.name.to_string()
    }
}

/// Rule: the refused variable is not set on an image at `since` or later.
fn refusal_rule(since: Triple, refusal: &Refusal) -> Rule {
    let matches = if refusal.is_prefix() {
        format!("e.name.startsWith('{}')", refusal.name)
    } else {
        format!("e.name == '{}'", refusal.name)
    };
    let set = if refusal.empty_tolerated {
        " && (has(e.valueFrom) || (has(e.value) && e.value.size() > 0))"
    } else {
        ""
    };
    let release = display(since);
    Rule::new(format!(
        "!has(self.env) || !self.env.exists(e, {matches}{set}) || !self.image.matches('{}')",
        image_at_least(since)
    ))
    .message(
        format!(
            "spec.env: celld {release} and later refuse {} at startup{}, and spec.image runs {release} or later: {}",
            names(refusal),
            if refusal.empty_tolerated { "" } else { ", even empty" },
            refusal.instead
        )
        .as_str(),
    )
}

/// A regular expression for an image whose tag is a version (see [`image_at_least`]).
const ANY_VERSION: &str = "^.*:v?[0-9]+[.][0-9]+[.][0-9]+([-+][-+.0-9A-Za-z]*)?(@[^@]*)?$";

/// Rule: the held setting is not set on an image tagged with a version below `since`. Only
/// settings used by being set: a number's size cannot be read within the cost budget.
fn held_rule(since: Triple, held: &Held) -> Option<Rule> {
    if held.used != Use::Set {
        return None;
    }
    let release = display(since);
    let name = held.name;
    Some(
        Rule::new(format!(
            "!has(self.env) || !self.env.exists(e, e.name == '{name}' && (has(e.valueFrom) || (has(e.value) && e.value.size() > 0 && e.value != '0'))) || !self.image.matches('{ANY_VERSION}') || self.image.matches('{}')",
            image_at_least(since)
        ))
        .message(
            format!(
                "spec.env: {name} is used from celld {release} on, once every node runs it, and spec.image is tagged with an older version: remove {name}, or set spec.image to {release} or later first and add it once every node runs it"
            )
            .as_str(),
        ),
    )
}

/// Every rule, from the release table.
pub fn rules() -> Vec<Rule> {
    RELEASES
        .iter()
        .flat_map(|release| {
            let refused = release
                .refuses
                .iter()
                .map(|refusal| refusal_rule(release.version, refusal));
            let held = release
                .held
                .iter()
                .filter_map(|held| held_rule(release.version, held));
            refused.chain(held)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RE2 syntax, as CEL's matches() (and the client-side evaluator) reads it.
    fn matches(pattern: &str, text: &str) -> bool {
        regex::Regex::new(pattern).unwrap().is_match(text)
    }

    #[test]
    fn numbers_at_least() {
        for n in [0u64, 1, 5, 9, 10, 19, 40, 99, 120] {
            let re = format!("^{}$", number_at_least(n));
            for k in 0..=1000u64 {
                assert_eq!(matches(&re, &k.to_string()), k >= n, "{k} vs {n}: {re}");
            }
            assert!(!matches(&re, "007"), "{re}");
        }
    }

    #[test]
    fn any_version_matches_what_image_version_reads() {
        for image in [
            "ghcr.io/denoland/celld:v0.5.0",
            "registry.local:5000/celld:0.6.1@sha256:e188a7f2bb0b",
            "ghcr.io/denoland/celld:v0.5.0-rc.1",
            "ghcr.io/denoland/celld:latest",
            "ghcr.io/denoland/celld:sha-a52f990",
            "registry.local:5000/celld",
            "ghcr.io/denoland/celld@sha256:e188a7f2bb0b",
        ] {
            assert_eq!(
                matches(ANY_VERSION, image),
                crate::contract::version::image_version(image).is_some(),
                "{image}"
            );
        }
    }

    #[test]
    fn images_at_least_a_version() {
        let re = image_at_least((0, 5, 0));
        for (image, at_least) in [
            ("ghcr.io/denoland/celld:v0.5.0", true),
            ("ghcr.io/denoland/celld:0.5.1", true),
            ("ghcr.io/denoland/celld:v0.6.1@sha256:e188a7f2bb0b", true),
            ("registry.local:5000/celld:v0.10.0", true),
            ("registry.local:5000/celld:1.0.0", true),
            ("ghcr.io/denoland/celld:v0.5.0-rc.1", true),
            ("ghcr.io/denoland/celld:v0.4.9", false),
            ("ghcr.io/denoland/celld:v0.4.1@sha256:ce8bbc3c26a1", false),
            ("registry.local:5000/celld", false),
            ("ghcr.io/denoland/celld:latest", false),
            ("ghcr.io/denoland/celld@sha256:e188a7f2bb0b", false),
        ] {
            assert_eq!(matches(&re, image), at_least, "{image}");
            let known = crate::contract::version::image_version(image);
            assert_eq!(
                known.is_some_and(|v| crate::contract::releases::triple(&v) >= (0, 5, 0)),
                at_least,
                "image_version and the admission pattern agree on {image}"
            );
        }
    }
}
