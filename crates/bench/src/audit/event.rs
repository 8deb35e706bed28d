//! One line of the audit log (JSON, metadata level), parsed into what the bench reads of it.

use jiff::Timestamp;
use serde::Deserialize;

/// The stage of a request an audit event was logged at. The bench's audit policy omits
/// `RequestReceived`, so a request is logged once when it completes, and a long-running one
/// (a watch) once more when its response starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// The response headers were sent; the body follows (long-running requests only).
    ResponseStarted,
    /// The response is complete.
    ResponseComplete,
    /// The API server panicked handling it.
    Panic,
    /// Any other stage.
    Other,
}

/// One audit event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The request's audit ID: every event of one request has it.
    pub audit_id: String,
    /// The stage it was logged at.
    pub stage: Stage,
    /// The verb (`get`, `list`, `watch`, `patch`...).
    pub verb: String,
    /// Who sent the request.
    pub username: String,
    /// When the API server received the request.
    pub received: Timestamp,
    /// When this stage was reached.
    pub at: Timestamp,
    /// The resource, with its subresource after a slash (`statefulsets`, `celldfleets/status`);
    /// empty for a request on no resource (`/version`).
    pub resource: String,
    /// The name of the object it was on; empty for a request on a collection (a list, a watch)
    /// or on no resource.
    pub name: String,
    /// The response code logged (0 when none was).
    pub code: u16,
}

/// Verbs that change something on the API server (server-side apply is a `patch`).
const WRITE_VERBS: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// Whether `verb` changes something.
pub fn is_write(verb: &str) -> bool {
    WRITE_VERBS.contains(&verb)
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line {
    #[serde(rename = "auditID")]
    audit_id: String,
    #[serde(default)]
    stage: String,
    verb: String,
    user: User,
    request_received_timestamp: String,
    #[serde(default)]
    stage_timestamp: Option<String>,
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
    #[serde(default)]
    name: String,
}

impl ObjectRef {
    fn resource(&self) -> String {
        match &self.subresource {
            Some(sub) if !sub.is_empty() => format!("{}/{sub}", self.resource),
            _ => self.resource.clone(),
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

impl Event {
    /// Parses one line; `None` for a line that is no audit event.
    pub fn parse(line: &str) -> Option<Event> {
        let line: Line = serde_json::from_str(line).ok()?;
        let received: Timestamp = line.request_received_timestamp.parse().ok()?;
        let at = line
            .stage_timestamp
            .and_then(|t| t.parse().ok())
            .unwrap_or(received);
        let stage = match line.stage.as_str() {
            "ResponseStarted" => Stage::ResponseStarted,
            "ResponseComplete" => Stage::ResponseComplete,
            "Panic" => Stage::Panic,
            _ => Stage::Other,
        };
        Some(Event {
            audit_id: line.audit_id,
            stage,
            verb: line.verb,
            username: line.user.username,
            received,
            at,
            resource: line
                .object_ref
                .as_ref()
                .map(ObjectRef::resource)
                .unwrap_or_default(),
            name: line.object_ref.map(|o| o.name).unwrap_or_default(),
            code: line.response_status.map_or(0, |s| s.code),
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An audit line as kube-apiserver writes it at metadata level.
    pub(crate) fn line(
        id: &str,
        user: &str,
        verb: &str,
        stage: &str,
        received: &str,
        at: &str,
        code: Option<u16>,
    ) -> String {
        let status = code.map_or(String::new(), |c| {
            format!(r#","responseStatus":{{"metadata":{{}},"code":{c}}}"#)
        });
        format!(
            r#"{{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"{id}","stage":"{stage}","requestURI":"/apis/apps/v1/statefulsets","verb":"{verb}","objectRef":{{"resource":"statefulsets","namespace":"a","apiGroup":"apps","apiVersion":"v1"}},"user":{{"username":"{user}","groups":["system:serviceaccounts"]}},"sourceIPs":["127.0.0.1"]{status},"requestReceivedTimestamp":"{received}","stageTimestamp":"{at}"}}"#
        )
    }

    #[test]
    fn an_event_has_its_stage_times_resource_and_code() {
        let text = line(
            "x",
            "u",
            "patch",
            "ResponseComplete",
            "2026-01-01T00:00:01.000000Z",
            "2026-01-01T00:00:01.250000Z",
            Some(200),
        );
        let event = Event::parse(&text).unwrap();
        assert_eq!(event.stage, Stage::ResponseComplete);
        assert_eq!(event.resource, "statefulsets");
        assert_eq!(event.code, 200);
        assert_eq!(event.name, "", "a request on a collection names no object");
        assert_eq!(
            event.at.duration_since(event.received),
            jiff::SignedDuration::from_millis(250)
        );
        assert!(is_write(&event.verb));
        assert_eq!(Event::parse("not json"), None);
    }

    #[test]
    fn the_subresource_is_part_of_the_resource() {
        let status_patch = r#"{"auditID":"s","stage":"ResponseComplete","verb":"patch","user":{"username":"u"},"objectRef":{"resource":"celldfleets","namespace":"bench-0","name":"fleet-7","subresource":"status"},"requestReceivedTimestamp":"2026-01-01T00:00:05Z"}"#;
        let event = Event::parse(status_patch).unwrap();
        assert_eq!(event.resource, "celldfleets/status");
        assert_eq!(event.name, "fleet-7");
        assert_eq!(event.at, event.received, "no stageTimestamp: the receipt");
    }
}
