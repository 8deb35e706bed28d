//! A webhook gate: asked with the wave and its fleets at the end of each bake; 2xx passes the
//! wave, anything else (after its retries) fails it and the moved fleets are pointed back.

use super::harness::*;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use celld_api::rollout::RolloutPhase;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};

/// A gate passing wave 1 and failing every other; what it was sent.
async fn gate() -> (String, Arc<Mutex<Vec<Value>>>) {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let app = axum::Router::new()
        .route(
            "/check",
            post(
                |State(asked): State<Arc<Mutex<Vec<Value>>>>, body: axum::body::Bytes| async move {
                    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                    let wave = body["wave"].as_i64();
                    asked.lock().expect("the gate's log").push(body);
                    if wave == Some(1) {
                        (StatusCode::OK, "looks good")
                    } else {
                        (StatusCode::SERVICE_UNAVAILABLE, "error rate 7% over 1%")
                    }
                },
            ),
        )
        .with_state(asked.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("the gate listens");
    let address = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{address}/check"), asked)
}

#[tokio::test]
async fn a_webhook_passes_a_wave_with_2xx_and_fails_the_next_with_anything_else() {
    let t = ring("rollout-webhook", &["a", "b"]).await;
    let (url, asked) = gate().await;
    apply_rollout(
        &t.env,
        "web",
        json!({
            "waves": [{"fleets": 1, "bake": "0s"}, {"bake": "0s"}],
            "gates": {"webhooks": [{"name": "slo", "url": url, "retries": 1, "timeout": "5s"}]},
        }),
        json!({}),
    )
    .await;
    wait_publishing(&t.env, &["a"]).await;
    play_publish(&t, "a", V2).await;
    wait_publishing(&t.env, &["b"]).await;
    play_publish(&t, "b", V2).await;
    let r = wait_rollout(&t.env, "web", "rolled back", |r| {
        phase(r) == Some(RolloutPhase::RolledBack)
    })
    .await;
    let status = r.status.expect("status");
    let passed = &status.waves[0].gates[0];
    assert!(passed.passed && passed.attempts == 1, "{passed:?}");
    let rejected = &status.waves[1].gates[0];
    assert!(!rejected.passed, "{rejected:?}");
    assert_eq!(rejected.attempts, 2, "the first call and one retry");
    assert!(
        status.waves[1]
            .message
            .as_deref()
            .is_some_and(|m| m.contains("webhook slo") && m.contains("error rate 7%")),
        "{:?}",
        status.waves[1].message
    );
    assert_eq!(pointer(&t, "a").await, V1);
    assert_eq!(pointer(&t, "b").await, V1);
    let asked = asked.lock().expect("the gate's log").clone();
    let first = &asked[0];
    assert_eq!(first["rollout"], "web");
    assert_eq!(first["namespace"], t.env.namespace());
    assert_eq!(first["wave"], 1);
    assert_eq!(first["revision"], REF);
    assert_eq!(
        first["fleets"],
        json!([{"name": "a", "version": V2, "from": V1}])
    );
    assert_eq!(asked.len(), 3, "wave 1 once, wave 2 twice: {asked:?}");
}
