//! `init --apply` against the real API server: server-side apply, so running it again updates
//! (or leaves unchanged) instead of failing, and an update the admission rules refuse is
//! refused before it is sent.

use crate::support::{self, TestResult};
use celld_api::{CelldFleet, LocalStorageType};

#[tokio::test]
async fn init_apply_creates_then_updates_with_server_side_apply() -> TestResult {
    let env = support::env("plugin-init").await?;
    let bucket = support::bucket(&env.s3()?, "init");
    let base = [
        "init",
        "web",
        "--store",
        "minio",
        "--bucket",
        bucket.as_str(),
        "--hostname",
        "web.example.com",
        "--ingress-class",
        "nginx",
        "--apply",
    ];

    let run = support::run(&env, &base).await?;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "celldfleet.platform.celld.dev/web created\n"),
        "{run}"
    );
    let run = support::run(&env, &base).await?;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "celldfleet.platform.celld.dev/web unchanged\n"),
        "{run}"
    );

    let mut more = base.to_vec();
    more.extend(["--replicas", "3", "--path", "/api", "--strip-prefix"]);
    let run = support::run(&env, &more).await?;
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "celldfleet.platform.celld.dev/web configured\n"),
        "{run}"
    );
    let fleet = env.api::<CelldFleet>().get("web").await?;
    assert_eq!(fleet.spec.replicas, 3);
    let ingress = fleet.spec.ingress.as_ref().ok_or("ingress")?;
    assert_eq!(
        (ingress.path.as_str(), ingress.strip_prefix),
        ("/api", true)
    );
    let managers: Vec<(String, String)> = fleet
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .map(|m| {
            (
                m.manager.clone().unwrap_or_default(),
                m.operation.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        managers,
        vec![("kubectl-celld".to_string(), "Apply".to_string())]
    );

    // Fields the flags no longer set go away (server-side apply prunes them).
    let run = support::run(
        &env,
        &[
            "init", "web", "--store", "minio", "--bucket", &bucket, "--apply",
        ],
    )
    .await?;
    assert_eq!(run.code, 0, "{run}");
    let fleet = env.api::<CelldFleet>().get("web").await?;
    assert!(fleet.spec.ingress.is_none(), "{:?}", fleet.spec.ingress);
    assert_eq!(fleet.spec.replicas, 1);

    // The storage type cannot change: refused before anything is sent, for what it is. A fleet
    // that never used Persistent storage is not told it does.
    let run = support::run(
        &env,
        &[
            "init",
            "web",
            "--store",
            "minio",
            "--bucket",
            &bucket,
            "--local-storage",
            "Persistent",
            "--local-storage-size",
            "5Gi",
            "--apply",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("spec.localStorage.type cannot change from Ephemeral to Persistent or back"),
        "{run}"
    );
    assert!(!run.stderr.contains("uses Persistent storage"), "{run}");
    let fleet = env.api::<CelldFleet>().get("web").await?;
    assert_eq!(fleet.spec.local_storage.type_, LocalStorageType::Ephemeral);

    let persistent = [
        "init",
        "disk",
        "--store",
        "minio",
        "--bucket",
        &bucket,
        "--local-storage",
        "Persistent",
        "--local-storage-size",
        "5Gi",
        "--apply",
    ];
    let run = support::run(&env, &persistent).await?;
    assert_eq!(run.code, 0, "{run}");
    let run = support::run(
        &env,
        &[
            "init", "disk", "--store", "minio", "--bucket", &bucket, "--apply",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("spec.localStorage.type cannot change from Ephemeral to Persistent or back"),
        "{run}"
    );
    assert!(run.stdout.is_empty(), "{run}");
    let fleet = env.api::<CelldFleet>().get("disk").await?;
    assert_eq!(fleet.spec.local_storage.type_, LocalStorageType::Persistent);
    assert_eq!(fleet.spec.local_storage.size, "5Gi");

    // A spec admission refuses is not applied at all.
    let run = support::run(
        &env,
        &[
            "init",
            "bad",
            "--bucket",
            "gs://celld/bad",
            "--region",
            "eu-west-1",
            "--apply",
        ],
    )
    .await?;
    assert_eq!(run.code, 1, "{run}");
    assert!(
        run.stderr
            .contains("spec.objectStorage.region applies to S3 buckets only"),
        "{run}"
    );
    assert!(env.api::<CelldFleet>().get_opt("bad").await?.is_none());
    env.cleanup().await?;
    Ok(())
}
