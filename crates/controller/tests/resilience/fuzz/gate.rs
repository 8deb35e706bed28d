//! The fuzz's own webhook gate: the base rollout's webhook calls it at `/check`, and it passes
//! every wave (200), counting the calls, so a rollout whose waves have nothing to wait for (a
//! selector that matches no fleet) goes all the way to Succeeded. At `/hang` it never answers,
//! as a gate that hangs: the webhook's timeout must end the call.

use axum::routing::post;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A gate listening on the loopback interface (the operator runs on the same machine).
pub struct Gate {
    /// Its URL, for the base rollout's webhook.
    pub url: String,
    calls: Arc<AtomicUsize>,
}

impl Gate {
    /// Starts the gate; it serves until the test ends.
    pub async fn start() -> Self {
        let calls = Arc::new(AtomicUsize::new(0));
        let counted = calls.clone();
        let app = axum::Router::new()
            .route(
                "/check",
                post(move || {
                    let counted = counted.clone();
                    async move {
                        counted.fetch_add(1, Ordering::Relaxed);
                        "passed by the admission fuzz's gate"
                    }
                }),
            )
            .route("/hang", post(std::future::pending::<()>));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("the fuzz's webhook gate listens");
        let address = listener.local_addr().expect("the gate's address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        Gate {
            url: format!("http://{address}/check"),
            calls,
        }
    }

    /// Calls answered so far.
    pub fn calls(&self) -> usize {
        self.calls.load(Ordering::Relaxed)
    }
}
