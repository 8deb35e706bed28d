//! celld's node API on each node's internal listener ([`INTERNAL_PORT`]): plain HTTP,
//! unauthenticated, and called alpha upstream, so what the operator and the plugin use of it is
//! spelled here once. The same from v0.4.0 through v0.6.1:
//!
//! - `GET /state`: `restoring` (cells the node is restoring), and `deployment.version` (the
//!   version the node serves) with `deployment.swapping` (it is switching versions). The rest
//!   is ignored. An answer without `restoring` (celld answers `actor_stopped` errors as JSON
//!   too) is not a state: it is reported, never read as a quiet node.
//! - From v0.5.0 `GET /state` also reports capacity (celld's "Feed an autoscaler"):
//!   `owned_cells`, `occupied` (resident cells), `capacity_waiting` (activations queued behind
//!   the residency cap: the signal to add a node), `activation_waiting`, and `node_load` (the
//!   lease's load block: `pressured`, `memory_headroom`, `rss_bytes`, `resident_cells`, ...).
//!   v0.4 reports `residents` and `rss` only. A field a release does not report, or reports in
//!   another shape, is read as not reported, never as 0.
//! - `POST /reload`: the node reads the deployment pointer now. 200
//!   `{"ok":true,"outcome":"adopted"|"unchanged"}`; 422 when the version failed to load (the
//!   node keeps serving the one it had); 503 when there is no pointer.
//!
//! [`STATE_FIELDS`] lists every field of `GET /state` the operator reads with the releases that
//! report it, and [`state_fields`] gives those of one release.

use super::INTERNAL_PORT;
use super::releases::Triple;
use serde::{Deserialize, Deserializer, Serialize};

/// Path of a node's state.
pub const STATE_PATH: &str = "/state";

/// Path that makes a node read the deployment pointer now.
pub const RELOAD_PATH: &str = "/reload";

/// The longest piece of a node's answer quoted in a message.
const QUOTED_CHARS: usize = 300;

/// The address peers and the operator dial to reach a node's internal listener: its stable name
/// through the headless peer Service.
pub fn node_address(pod: &str, peer_service: &str, namespace: &str) -> String {
    format!("{pod}.{peer_service}.{namespace}.svc:{INTERNAL_PORT}")
}

/// A field of a node's `GET /state` answer that the operator reads, with the releases that
/// report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateField {
    /// Where it is in the answer: its keys from the top, joined by dots (`deployment.version`).
    pub path: &'static str,
    /// The first release that reports it.
    pub since: Triple,
    /// The first release that no longer reports it, if one does not.
    pub until: Option<Triple>,
}

impl StateField {
    /// Whether celld `release` reports it.
    pub fn reported_by(&self, release: Triple) -> bool {
        self.since <= release && self.until.is_none_or(|until| release < until)
    }
}

/// A field reported from `since` on.
const fn since(path: &'static str, since: Triple) -> StateField {
    StateField {
        path,
        since,
        until: None,
    }
}

/// Every field of `GET /state` the operator reads ([`NodeState`]), with the releases that report
/// it. The `deployment` fields are absent before a node's first deployment. Releases older than
/// [`OLDEST_SUPPORTED`](super::releases::OLDEST_SUPPORTED) are not described.
pub const STATE_FIELDS: &[StateField] = &[
    since("restoring", (0, 4, 0)),
    since("deployment.version", (0, 4, 0)),
    since("deployment.swapping", (0, 4, 0)),
    StateField {
        path: "residents",
        since: (0, 4, 0),
        until: Some((0, 5, 0)),
    },
    StateField {
        path: "rss",
        since: (0, 4, 0),
        until: Some((0, 5, 0)),
    },
    since("owned_cells", (0, 5, 0)),
    since("occupied", (0, 5, 0)),
    since("capacity_waiting", (0, 5, 0)),
    since("activation_waiting", (0, 5, 0)),
    since("node_load.pressured", (0, 5, 0)),
    since("node_load.memory_headroom", (0, 5, 0)),
    since("node_load.rss_bytes", (0, 5, 0)),
    since("node_load.resident_cells", (0, 5, 0)),
    since("node_load.owned_cells", (0, 5, 0)),
];

/// The fields of `GET /state` the operator reads that celld `release` reports.
pub fn state_fields(release: Triple) -> impl Iterator<Item = &'static StateField> {
    STATE_FIELDS.iter().filter(move |f| f.reported_by(release))
}

/// The part of a node's `GET /state` answer the operator reads.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeState {
    /// Cells the node is restoring from the bucket or a peer right now.
    pub restoring: u64,
    /// The deployment the node serves; absent before its first one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<NodeDeployment>,
    /// Cells the node owns, dormant ones included (v0.5.0+; absent while a restarted node reads
    /// its ownership records).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub owned_cells: Option<u64>,
    /// Cells resident in memory (v0.5.0+).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub occupied: Option<u64>,
    /// Activations queued behind the residency cap (v0.5.0+): more than 0 means add a node.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub capacity_waiting: Option<u64>,
    /// Cold activations waiting for a permit (v0.5.0+).
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub activation_waiting: Option<u64>,
    /// The lease's load block (v0.5.0+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_load: Option<NodeLoad>,
    /// Resident cells, as v0.4 names them.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub residents: Option<u64>,
    /// Resident memory in bytes, as v0.4 names it.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub rss: Option<u64>,
}

/// The `node_load` block of a node's state: its lease's load, sampled every second.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeLoad {
    /// Whether the node is under memory pressure (it sheds cells): a signal to add a node.
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub pressured: Option<bool>,
    /// Whether the node has memory to take more cells.
    #[serde(
        default,
        deserialize_with = "flag",
        skip_serializing_if = "Option::is_none"
    )]
    pub memory_headroom: Option<bool>,
    /// Resident memory, bytes.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub rss_bytes: Option<u64>,
    /// Cells resident in memory.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub resident_cells: Option<u64>,
    /// Cells owned.
    #[serde(
        default,
        deserialize_with = "count",
        skip_serializing_if = "Option::is_none"
    )]
    pub owned_cells: Option<u64>,
}

/// A count when the value is a non-negative whole number; anything else is not reported.
fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(serde_json::Value::deserialize(d)?.as_u64())
}

/// A boolean when the value is one; anything else is not reported.
fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(serde_json::Value::deserialize(d)?.as_bool())
}

/// The `deployment` block of a node's state.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NodeDeployment {
    /// The version the node serves (16 hex digits).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Whether the node is switching to another version: `true`, or any non-empty value.
    #[serde(default, deserialize_with = "under_way")]
    pub swapping: bool,
}

/// Reads a swap under way from whatever celld puts in `swapping`: a boolean, or a value that
/// is not empty (a version, a list of cells still moving).
fn under_way<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    use serde_json::Value;
    Ok(match Value::deserialize(d)? {
        Value::Null => false,
        Value::Bool(b) => b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    })
}

impl NodeState {
    /// Parses a `/state` answer, ignoring the fields the operator does not read.
    pub fn parse(body: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(body)
    }

    /// The version the node serves, if its answer names one.
    pub fn version(&self) -> Option<&str> {
        self.deployment.as_ref()?.version.as_deref()
    }

    /// Whether the node is switching versions.
    pub fn swapping(&self) -> bool {
        self.deployment.as_ref().is_some_and(|d| d.swapping)
    }
}

/// What a node's answer to `POST /reload` says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reload {
    /// It switched to the version the pointer names.
    Adopted,
    /// It already served that version.
    Unchanged,
    /// HTTP 422: the version failed to load; the node keeps the one it had. celld's reason.
    Refused(String),
    /// HTTP 503: the node found no deployment pointer. celld's words.
    NoPointer(String),
    /// Any other answer: the HTTP status and the body, shortened.
    Unexpected(u16, String),
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    message: Option<String>,
}

impl Reload {
    /// Reads a node's answer: its HTTP `status` and `body`.
    pub fn read(status: u16, body: &[u8]) -> Self {
        let text = String::from_utf8_lossy(body);
        let answer: Option<Answer> = serde_json::from_str(text.trim()).ok();
        let detail = answer
            .as_ref()
            .and_then(|a| a.error.clone().or_else(|| a.message.clone()))
            .map_or_else(|| quoted(&text), |d| quoted(&d));
        match status {
            200 => match answer.and_then(|a| a.outcome).as_deref() {
                Some("adopted") => Self::Adopted,
                Some("unchanged") => Self::Unchanged,
                _ => Self::Unexpected(200, quoted(&text)),
            },
            422 => Self::Refused(detail),
            503 => Self::NoPointer(detail),
            other => Self::Unexpected(other, detail),
        }
    }
}

/// `text` trimmed and cut to [`QUOTED_CHARS`] characters.
pub fn quoted(text: &str) -> String {
    let text = text.trim();
    if text.chars().count() > QUOTED_CHARS {
        format!("{}...", text.chars().take(QUOTED_CHARS).collect::<String>())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_state_keeps_what_the_operator_reads() {
        let state = NodeState::parse(br#"{"restoring":2,"residents":14,"rss":123456}"#).unwrap();
        assert_eq!(state.restoring, 2);
        assert_eq!((state.version(), state.swapping()), (None, false));
        assert!(NodeState::parse(br#"{"residents":14}"#).is_err());
        assert!(NodeState::parse(br#"{"error":"actor_stopped"}"#).is_err());
        assert_eq!(
            node_address("web-0", "web-peer", "shop"),
            "web-0.web-peer.shop.svc:8081"
        );
    }

    #[test]
    fn reads_the_served_version_and_a_swap_in_any_shape() {
        let state = NodeState::parse(
            br#"{"restoring":0,"deployment":{"version":"0123456789abcdef","generation":4,"swapping":false,"draining":[]}}"#,
        )
        .unwrap();
        assert_eq!(state.version(), Some("0123456789abcdef"));
        assert!(!state.swapping());
        for swapping in [
            "true",
            r#""fedcba9876543210""#,
            r#"["cell-1"]"#,
            r#"{"to":"x"}"#,
            "1",
        ] {
            let body = format!(r#"{{"restoring":0,"deployment":{{"swapping":{swapping}}}}}"#);
            assert!(
                NodeState::parse(body.as_bytes()).unwrap().swapping(),
                "{swapping}"
            );
        }
        for quiet in ["false", "null", r#""""#, "[]", "{}", "0"] {
            let body = format!(r#"{{"restoring":0,"deployment":{{"swapping":{quiet}}}}}"#);
            assert!(
                !NodeState::parse(body.as_bytes()).unwrap().swapping(),
                "{quiet}"
            );
        }
    }

    /// The paths of the leaves of `value`, keys joined by dots.
    fn leaves(value: &serde_json::Value, at: &str, out: &mut Vec<String>) {
        match value.as_object() {
            Some(map) => {
                for (key, inner) in map {
                    let path = if at.is_empty() {
                        key.clone()
                    } else {
                        format!("{at}.{key}")
                    };
                    leaves(inner, &path, out);
                }
            }
            None => out.push(at.to_string()),
        }
    }

    #[test]
    fn the_field_table_names_every_field_the_operator_reads() {
        let every = NodeState {
            restoring: 1,
            deployment: Some(NodeDeployment {
                version: Some("0123456789abcdef".into()),
                swapping: true,
            }),
            owned_cells: Some(1),
            occupied: Some(1),
            capacity_waiting: Some(1),
            activation_waiting: Some(1),
            node_load: Some(NodeLoad {
                pressured: Some(true),
                memory_headroom: Some(true),
                rss_bytes: Some(1),
                resident_cells: Some(1),
                owned_cells: Some(1),
            }),
            residents: Some(1),
            rss: Some(1),
        };
        let mut read = Vec::new();
        leaves(&serde_json::to_value(&every).unwrap(), "", &mut read);
        read.sort();
        let mut table: Vec<String> = STATE_FIELDS.iter().map(|f| f.path.to_string()).collect();
        table.sort();
        assert_eq!(table, read);
    }

    #[test]
    fn a_release_reports_the_fields_of_its_line() {
        let paths = |release| state_fields(release).map(|f| f.path).collect::<Vec<_>>();
        for release in [(0, 4, 0), (0, 4, 1)] {
            let fields = paths(release);
            assert!(fields.contains(&"deployment.swapping"), "{release:?}");
            assert!(fields.contains(&"residents"), "{release:?}");
            assert!(!fields.contains(&"capacity_waiting"), "{release:?}");
        }
        for release in [(0, 5, 0), (0, 6, 1), (0, 7, 0)] {
            let fields = paths(release);
            assert!(fields.contains(&"deployment.swapping"), "{release:?}");
            assert!(!fields.contains(&"residents"), "{release:?}");
            assert!(fields.contains(&"capacity_waiting"), "{release:?}");
        }
    }

    #[test]
    fn reads_every_reload_answer() {
        assert_eq!(
            Reload::read(200, br#"{"ok":true,"outcome":"adopted"}"#),
            Reload::Adopted
        );
        assert_eq!(
            Reload::read(200, br#"{"ok":true,"outcome":"unchanged"}"#),
            Reload::Unchanged
        );
        assert_eq!(
            Reload::read(
                422,
                br#"{"ok":false,"error":"deployment module digest mismatch"}"#
            ),
            Reload::Refused("deployment module digest mismatch".into())
        );
        assert_eq!(
            Reload::read(503, b"no deployment pointer\n"),
            Reload::NoPointer("no deployment pointer".into())
        );
        assert_eq!(
            Reload::read(200, b"ok"),
            Reload::Unexpected(200, "ok".into())
        );
        let Reload::Unexpected(500, long) = Reload::read(500, "x".repeat(400).as_bytes()) else {
            panic!("a 500 is unexpected");
        };
        assert_eq!(long.chars().count(), QUOTED_CHARS + 3);
    }
}
