//! The kube-apiserver audit log (JSON lines, metadata level): which requests one user made,
//! when, with which verb, on which resource and with which response code.
//!
//! A request can appear more than once (a watch is logged when its response starts and again
//! when it ends): requests are told apart by their `auditID`, timed by when the API server
//! received them, and judged by the last response code logged for them.

use jiff::Timestamp;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};

/// Verbs that change something on the API server (server-side apply is a `patch`).
const WRITE_VERBS: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// One request, as the audit log describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// When the API server received it.
    pub received: Timestamp,
    /// The verb (`get`, `list`, `watch`, `patch`...).
    pub verb: String,
    /// The resource, with its subresource after a slash (`statefulsets`, `celldfleets/status`);
    /// empty for a request on no resource (`/version`).
    pub resource: String,
    /// The last response code logged for it (0 while none was).
    pub code: u16,
}

impl Request {
    /// Whether the request changes something.
    pub fn is_write(&self) -> bool {
        WRITE_VERBS.contains(&self.verb.as_str())
    }

    /// Whether the API server failed it (5xx).
    pub fn is_server_error(&self) -> bool {
        self.code >= 500
    }
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line {
    #[serde(rename = "auditID")]
    audit_id: String,
    verb: String,
    user: User,
    request_received_timestamp: String,
    #[serde(default)]
    response_status: Option<Status>,
    #[serde(default)]
    object_ref: Option<ObjectRef>,
}

#[derive(Debug, Deserialize)]
struct ObjectRef {
    #[serde(default)]
    resource: String,
    #[serde(default)]
    subresource: Option<String>,
}

impl ObjectRef {
    fn name(self) -> String {
        match self.subresource {
            Some(sub) if !sub.is_empty() => format!("{}/{sub}", self.resource),
            _ => self.resource,
        }
    }
}

#[derive(Debug, Deserialize)]
struct User {
    #[serde(default)]
    username: String,
}

#[derive(Debug, Deserialize)]
struct Status {
    #[serde(default)]
    code: u16,
}

/// The requests of one user, gathered from audit log lines.
#[derive(Debug, Clone, Default)]
pub struct UserRequests {
    by_id: HashMap<String, Request>,
}

impl UserRequests {
    /// Reads one audit log line; lines of other users and lines that are not audit events are
    /// skipped. Returns whether the line was one of the user's.
    pub fn add_line(&mut self, username: &str, line: &str) -> bool {
        // Most lines are other users': skip them without parsing.
        if !line.contains(username) {
            return false;
        }
        let Ok(event) = serde_json::from_str::<Line>(line) else {
            return false;
        };
        if event.user.username != username {
            return false;
        }
        let Ok(received) = event.request_received_timestamp.parse::<Timestamp>() else {
            return false;
        };
        let code = event.response_status.map_or(0, |s| s.code);
        let entry = self.by_id.entry(event.audit_id).or_insert_with(|| Request {
            received,
            verb: event.verb,
            resource: event.object_ref.map(ObjectRef::name).unwrap_or_default(),
            code,
        });
        if code != 0 {
            entry.code = code;
        }
        true
    }

    /// Every request.
    pub fn requests(&self) -> impl Iterator<Item = &Request> {
        self.by_id.values()
    }

    /// When the last write was received, if any.
    pub fn last_write(&self) -> Option<Timestamp> {
        self.requests()
            .filter(|r| r.is_write())
            .map(|r| r.received)
            .max()
    }

    /// The requests received in `[from, to)`, counted.
    pub fn tally(&self, from: Timestamp, to: Timestamp) -> Tally {
        let mut tally = Tally::default();
        for r in self
            .requests()
            .filter(|r| r.received >= from && r.received < to)
        {
            tally.requests += 1;
            tally.writes += u64::from(r.is_write());
            tally.server_errors += u64::from(r.is_server_error());
        }
        tally
    }

    /// The writes received in `[from, to)`, counted by resource and verb.
    pub fn writes_by_resource(&self, from: Timestamp, to: Timestamp) -> WritesByResource {
        let mut counts = WritesByResource::new();
        for r in self
            .requests()
            .filter(|r| r.is_write() && r.received >= from && r.received < to)
        {
            *counts
                .entry((r.resource.clone(), r.verb.clone()))
                .or_default() += 1;
        }
        counts
    }
}

/// Writes counted by (resource, verb), in that order.
pub type WritesByResource = BTreeMap<(String, String), u64>;

/// Requests counted over a time window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Every request.
    pub requests: u64,
    /// Those that change something.
    pub writes: u64,
    /// Those the API server failed (5xx).
    pub server_errors: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const OP: &str = "system:serviceaccount:celld-system:celld-operator";

    fn line(id: &str, user: &str, verb: &str, stage: &str, at: &str, code: Option<u16>) -> String {
        let status = code.map_or(String::new(), |c| {
            format!(r#","responseStatus":{{"metadata":{{}},"code":{c}}}"#)
        });
        format!(
            r#"{{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"{id}","stage":"{stage}","requestURI":"/apis/apps/v1/statefulsets","verb":"{verb}","objectRef":{{"resource":"statefulsets","namespace":"a","apiGroup":"apps","apiVersion":"v1"}},"user":{{"username":"{user}","groups":["system:serviceaccounts"]}},"sourceIPs":["127.0.0.1"]{status},"requestReceivedTimestamp":"{at}","stageTimestamp":"{at}"}}"#
        )
    }

    fn ts(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn fixture() -> UserRequests {
        let mut r = UserRequests::default();
        let lines = [
            line(
                "a",
                OP,
                "get",
                "ResponseComplete",
                "2026-01-01T00:00:01.000000Z",
                Some(200),
            ),
            line(
                "b",
                OP,
                "patch",
                "ResponseComplete",
                "2026-01-01T00:00:02.000000Z",
                Some(200),
            ),
            // A watch: logged when it starts and when it ends; counted once.
            line(
                "c",
                OP,
                "watch",
                "ResponseStarted",
                "2026-01-01T00:00:03.000000Z",
                Some(200),
            ),
            line(
                "c",
                OP,
                "watch",
                "ResponseComplete",
                "2026-01-01T00:00:03.000000Z",
                Some(200),
            ),
            line(
                "d",
                OP,
                "create",
                "ResponseComplete",
                "2026-01-01T00:00:04.500000Z",
                Some(503),
            ),
            // Someone else's request, and a line that is no event.
            line(
                "e",
                "system:kube-scheduler",
                "create",
                "ResponseComplete",
                "2026-01-01T00:00:02.000000Z",
                Some(201),
            ),
            format!("not json but mentions {OP}"),
        ];
        let mine: Vec<bool> = lines.iter().map(|l| r.add_line(OP, l)).collect();
        assert_eq!(mine, [true, true, true, true, true, false, false]);
        r
    }

    #[test]
    fn requests_are_counted_once_with_writes_and_server_errors() {
        let r = fixture();
        let all = r.tally(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:00Z"));
        assert_eq!(
            all,
            Tally {
                requests: 4,
                writes: 2,
                server_errors: 1
            }
        );
    }

    #[test]
    fn a_window_takes_what_was_received_from_its_start_up_to_its_end() {
        let r = fixture();
        let window = r.tally(ts("2026-01-01T00:00:02Z"), ts("2026-01-01T00:00:04.5Z"));
        assert_eq!(
            window,
            Tally {
                requests: 2,
                writes: 1,
                server_errors: 0
            }
        );
    }

    #[test]
    fn writes_are_counted_by_resource_and_verb_with_the_subresource() {
        let mut r = fixture();
        let status_patch = r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"s","stage":"ResponseComplete","requestURI":"/apis/platform.celld.dev/v1alpha1/namespaces/a/celldfleets/f/status","verb":"patch","user":{"username":"system:serviceaccount:celld-system:celld-operator"},"objectRef":{"resource":"celldfleets","namespace":"a","name":"f","apiGroup":"platform.celld.dev","apiVersion":"v1alpha1","subresource":"status"},"responseStatus":{"metadata":{},"code":200},"requestReceivedTimestamp":"2026-01-01T00:00:05Z","stageTimestamp":"2026-01-01T00:00:05Z"}"#;
        assert!(r.add_line(OP, status_patch));
        let counts = r.writes_by_resource(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:00Z"));
        let expected: WritesByResource = [
            (("celldfleets/status".to_string(), "patch".to_string()), 1),
            (("statefulsets".to_string(), "create".to_string()), 1),
            (("statefulsets".to_string(), "patch".to_string()), 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(counts, expected);
        // The window leaves out what was received after it.
        let early = r.writes_by_resource(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:00:03Z"));
        assert_eq!(early.values().sum::<u64>(), 1);
    }

    #[test]
    fn the_last_write_is_the_latest_write_received() {
        assert_eq!(fixture().last_write(), Some(ts("2026-01-01T00:00:04.5Z")));
        assert_eq!(UserRequests::default().last_write(), None);
    }

    #[test]
    fn a_later_line_of_the_same_request_gives_its_final_code() {
        let mut r = UserRequests::default();
        r.add_line(
            OP,
            &line(
                "w",
                OP,
                "watch",
                "ResponseStarted",
                "2026-01-01T00:00:01Z",
                None,
            ),
        );
        r.add_line(
            OP,
            &line(
                "w",
                OP,
                "watch",
                "ResponseComplete",
                "2026-01-01T00:00:01Z",
                Some(500),
            ),
        );
        let codes: Vec<u16> = r.requests().map(|q| q.code).collect();
        assert_eq!(codes, [500]);
    }
}
