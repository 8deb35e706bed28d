//! A tenant's bucket cannot take down the operator every tenant shares: a 1 GiB pointer (a
//! sparse file in the S3 server's own directory) and an endpoint that answers a 1 GiB object
//! and streams it without end are refused before their bodies are read, each fleet Degraded
//! naming the object, its size and the limit; the operator's peak memory stays small, it never
//! restarts, and the other fleet is served.

use crate::support::*;
use celld_api::CelldFleet;
use celld_fixtures::inline_fleet;
use celld_testkit::{Check, wait_until};
use serde_json::json;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

/// The most memory the operator may reach, in KiB.
const PEAK_KIB: u64 = 100 * 1024;

/// An HTTP server on 127.0.0.1 that answers every request with a 1 GiB object and sends zeros
/// until the client goes away.
fn endless() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port for the endless endpoint");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let mut stream = stream;
                let mut request = [0u8; 8192];
                let _ = stream.read(&mut request);
                let head = "HTTP/1.1 200 OK\r\nContent-Length: 1073741824\r\nContent-Type: application/json\r\nETag: \"endless\"\r\nLast-Modified: Mon, 07 Dec 2026 00:00:00 GMT\r\n\r\n";
                if stream.write_all(head.as_bytes()).is_err() {
                    return;
                }
                let zeros = [0u8; 64 * 1024];
                while stream.write_all(&zeros).is_ok() {}
            });
        }
    });
    url
}

/// The peak resident memory of process `pid`, in KiB (VmHWM).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("its status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM in its status")
}

/// Waits until fleet `name` is Degraded with a message containing `says`; returns it.
async fn degraded(plane: &Plane, name: &str, says: &str) -> String {
    let api = plane.api::<CelldFleet>();
    wait_until(
        format!("fleet {name} Degraded saying {says:?}"),
        Duration::from_secs(60),
        || async {
            let fleet = api.get(name).await.ok();
            let degraded = fleet
                .as_ref()
                .and_then(|f| f.status.as_ref())
                .and_then(|s| celld_api::conditions::find(&s.conditions, "Degraded"))
                .filter(|c| c.status == "True" && c.message.contains(says))
                .map(|c| c.message.clone());
            match degraded {
                Some(message) => Check::Done(message),
                None => Check::Pending(format!("{:?}", fleet.and_then(|f| f.status))),
            }
        },
    )
    .await
    .expect("the fleet says why")
}

#[tokio::test]
async fn a_huge_pointer_and_an_endless_endpoint_cost_the_shared_operator_nothing() {
    let plane = Plane::start("huge-objects").await;
    let huge_prefix = format!("{}-huge", plane.prefix);
    let pointer = plane
        .dir()
        .join("s3")
        .join(&plane.s3.bucket)
        .join(&huge_prefix)
        .join("deploy/current.json");
    std::fs::create_dir_all(pointer.parent().expect("its directory")).expect("the prefix");
    std::fs::File::create(&pointer)
        .and_then(|f| f.set_len(1 << 30))
        .expect("a sparse 1 GiB pointer");
    let endless = endless();

    let op = plane
        .operator(
            "operator",
            &["--leader-elect=false", "--namespace", &plane.ns],
        )
        .await;
    plane.apply(&plane.fleet("fine", 1, &[]).await).await;
    let huge = inline_fleet("huge", &plane.s3, &huge_prefix, json!({"replicas": 1}))
        .expect("a CelldFleet");
    plane.apply(&huge).await;
    let endless_fleet = inline_fleet(
        "endless",
        &plane.s3,
        &plane.prefix,
        json!({"replicas": 1, "objectStorage": {"endpoint": endless}}),
    )
    .expect("a CelldFleet");
    plane.apply(&endless_fleet).await;

    let said = degraded(&plane, "huge", "deploy/current.json is 1073741824 bytes").await;
    assert!(said.contains("more than the 65536"), "{said}");
    let said = degraded(&plane, "endless", "is 1073741824 bytes").await;
    assert!(said.contains("more than the 65536"), "{said}");
    plane
        .wait_ready(&["fine".to_string()], Duration::from_secs(90))
        .await;
    // Several resyncs later, the reads have been refused again and again.
    tokio::time::sleep(Duration::from_secs(20)).await;
    let peak = peak_kib(op.pid().expect("the operator runs"));
    eprintln!("operator peak memory under a 1 GiB pointer and an endless endpoint: {peak} KiB");
    assert!(peak < PEAK_KIB, "the operator reached {peak} KiB");
    assert_eq!(op.starts(), 1, "never restarted");
    op.stop().await;
    plane.stop().await;
}
