use super::*;
use crate::faults::SlowDownFront;

/// A store at `endpoint`, with keys a refused write never checks.
fn store(endpoint: &str) -> Store {
    let keys = Keys {
        id: "id".into(),
        secret: "secret".into(),
        token: None,
    };
    let bucket = Bucket::parse("s3://celld/web").unwrap();
    Store::new(bucket, endpoint, "us-east-1", keys)
}

#[tokio::test]
async fn one_slow_down_on_a_conditional_write_ends_the_deploy_saying_it_may_have_committed() {
    // Nothing listens upstream: the front refuses the write before forwarding anything.
    let front = SlowDownFront::start("http://127.0.0.1:9", 1).unwrap();
    let err = store(front.endpoint())
        .put_if(
            "deploy/current.json",
            b"{}".to_vec(),
            &Expect::Absent,
            "0123456789abcdef",
        )
        .await
        .unwrap_err();
    assert!(matches!(err, DeployError::MayHaveCommitted { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("(HTTP 503 SlowDown): the write may have committed"),
        "{text}"
    );
    assert!(
        text.contains("run the deploy again (it is idempotent)"),
        "{text}"
    );
    assert_eq!(
        front.refused(),
        ["PUT /celld/web/deploy/current.json"],
        "sent once, not retried"
    );
}

#[tokio::test]
async fn a_refused_upload_says_its_status_and_code_and_is_not_retried() {
    let front = SlowDownFront::start("http://127.0.0.1:9", 5).unwrap();
    let err = store(front.endpoint())
        .put(
            "deploy/hello/v/index.js",
            b"x".to_vec(),
            "application/javascript",
        )
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("failed: HTTP 503 SlowDown: "), "{text}");
    assert_eq!(front.refused().len(), 1, "sent once: {:?}", front.refused());
}
