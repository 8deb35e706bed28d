//! `top` and the capacity parts of `status` against the real API server: fleets are created,
//! their status.capacity and status.autoscaling written through the status subresource (as the
//! operator writes them; the operator does not run), and the plugin run as a process.

use crate::support::{self, Run, TestResult};
use celld_api::{Autoscaling, CelldFleet, CelldFleetSpec, StoreRef};
use kube::api::{Patch, PatchParams, PostParams};
use serde_json::{Value, json};

fn ago(secs: i64) -> String {
    jiff::Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_secs(secs))
        .map(|t| t.to_string())
        .unwrap_or_default()
}

async fn create(
    env: &celld_testkit::TestEnv,
    name: &str,
    replicas: i32,
    autoscaling: Option<Autoscaling>,
) -> TestResult {
    let mut spec = CelldFleetSpec::with_bucket(support::bucket(&env.s3()?, name));
    spec.store_ref = Some(StoreRef {
        name: "minio".into(),
    });
    spec.replicas = replicas;
    spec.autoscaling = autoscaling;
    env.api::<CelldFleet>()
        .create(&PostParams::default(), &CelldFleet::new(name, spec))
        .await?;
    Ok(())
}

async fn write_status(env: &celld_testkit::TestEnv, name: &str, status: Value) -> TestResult {
    env.api::<CelldFleet>()
        .patch_status(
            name,
            &PatchParams::default(),
            &Patch::Merge(json!({ "status": status })),
        )
        .await?;
    Ok(())
}

/// A celld v0.6 node that answered.
fn node(name: &str, owned: u64, waiting: u64, pressured: bool, headroom: bool, rss: u64) -> Value {
    json!({"name": name, "ownedCells": owned, "residentCells": owned / 10,
           "capacityWaiting": waiting, "activationWaiting": 0, "restoring": 0,
           "pressured": pressured, "memoryHeadroom": headroom, "rssBytes": rss})
}

/// The cells of a table row, split on kubectl's three-space column gap.
fn cells(line: &str) -> Vec<&str> {
    line.split("   ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect()
}

/// The first cell of every row but the header.
fn first_column(run: &Run) -> Vec<&str> {
    run.stdout
        .lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .collect()
}

/// The row of fleet `name` in a table without NAMESPACE.
fn row<'a>(run: &'a Run, name: &str) -> TestResult<Vec<&'a str>> {
    run.stdout
        .lines()
        .map(cells)
        .find(|c| c.first() == Some(&name))
        .ok_or_else(|| format!("no row for {name} in\n{run}").into())
}

/// An age as kubectl prints it (`45s`, `2m10s`): the READ column of a fleet that was read.
fn is_age(cell: &str) -> bool {
    cell.starts_with(|c: char| c.is_ascii_digit())
        && cell.ends_with(['s', 'm'])
        && cell.chars().all(|c| c.is_ascii_alphanumeric())
}

const GIB: u64 = 1024 * 1024 * 1024;

/// Four fleets, each pressed differently: `web` (autoscaled, activations waiting, one node
/// unreadable), `api` (2 pressured nodes), `legacy` (celld v0.4: no waiting, no pressure),
/// `new` (never read).
async fn fleets(env: &celld_testkit::TestEnv) -> TestResult {
    support::secret(env, "s3-creds").await?;
    support::store(env, "minio", "s3-creds").await?;
    create(env, "api", 2, None).await?;
    create(env, "legacy", 2, None).await?;
    create(env, "new", 1, None).await?;
    create(env, "web", 2, Some(Autoscaling::between(2, 6))).await?;

    write_status(
        env,
        "web",
        json!({
            "replicas": 3, "readyReplicas": 2, "updatedReplicas": 3,
            "capacity": {
                "readAt": ago(45),
                "total": {"nodesRead": 2, "nodesUnreadable": 1, "ownedCells": 2000,
                          "residentCells": 200, "capacityWaiting": 3, "activationWaiting": 0,
                          "restoring": 0, "pressuredNodes": 1, "nodesWithoutHeadroom": 1,
                          "rssBytes": 3 * GIB},
                "nodes": [
                    node("web-0", 1200, 3, true, false, 2 * GIB),
                    node("web-1", 800, 0, false, true, GIB),
                    {"name": "web-2", "error": "GET http://web-2.web-peers:8081/state: connection refused"},
                ],
            },
            "autoscaling": {
                "desiredReplicas": 4, "currentReplicas": 3, "lastScaleTime": ago(600),
                "scaleUpSignalSince": ago(40),
                "lastDecision": {"time": ago(600), "from": 2, "to": 3, "reason": "CapacityWaiting",
                                 "message": "web-0 reported 5 activations waiting for capacity for 30s"},
                "holding": {"reason": "Cooldown",
                            "message": "the node added last gets 60s (scaleUp.periodSeconds) to take load"},
            },
            "conditions": [
                {"type": "Autoscaling", "status": "False", "reason": "StateUnreadable",
                 "message": "node web-2's state cannot be read", "lastTransitionTime": ago(600)},
                {"type": "IdleEviction", "status": "True", "reason": "IdleEvictionSet",
                 "message": "CELLD_IDLE_EVICT_S is 300", "lastTransitionTime": ago(600)},
            ],
        }),
    )
    .await?;
    write_status(
        env,
        "api",
        json!({
            "replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
            "capacity": {
                "readAt": ago(20),
                "total": {"nodesRead": 2, "ownedCells": 700, "residentCells": 70,
                          "capacityWaiting": 0, "activationWaiting": 0, "restoring": 0,
                          "pressuredNodes": 2, "nodesWithoutHeadroom": 2, "rssBytes": 5 * GIB},
                "nodes": [
                    node("api-0", 400, 0, true, false, 3 * GIB),
                    node("api-1", 300, 0, true, false, 2 * GIB),
                ],
            },
        }),
    )
    .await?;
    write_status(
        env,
        "legacy",
        json!({
            "replicas": 2, "readyReplicas": 2, "updatedReplicas": 2,
            "capacity": {
                "readAt": ago(130),
                "total": {"nodesRead": 2, "residentCells": 21, "restoring": 1, "rssBytes": GIB},
                "nodes": [
                    {"name": "legacy-0", "residentCells": 12, "restoring": 1, "rssBytes": GIB / 2},
                    {"name": "legacy-1", "residentCells": 9, "restoring": 0, "rssBytes": GIB / 2},
                ],
                "unreported": ["ownedCells", "capacityWaiting", "activationWaiting", "pressured", "memoryHeadroom"],
            },
        }),
    )
    .await?;
    write_status(env, "new", json!({"replicas": 1, "readyReplicas": 0})).await?;
    Ok(())
}

#[tokio::test]
async fn top_lists_fleets_by_pressure_from_their_status() -> TestResult {
    let env = support::env("plugin-top").await?;
    fleets(&env).await?;

    let run = support::run(&env, &["top"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(
        first_column(&run),
        ["web", "api", "legacy", "new"],
        "activations waiting, then pressured nodes; never read last:\n{run}"
    );
    let header = run.stdout.lines().next().unwrap_or_default();
    assert_eq!(
        cells(header),
        [
            "NAME",
            "NODES",
            "DESIRED",
            "WAITING",
            "PRESSURED",
            "HEADROOM",
            "RESTORING",
            "OWNED",
            "RSS",
            "READ"
        ],
        "{run}"
    );
    let web = row(&run, "web")?;
    assert_eq!(
        web[..9],
        ["web", "2/3", "4", "3", "1/2", "1/2", "0", "2000", "3.0 GiB"],
        "{run}"
    );
    assert!(is_age(web[9]), "{run}");
    let api = row(&run, "api")?;
    assert_eq!(api[..5], ["api", "2/2", "2", "0", "2/2"], "{run}");
    assert_eq!(api[5], "0/2", "no node with headroom:\n{run}");
    let legacy = row(&run, "legacy")?;
    assert_eq!(
        legacy[..9],
        ["legacy", "2/2", "2", "-", "-", "-", "1", "-", "1.0 GiB"],
        "what celld v0.4 does not report is -, not 0:\n{run}"
    );
    assert!(is_age(legacy[9]) && legacy[9] != web[9], "{run}");
    assert_eq!(
        row(&run, "new")?,
        [
            "new",
            "0/1",
            "1",
            "-",
            "-",
            "-",
            "-",
            "-",
            "-",
            "<not read>"
        ],
        "{run}"
    );

    let run = support::run(&env, &["top", "--sort-by", "rss"]).await?;
    assert_eq!(first_column(&run), ["api", "web", "legacy", "new"], "{run}");
    let run = support::run(&env, &["top", "--sort-by", "name", "-o", "wide"]).await?;
    assert_eq!(first_column(&run), ["api", "legacy", "web", "new"], "{run}");
    let web = row(&run, "web")?;
    assert_eq!(web.last(), Some(&"Cooldown"), "{run}");
    assert_eq!(web[web.len() - 2], "1", "one unreadable node:\n{run}");

    // -A: this namespace's fleets in the same order, the namespace first.
    let run = support::run(&env, &["top", "-A"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let mine: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.starts_with(&format!("{} ", env.namespace())))
        .filter_map(|l| l.split_whitespace().nth(1))
        .collect();
    assert_eq!(mine, ["web", "api", "legacy", "new"], "{run}");
    assert!(run.stdout.starts_with("NAMESPACE "), "{run}");

    let run = support::run(&env, &["top", "-o", "json"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let doc: Value = serde_json::from_str(&run.stdout)?;
    let fleets = doc["fleets"].as_array().ok_or("no fleets")?;
    let names: Vec<&str> = fleets.iter().filter_map(|f| f["name"].as_str()).collect();
    assert_eq!(names, ["web", "api", "legacy", "new"]);
    assert_eq!(fleets[0]["desiredReplicas"], 4);
    assert_eq!(fleets[0]["capacity"]["total"]["capacityWaiting"], 3);
    assert_eq!(fleets[0]["holding"]["reason"], "Cooldown");
    assert_eq!(fleets[2]["capacity"]["unreported"][1], "capacityWaiting");
    assert!(fleets[3].get("capacity").is_none(), "{}", fleets[3]);

    let run = support::run(&env, &["top", "-l", "team=none", "-o", "yaml"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout.trim(), "fleets: []", "{run}");
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn top_of_a_namespace_without_fleets_says_so() -> TestResult {
    let env = support::env("plugin-top-empty").await?;
    let run = support::run(&env, &["top"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert_eq!(run.stdout, "", "{run}");
    assert_eq!(
        run.stderr.trim(),
        format!("No CelldFleets found in namespace {}.", env.namespace()),
        "{run}"
    );
    env.cleanup().await?;
    Ok(())
}

#[tokio::test]
async fn status_shows_the_nodes_capacity_and_the_autoscaler() -> TestResult {
    let env = support::env("plugin-status-capacity").await?;
    fleets(&env).await?;

    let run = support::run(&env, &["status", "web"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.starts_with("Capacity:    read "))
        .ok_or_else(|| format!("no Capacity field in\n{run}"))?;
    assert!(
        lines[start].ends_with("from 2 of 3 nodes (1 unreadable)"),
        "{run}"
    );
    let names: Vec<&str> = lines[start + 1..start + 6]
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["NAME", "web-0", "web-1", "web-2", "TOTAL"], "{run}");
    assert_eq!(
        cells(lines[start + 2]),
        [
            "web-0", "1200", "120", "3", "0", "0", "yes", "no", "2.0 GiB"
        ],
        "{run}"
    );
    assert!(
        lines[start + 4].ends_with("GET http://web-2.web-peers:8081/state: connection refused"),
        "{run}"
    );
    assert_eq!(
        cells(lines[start + 5]),
        [
            "TOTAL", "2000", "200", "3", "0", "0", "1/2", "1/2", "3.0 GiB"
        ],
        "{run}"
    );
    assert_eq!(
        lines[start + 6],
        "Autoscaling: 2 to 6 nodes; desired 4, current 3",
        "{run}"
    );
    for want in [
        "last scale:   2 to 3 nodes 1",
        "m ago, CapacityWaiting: web-0 reported 5 activations waiting for capacity for 30s",
        "holding:      Cooldown: the node added last gets 60s",
        "Autoscaling:  False StateUnreadable: node web-2's state cannot be read",
    ] {
        assert!(run.stdout.contains(want), "no {want:?} in\n{run}");
    }
    assert!(
        !run.stdout.contains("IdleEviction: True"),
        "a True condition is not repeated in the block:\n{run}"
    );

    let run = support::run(&env, &["status", "web", "-o", "json"]).await?;
    assert_eq!(run.code, 0, "{run}");
    let doc: Value = serde_json::from_str(&run.stdout)?;
    assert_eq!(doc["capacity"]["total"]["nodesUnreadable"], 1);
    assert_eq!(doc["capacity"]["nodes"][0]["capacityWaiting"], 3);
    assert_eq!(doc["autoscaling"]["maxReplicas"], 6);
    assert_eq!(doc["autoscaling"]["lastDecision"]["to"], 3);
    assert_eq!(
        doc["autoscaling"]["conditions"][0]["reason"],
        "StateUnreadable"
    );

    let run = support::run(&env, &["status", "legacy"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(
        run.stdout.contains(
            "not reported by the nodes' celld release: ownedCells, capacityWaiting, activationWaiting, pressured, memoryHeadroom"
        ),
        "{run}"
    );
    assert!(!run.stdout.contains("Autoscaling:"), "{run}");

    let run = support::run(&env, &["status", "new", "-o", "yaml"]).await?;
    assert_eq!(run.code, 0, "{run}");
    assert!(!run.stdout.contains("capacity:"), "{run}");
    let run = support::run(&env, &["status", "new"]).await?;
    for absent in ["Capacity:", "Autoscaling:", "TOTAL"] {
        assert!(!run.stdout.contains(absent), "{absent:?} in\n{run}");
    }
    env.cleanup().await?;
    Ok(())
}
