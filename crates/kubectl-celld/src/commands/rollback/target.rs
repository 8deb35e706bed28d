//! Which version a rollback goes to, and whether it may: the version must be published with a
//! readable manifest.json naming it, and must not be the live one.
//!
//! celld v0.4's contract defines no list of required runtime features in manifest.json (nor
//! anywhere else), so a version the fleet's image cannot run is not detected here: the nodes'
//! reload reports it (HTTP 422, the node keeps serving the previous version).

use crate::bucket::versions::{self, History, Version};

/// Picks the target: `to` (`VERSION` or `SCRIPT/VERSION`), else the version uploaded just
/// before the live one. The error says why none fits and what to run.
pub fn pick<'a>(history: &'a History, to: Option<&str>) -> Result<&'a Version, String> {
    let fleet = format!("{} -n {}", history.fleet, history.namespace);
    let Some(current) = &history.current else {
        return Err(format!(
            "fleet {}/{} has no deployment pointer (deploy/current.json under {}): nothing is deployed, so there is nothing to roll back; deploy with: kubectl celld deploy DIR --fleet {fleet}",
            history.namespace, history.fleet, history.bucket
        ));
    };
    let target = match to {
        Some(wanted) => {
            let (script, version) = match wanted.split_once('/') {
                Some((s, v)) => (Some(s), v),
                None => (None, wanted),
            };
            let matches: Vec<&Version> = history
                .versions
                .iter()
                .filter(|v| v.version == version && script.is_none_or(|s| s == v.script))
                .collect();
            match matches.as_slice() {
                [one] => *one,
                [] => {
                    return Err(format!(
                        "version {wanted} is not published under {}/deploy/; list the versions with: kubectl celld history {fleet}",
                        history.bucket
                    ));
                }
                many => {
                    let names: Vec<String> = many
                        .iter()
                        .map(|v| format!("{}/{}", v.script, v.version))
                        .collect();
                    return Err(format!(
                        "version {wanted} is published for several scripts ({}): name one as --to SCRIPT/VERSION",
                        names.join(", ")
                    ));
                }
            }
        }
        None => versions::previous(history).ok_or_else(|| {
            format!(
                "no version was published before the live one ({}): nothing to roll back to; list the versions with: kubectl celld history {fleet}",
                current.version
            )
        })?,
    };
    if target.current {
        return Err(format!(
            "version {} is already live on fleet {}/{}: nothing to do",
            target.version, history.namespace, history.fleet
        ));
    }
    if let Some(problem) = &target.problem {
        return Err(format!(
            "refusing to roll back to version {} of {}: {problem} (deploy/{}/{}/manifest.json is what marks a complete upload); pick another with --to (kubectl celld history {fleet})",
            target.version, target.script, target.script, target.version
        ));
    }
    Ok(target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bucket::versions::Current;

    fn v(script: &str, version: &str, current: bool, problem: Option<&str>) -> Version {
        Version {
            version: version.into(),
            script: script.into(),
            current,
            modules: 1,
            size: 1,
            uploaded: None,
            problem: problem.map(Into::into),
        }
    }

    fn history(versions: Vec<Version>) -> History {
        History {
            fleet: "web".into(),
            namespace: "apps".into(),
            bucket: "s3://celld/web".into(),
            current: Some(Current {
                script: Some("w".into()),
                version: "c".into(),
            }),
            versions,
        }
    }

    #[test]
    fn picks_and_refuses() {
        let h = history(vec![
            v("w", "d", false, None),
            v("w", "c", true, None),
            v(
                "w",
                "b",
                false,
                Some("no manifest.json: an upload that never finished"),
            ),
            v("w", "a", false, None),
            v("x", "a", false, None),
        ]);
        // The default is the one just before the live one, even when it cannot be used.
        let err = pick(&h, None).unwrap_err();
        assert!(err.contains("refusing to roll back to version b"), "{err}");
        assert!(err.contains("no manifest.json"), "{err}");
        assert_eq!(pick(&h, Some("d")).unwrap().version, "d");
        assert!(pick(&h, Some("c")).unwrap_err().contains("already live"));
        assert!(
            pick(&h, Some("a"))
                .unwrap_err()
                .contains("--to SCRIPT/VERSION")
        );
        assert_eq!(pick(&h, Some("x/a")).unwrap().script, "x");
        assert!(
            pick(&h, Some("zz"))
                .unwrap_err()
                .contains("kubectl celld history web -n apps")
        );
        let mut none = history(vec![]);
        none.current = None;
        assert!(
            pick(&none, None)
                .unwrap_err()
                .contains("nothing is deployed")
        );
    }
}
