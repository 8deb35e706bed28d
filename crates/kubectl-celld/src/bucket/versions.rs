//! The versions published under a fleet's prefix: one per `deploy/<script>/<version>/`, with
//! what its manifest says (or what is wrong with it), newest first, the live one marked.

use crate::bucket::keys::{self, FLEET_POINTER, Pointer, PointerExt};
use crate::bucket::manifest;
use crate::bucket::{BucketClient, Object};
use crate::error::Result;
use futures::StreamExt;
use serde::Serialize;
use std::collections::BTreeMap;

/// How many manifests are read at once.
const PARALLEL: usize = 8;

/// One published version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Version {
    /// The version id.
    pub version: String,
    /// The script name.
    pub script: String,
    /// Whether the fleet pointer names it.
    pub current: bool,
    /// Module count (from the manifest, else the objects under the version's prefix).
    pub modules: usize,
    /// Total module size in bytes (likewise).
    pub size: u64,
    /// When it was uploaded: the manifest's `uploaded_at`, else when manifest.json was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uploaded: Option<String>,
    /// Why it cannot be rolled back to (no or a broken manifest.json).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// The fleet pointer as read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Current {
    /// The script it names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<String>,
    /// The version it names.
    pub version: String,
}

/// `history -o yaml|json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct History {
    /// The fleet.
    pub fleet: String,
    /// Its namespace.
    pub namespace: String,
    /// `s3://bucket/prefix`.
    pub bucket: String,
    /// The fleet pointer; absent before the first deploy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<Current>,
    /// Every version, newest first.
    pub versions: Vec<Version>,
}

/// What the listing says about one version directory.
#[derive(Default)]
struct Listed {
    manifest_time: Option<String>,
    has_manifest: bool,
    modules: usize,
    size: u64,
}

/// The fleet pointer and its ETag; None before the first deploy. An unreadable pointer is an
/// error naming it.
pub async fn pointer(bucket: &BucketClient) -> Result<Option<(Pointer, Object)>> {
    let Some(object) = bucket.get(FLEET_POINTER).await? else {
        return Ok(None);
    };
    let parsed: Pointer = serde_json::from_slice(&object.body).map_err(|e| {
        crate::error::Error::Rollback(format!(
            "{FLEET_POINTER} under {} is not a celld deployment pointer ({e}): {}",
            bucket.bucket(),
            String::from_utf8_lossy(&object.body)
                .chars()
                .take(200)
                .collect::<String>()
        ))
    })?;
    Ok(Some((parsed, object)))
}

/// Reads the listing, the pointer and every manifest.
pub async fn read(bucket: &BucketClient, fleet: &str, namespace: &str) -> Result<History> {
    let objects = bucket.list(keys::DEPLOY_DIR).await?;
    let mut dirs: BTreeMap<(String, String), Listed> = BTreeMap::new();
    for o in &objects {
        let Some(rest) = o.key.strip_prefix(keys::DEPLOY_DIR) else {
            continue;
        };
        let mut parts = rest.splitn(3, '/');
        let (Some(script), Some(version), Some(file)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let entry = dirs
            .entry((script.to_string(), version.to_string()))
            .or_default();
        if file == "manifest.json" {
            entry.has_manifest = true;
            entry.manifest_time = Some(o.last_modified.clone());
        } else {
            entry.modules += 1;
            entry.size += o.size;
        }
    }
    let current = pointer(bucket).await?.map(|(p, _)| Current {
        script: p.script().map(str::to_string),
        version: p.version,
    });
    let reads = dirs
        .into_iter()
        .map(|((script, version), listed)| async move {
            let problem_free = listed.has_manifest;
            let mut entry = Version {
                current: false,
                modules: listed.modules,
                size: listed.size,
                uploaded: listed.manifest_time.clone(),
                problem: None,
                version,
                script,
            };
            if !problem_free {
                entry.problem = Some("no manifest.json: an upload that never finished".into());
                return Ok::<_, crate::error::Error>(entry);
            }
            let key = keys::manifest_key(&entry.script, &entry.version);
            match bucket.get(&key).await? {
                None => entry.problem = Some("manifest.json vanished while reading".into()),
                Some(object) => match manifest::parse(&object.body) {
                    Err(e) => entry.problem = Some(e),
                    Ok(m) => {
                        entry.problem = m.mismatch(&entry.script, &entry.version);
                        if let Some((count, size)) = m.modules() {
                            (entry.modules, entry.size) = (count, size);
                        }
                        if let Some(at) = m.uploaded_at {
                            entry.uploaded = Some(at);
                        }
                    }
                },
            }
            Ok(entry)
        });
    let mut versions: Vec<Version> = futures::stream::iter(reads)
        .buffer_unordered(PARALLEL)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect::<Result<_>>()?;
    finish(&mut versions, current.as_ref());
    Ok(History {
        fleet: fleet.to_string(),
        namespace: namespace.to_string(),
        bucket: bucket.bucket(),
        current,
        versions,
    })
}

/// Marks the version `current` names, orders the versions newest first by their upload times
/// as read (two deploys within one second keep their order), then shortens the times to whole
/// seconds for showing.
pub fn finish(versions: &mut [Version], current: Option<&Current>) {
    for v in versions.iter_mut() {
        v.current = current.is_some_and(|c| {
            c.version == v.version && c.script.as_deref().is_none_or(|s| s == v.script)
        });
    }
    sort_newest_first(versions);
    for v in versions.iter_mut() {
        v.uploaded = v.uploaded.as_deref().map(normalize_time);
    }
}

/// An RFC 3339 time in UTC with seconds (`2026-11-30T15:19:28Z`); an HTTP date or anything else
/// unparsable is kept as it is.
pub fn normalize_time(s: &str) -> String {
    match s.parse::<jiff::Timestamp>() {
        Ok(t) => t
            .round(jiff::Unit::Second)
            .map(|t| t.to_string())
            .unwrap_or_else(|_| s.to_string()),
        Err(_) => s.to_string(),
    }
}

fn time_key(v: &Version) -> Option<jiff::Timestamp> {
    v.uploaded.as_deref().and_then(|s| s.parse().ok())
}

/// Newest first; versions without a time last; ties by script and version.
pub fn sort_newest_first(versions: &mut [Version]) {
    versions.sort_by(|a, b| {
        time_key(b)
            .cmp(&time_key(a))
            .then_with(|| (&a.script, &a.version).cmp(&(&b.script, &b.version)))
    });
}

/// The version uploaded just before the current one (the default of `rollback`).
pub fn previous(history: &History) -> Option<&Version> {
    let at = history.versions.iter().position(|v| v.current)?;
    history.versions.get(at + 1..)?.iter().find(|v| !v.current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(version: &str, uploaded: Option<&str>, current: bool) -> Version {
        Version {
            version: version.into(),
            script: "w".into(),
            current,
            modules: 1,
            size: 1,
            uploaded: uploaded.map(Into::into),
            problem: None,
        }
    }

    #[test]
    fn newest_first_and_the_previous_one() {
        let mut versions = vec![
            v("a", Some("2026-11-30T10:00:00Z"), false),
            v("c", None, false),
            v("b", Some("2026-11-30T11:00:00Z"), true),
            v("d", Some("2026-11-30T12:00:00Z"), false),
        ];
        sort_newest_first(&mut versions);
        let order: Vec<&str> = versions.iter().map(|v| v.version.as_str()).collect();
        assert_eq!(order, ["d", "b", "a", "c"]);
        let history = History {
            fleet: "web".into(),
            namespace: "apps".into(),
            bucket: "s3://celld/web".into(),
            current: None,
            versions,
        };
        assert_eq!(previous(&history).map(|v| v.version.as_str()), Some("a"));
        assert_eq!(
            normalize_time("2026-11-30T15:19:28.980Z"),
            "2026-11-30T15:19:29Z"
        );
        assert_eq!(normalize_time("Mon, 30 Nov 2026"), "Mon, 30 Nov 2026");
    }

    #[test]
    fn two_uploads_within_one_second_keep_their_order() {
        // Both show as 10:00:00; "a" sorts first by name, only the sub-second times say "b" is
        // the newer.
        let mut versions = vec![
            v("a", Some("2026-11-30T10:00:00.100Z"), false),
            v("b", Some("2026-11-30T10:00:00.400Z"), false),
        ];
        let current = Current {
            script: Some("w".into()),
            version: "b".into(),
        };
        finish(&mut versions, Some(&current));
        let order: Vec<(&str, bool, Option<&str>)> = versions
            .iter()
            .map(|v| (v.version.as_str(), v.current, v.uploaded.as_deref()))
            .collect();
        assert_eq!(
            order,
            [
                ("b", true, Some("2026-11-30T10:00:00Z")),
                ("a", false, Some("2026-11-30T10:00:00Z")),
            ]
        );
    }
}
