//! One reading of a fleet's nodes: the budget, the cut-off operator, reloads and offered readings.

use super::*;
use crate::nodes::adoption::standing;

#[tokio::test]
async fn a_slow_reading_does_not_hold_the_reconcile_and_calls_back_when_it_lands() {
    // A node that accepts and never answers: each state read ends at the client's timeout.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = silent.local_addr().unwrap().to_string();
    let _held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((socket, _)) = silent.accept().await {
            open.push(socket);
        }
    });
    let api = NodeApi::new(Some(address), Duration::from_millis(300));
    let reads = Arc::new(NodeReads::default());
    let fleet = FleetNodes {
        namespace: "ns".into(),
        name: "web".into(),
        peer_service: "web-peer".into(),
        replicas: 2,
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let started = Instant::now();
    let got = reads
        .within(
            &api,
            "u",
            fleet.clone(),
            "v1",
            Duration::from_millis(20),
            move || {
                let _ = tx.send(());
            },
        )
        .await;
    assert!(got.is_none(), "no reading yet: {got:?}");
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "the reconcile was held"
    );
    tokio::time::timeout(Duration::from_secs(5), rx)
        .await
        .expect("the late reading calls back")
        .expect("called");
    let kept = reads
        .within(&api, "u", fleet, "v1", Duration::from_millis(20), || {})
        .await
        .expect("the late reading stands in");
    assert_eq!(kept.nodes.len(), 2);
    assert!(
        kept.nodes
            .iter()
            .all(|(_, a)| *a == Answer::Unreadable(Unanswered::Silent)),
        "{kept:?}"
    );

    // The fleet's last reading outlasted the budget: once the one under way ended, the
    // next is not waited for, however long the budget.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let started = Instant::now();
    reads
        .within(&api, "u", fleet_of(3), "v1", Duration::from_secs(5), || {})
        .await;
    assert!(
        started.elapsed() < Duration::from_millis(250),
        "a slow fleet held the reconcile"
    );
}

fn fleet_of(replicas: i32) -> FleetNodes {
    FleetNodes {
        namespace: "ns".into(),
        name: "web".into(),
        peer_service: "web-peer".into(),
        replicas,
    }
}

#[tokio::test]
async fn an_operator_cut_off_from_the_nodes_waits_for_no_reading_and_takes_them_as_unreachable() {
    // A port nothing listens on: every connection is refused at once.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = closed.local_addr().unwrap().to_string();
    drop(closed);
    let api = NodeApi::new(Some(address), Duration::from_secs(3));
    let reads = Arc::new(NodeReads::default());
    let first = reads
        .within(&api, "a", fleet_of(12), "v1", Duration::from_secs(5), || {})
        .await
        .expect("refused at once: read within the budget");
    assert!(
        first
            .nodes
            .iter()
            .all(|(_, a)| *a == Answer::Unreadable(Unanswered::Unreachable)),
        "{first:?}"
    );
    assert!(api.reachability().cut_off(), "a dozen refused connections");

    // Another fleet, never read: taken as unreachable at once, and its late reading,
    // the same, sends it to no second reconcile.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let stand_in = reads
        .within(
            &api,
            "b",
            fleet_of(2),
            "v1",
            Duration::from_secs(5),
            move || {
                let _ = tx.send(());
            },
        )
        .await
        .expect("a stand-in");
    assert_eq!(
        stand_in.nodes,
        vec![
            (
                "web-0".to_string(),
                Answer::Unreadable(Unanswered::Unreachable)
            ),
            (
                "web-1".to_string(),
                Answer::Unreadable(Unanswered::Unreachable)
            ),
        ]
    );
    let called = tokio::time::timeout(Duration::from_millis(500), rx.recv()).await;
    assert!(
        matches!(called, Ok(None)),
        "the late reading said the same: {called:?}"
    );
}

#[test]
fn a_refusal_stands_and_a_taken_reload_expires() {
    let reads = NodeReads::default();
    let t = Instant::now();
    reads.remember(
        "u",
        "v2",
        vec![
            ("web-0".into(), Reload::Refused("bad".into())),
            ("web-1".into(), Reload::Adopted),
        ],
        t,
    );
    assert_eq!(reads.remembered("u", "v2", t).len(), 2);
    let later = reads.remembered("u", "v2", t + RELOAD_AGAIN_AFTER);
    assert_eq!(
        later.into_iter().collect::<Vec<_>>(),
        vec![("web-0".to_string(), Reload::Refused("bad".into()))]
    );
    assert!(reads.remembered("u", "v3", t).is_empty());
    reads.remember("u", "v3", Vec::new(), t);
    assert!(
        reads.remembered("u", "v2", t).is_empty(),
        "a new version forgets"
    );
    reads.retain(|_| false);
    assert!(reads.sent.lock().unwrap().is_empty());
}

fn offered(versions: &[Option<&str>]) -> Reading {
    use celld_api::contract::node_api::{NodeDeployment, NodeState};
    Reading {
        version: "v2".into(),
        nodes: versions
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let answer = match v {
                    Some(v) => Answer::State(
                        NodeState {
                            deployment: Some(NodeDeployment {
                                version: Some((*v).into()),
                                swapping: false,
                            }),
                            ..NodeState::default()
                        },
                        None,
                    ),
                    None => Answer::Unreadable(Unanswered::Silent),
                };
                (format!("web-{i}"), answer)
            })
            .collect(),
    }
}

#[test]
fn an_offered_reading_stands_in_while_young_and_every_node_serves_its_version() {
    let reads = NodeReads::default();
    let hour = Duration::from_secs(3_600);
    reads.offer("u", offered(&[Some("v2"), Some("v2")]));
    let steady = reads.steady("u", "v2", 2, hour).expect("kept");
    assert_eq!(steady.nodes.len(), 2);
    assert!(
        reads.steady("u", "v3", 2, hour).is_none(),
        "another version"
    );
    assert!(reads.steady("u", "v2", 3, hour).is_none(), "another count");
    assert!(
        reads.steady("u", "v2", 2, Duration::ZERO).is_none(),
        "too old"
    );
    assert!(reads.steady("other", "v2", 2, hour).is_none());

    // A node behind, or one that did not answer: not kept, the last one stays.
    reads.offer("u", offered(&[Some("v2"), Some("v1")]));
    reads.offer("u", offered(&[Some("v2"), None]));
    assert_eq!(reads.steady("u", "v2", 2, hour), Some(steady));
    reads.offer("w", offered(&[Some("v1"), Some("v2")]));
    assert!(reads.steady("w", "v2", 2, hour).is_none());
}

/// A node behind on `v1` that adopts `v2` when told to reload (`POST /reload` answers
/// `adopted`), or refuses it when `refuses`; returns its address and the requests it read.
async fn node_on_v1(refuses: bool) -> (String, Arc<Mutex<Vec<String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let requests = Arc::new(Mutex::new(Vec::new()));
    let seen = requests.clone();
    tokio::spawn(async move {
        let mut version = "v1";
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut request = vec![0; 4096];
            let n = socket.read(&mut request).await.unwrap();
            let line = String::from_utf8_lossy(&request[..n])
                .lines()
                .next()
                .unwrap_or_default()
                .to_string();
            let (status, body) = if line.starts_with("POST /reload") {
                if refuses {
                    (
                        "422 Unprocessable Entity",
                        r#"{"ok":false,"error":"bad"}"#.to_string(),
                    )
                } else {
                    version = "v2";
                    ("200 OK", r#"{"ok":true,"outcome":"adopted"}"#.to_string())
                }
            } else {
                (
                    "200 OK",
                    format!(r#"{{"restoring":0,"deployment":{{"version":"{version}"}}}}"#),
                )
            };
            seen.lock().unwrap().push(line);
            let answer = format!(
                "HTTP/1.1 {status}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(answer.as_bytes()).await.unwrap();
        }
    });
    (address, requests)
}

/// One reading for `v2` of a node on `v1` (see [`node_on_v1`]), and the requests it got (method
/// and path).
async fn read_node_on_v1(refuses: bool) -> (Arc<Reading>, Vec<String>) {
    let (address, requests) = node_on_v1(refuses).await;
    let api = NodeApi::new(Some(address), Duration::from_secs(5));
    let reads = Arc::new(NodeReads::default());
    let reading = reads
        .within(&api, "u", fleet_of(1), "v2", Duration::from_secs(5), || {})
        .await
        .expect("read within the budget");
    let requests = requests
        .lock()
        .unwrap()
        .iter()
        .map(|r| r.split(' ').take(2).collect::<Vec<_>>().join(" "))
        .collect();
    (reading, requests)
}

#[tokio::test]
async fn a_node_that_took_the_reload_is_read_again_and_shows_the_version_in_the_same_reading() {
    let (reading, requests) = read_node_on_v1(false).await;
    assert_eq!(
        standing("v2", &reading.nodes[0].1),
        (celld_api::Adoption::Adopted, None),
        "{reading:?}"
    );
    assert_eq!(requests, ["GET /state", "POST /reload", "GET /state"]);
}

#[tokio::test]
async fn a_node_that_refused_the_reload_is_not_read_again() {
    let (reading, requests) = read_node_on_v1(true).await;
    assert_eq!(
        standing("v2", &reading.nodes[0].1).0,
        celld_api::Adoption::Refused,
        "{reading:?}"
    );
    assert_eq!(requests, ["GET /state", "POST /reload"]);
}
