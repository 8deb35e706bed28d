//! One user's requests in the audit log (the operator's, or the floor's, which runs as the
//! operator's ServiceAccount): when, with which verb, on which resource and with which response
//! code.
//!
//! A request can appear more than once (a watch is logged when its response starts and again
//! when it ends): requests are told apart by their `auditID`, timed by when the API server
//! received them, and judged by the last response code logged for them.
//!
//! A fleet's status writes are also kept by fleet, with when each was received and completed:
//! they tell where a fleet's status lag went. So are the creates of Services and StatefulSets:
//! they tell which fleets had their public Service before their pods.

use super::event::{Event, Stage, is_write};
use jiff::Timestamp;
use std::collections::{BTreeMap, HashMap};

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
        is_write(&self.verb)
    }

    /// Whether the API server failed it (5xx).
    pub fn is_server_error(&self) -> bool {
        self.code >= 500
    }
}

/// One status write the API server completed (a patch of `celldfleets/status` answered 2xx).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatusWrite {
    /// When the API server received it.
    pub received: Timestamp,
    /// When its response was complete.
    pub completed: Timestamp,
}

/// The status writes of each fleet, by fleet name, in the order they completed.
pub type StatusWrites = HashMap<String, Vec<StatusWrite>>;

/// The resource of a fleet's status.
const FLEET_STATUS: &str = "celldfleets/status";

/// The resources whose creates are kept, by name: a fleet's public Service is named as its
/// StatefulSet; a fleet's deploy Jobs are named after it.
const CREATES_KEPT: [&str; 3] = ["services", "statefulsets", "jobs"];

/// The requests of one user, gathered from audit events.
#[derive(Debug, Clone, Default)]
pub struct UserRequests {
    by_id: HashMap<String, Request>,
    status_writes: StatusWrites,
    /// When each Service and StatefulSet was created (answered 201), by resource and name.
    creates: HashMap<(String, String), Timestamp>,
}

impl UserRequests {
    /// Adds one event of the user's.
    pub fn add(&mut self, event: &Event) {
        let entry = self
            .by_id
            .entry(event.audit_id.clone())
            .or_insert_with(|| Request {
                received: event.received,
                verb: event.verb.clone(),
                resource: event.resource.clone(),
                code: event.code,
            });
        if event.code != 0 {
            entry.code = event.code;
        }
        if event.stage == Stage::ResponseComplete
            && event.code == 201
            && CREATES_KEPT.contains(&event.resource.as_str())
        {
            self.creates
                .entry((event.resource.clone(), event.name.clone()))
                .or_insert(event.received);
        }
        if event.stage == Stage::ResponseComplete
            && event.verb == "patch"
            && event.resource == FLEET_STATUS
            && (200..300).contains(&event.code)
        {
            self.status_writes
                .entry(event.name.clone())
                .or_default()
                .push(StatusWrite {
                    received: event.received,
                    completed: event.at,
                });
        }
    }

    /// How many StatefulSets were created after the Service of the same name: the fleets whose
    /// public Service came before their pods.
    pub fn services_first(&self) -> u64 {
        self.creates
            .iter()
            .filter(|((resource, name), created)| {
                resource == "statefulsets"
                    && self
                        .creates
                        .get(&("services".to_string(), name.clone()))
                        .is_some_and(|service| service < *created)
            })
            .count() as u64
    }

    /// The objects of `resource` (one of those whose creates are kept: Services,
    /// StatefulSets, Jobs) it created, by name, with when each create was received.
    pub fn created<'a>(&'a self, resource: &'a str) -> impl Iterator<Item = (&'a str, Timestamp)> {
        self.creates
            .iter()
            .filter(move |((r, _), _)| r == resource)
            .map(|((_, name), at)| (name.as_str(), *at))
    }

    /// Each fleet's status writes that completed, by fleet name.
    pub fn status_writes(&self) -> &StatusWrites {
        &self.status_writes
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

    /// The requests received in `[from, to)`.
    fn within(&self, from: Timestamp, to: Timestamp) -> impl Iterator<Item = &Request> {
        self.requests()
            .filter(move |r| r.received >= from && r.received < to)
    }

    /// The requests received in `[from, to)`, counted.
    pub fn tally(&self, from: Timestamp, to: Timestamp) -> Tally {
        let mut tally = Tally::default();
        for r in self.within(from, to) {
            tally.requests += 1;
            tally.writes += u64::from(r.is_write());
            tally.server_errors += u64::from(r.is_server_error());
        }
        tally
    }

    /// The requests received in `[from, to)`, reads and writes, counted by resource and verb.
    pub fn by_resource(&self, from: Timestamp, to: Timestamp) -> ByResource {
        count_by_resource(self.within(from, to))
    }

    /// The writes received in `[from, to)`, counted by resource and verb.
    pub fn writes_by_resource(&self, from: Timestamp, to: Timestamp) -> ByResource {
        count_by_resource(self.within(from, to).filter(|r| r.is_write()))
    }
}

fn count_by_resource<'a>(requests: impl Iterator<Item = &'a Request>) -> ByResource {
    let mut counts = ByResource::new();
    for r in requests {
        *counts
            .entry((r.resource.clone(), r.verb.clone()))
            .or_default() += 1;
    }
    counts
}

/// Requests counted by (resource, verb), in that order.
pub type ByResource = BTreeMap<(String, String), u64>;

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
        crate::audit::event::tests::line(id, user, verb, stage, at, at, code)
    }

    /// Adds `line` when it is an event of `user`'s; returns whether it was.
    fn add_line(r: &mut UserRequests, user: &str, line: &str) -> bool {
        match Event::parse(line) {
            Some(event) if event.username == user => {
                r.add(&event);
                true
            }
            _ => false,
        }
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
        let mine: Vec<bool> = lines.iter().map(|l| add_line(&mut r, OP, l)).collect();
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
        assert!(add_line(&mut r, OP, status_patch));
        let counts = r.writes_by_resource(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:00Z"));
        let expected: ByResource = [
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
    fn a_fleets_completed_status_writes_are_kept_with_their_times() {
        let mut r = fixture();
        let patch = |id: &str, name: &str, stage: &str, code: u16| {
            format!(
                r#"{{"auditID":"{id}","stage":"{stage}","verb":"patch","user":{{"username":"{OP}"}},"objectRef":{{"resource":"celldfleets","namespace":"a","name":"{name}","subresource":"status"}},"responseStatus":{{"code":{code}}},"requestReceivedTimestamp":"2026-01-01T00:00:05Z","stageTimestamp":"2026-01-01T00:00:06.5Z"}}"#
            )
        };
        assert!(add_line(
            &mut r,
            OP,
            &patch("s1", "f", "ResponseComplete", 200)
        ));
        // Refused, or not complete: not a write the status shows.
        assert!(add_line(
            &mut r,
            OP,
            &patch("s2", "f", "ResponseComplete", 409)
        ));
        assert!(add_line(
            &mut r,
            OP,
            &patch("s3", "g", "RequestReceived", 200)
        ));
        let writes = r.status_writes();
        assert_eq!(writes.len(), 1, "{writes:?}");
        assert_eq!(
            writes["f"],
            [StatusWrite {
                received: ts("2026-01-01T00:00:05Z"),
                completed: ts("2026-01-01T00:00:06.5Z"),
            }]
        );
        // The fixture's other patch is on a StatefulSet.
        assert!(!writes.contains_key(""));
    }

    #[test]
    fn fleets_whose_public_service_came_before_their_statefulset_are_counted() {
        let mut r = UserRequests::default();
        let create = |id: &str, resource: &str, name: &str, at: &str, code: u16| {
            format!(
                r#"{{"auditID":"{id}","stage":"ResponseComplete","verb":"patch","user":{{"username":"{OP}"}},"objectRef":{{"resource":"{resource}","namespace":"a","name":"{name}"}},"responseStatus":{{"code":{code}}},"requestReceivedTimestamp":"{at}","stageTimestamp":"{at}"}}"#
            )
        };
        for line in [
            // f1: its Service first; f2: its StatefulSet first; f3: its Service came first but
            // was not created then (refused), and later after its StatefulSet.
            create("1", "services", "f1", "2026-01-01T00:00:01Z", 201),
            create("2", "statefulsets", "f1", "2026-01-01T00:00:02Z", 201),
            create("3", "statefulsets", "f2", "2026-01-01T00:00:01Z", 201),
            create("4", "services", "f2-peer", "2026-01-01T00:00:00Z", 201),
            create("5", "services", "f2", "2026-01-01T00:00:02Z", 201),
            create("6", "services", "f3", "2026-01-01T00:00:01Z", 422),
            create("7", "statefulsets", "f3", "2026-01-01T00:00:02Z", 201),
            create("8", "services", "f3", "2026-01-01T00:00:03Z", 201),
            // An apply that changed a Service the fleet had: not a create.
            create("9", "services", "f2", "2026-01-01T00:00:00Z", 200),
            // A deploy Job, kept too.
            create(
                "10",
                "jobs",
                "f1-src-0a1b2c3d4e-1",
                "2026-01-01T00:00:04Z",
                201,
            ),
        ] {
            assert!(add_line(&mut r, OP, &line));
        }
        assert_eq!(r.services_first(), 1);
        let jobs: Vec<(&str, Timestamp)> = r.created("jobs").collect();
        assert_eq!(jobs, [("f1-src-0a1b2c3d4e-1", ts("2026-01-01T00:00:04Z"))]);
        assert_eq!(r.created("services").count(), 4);
    }

    #[test]
    fn every_request_is_counted_by_resource_and_verb_reads_too() {
        let counts = fixture().by_resource(ts("2026-01-01T00:00:00Z"), ts("2026-01-01T00:01:00Z"));
        let expected: ByResource = [
            (("statefulsets".to_string(), "create".to_string()), 1),
            (("statefulsets".to_string(), "get".to_string()), 1),
            (("statefulsets".to_string(), "patch".to_string()), 1),
            // The watch is counted once, though logged twice.
            (("statefulsets".to_string(), "watch".to_string()), 1),
        ]
        .into_iter()
        .collect();
        assert_eq!(counts, expected);
    }

    #[test]
    fn the_last_write_is_the_latest_write_received() {
        assert_eq!(fixture().last_write(), Some(ts("2026-01-01T00:00:04.5Z")));
        assert_eq!(UserRequests::default().last_write(), None);
    }

    #[test]
    fn a_later_line_of_the_same_request_gives_its_final_code() {
        let mut r = UserRequests::default();
        add_line(
            &mut r,
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
        add_line(
            &mut r,
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
