//! Waiting for a condition, with a timeout and a failure that says what was awaited and what was
//! last seen.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

use kube::{Api, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// A timeout that suits most waits on the local control plane (objects settle within seconds).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// How often a condition is checked.
const POLL_INTERVAL: Duration = Duration::from_millis(200);

/// Longest description of an observed state kept for the timeout message.
const MAX_OBSERVED: usize = 4000;

/// The outcome of one check of a condition.
#[derive(Debug)]
pub enum Check<T> {
    /// The condition holds; the wait ends with this value.
    Done(T),
    /// Not yet; describes what was observed (reported if the wait times out).
    Pending(String),
}

/// Checks `check` every 200 ms until it returns [`Check::Done`] or `timeout` has passed.
///
/// On timeout the error names `what` and the state described by the last [`Check::Pending`].
pub async fn wait_until<T, F, Fut>(
    what: impl Into<String>,
    timeout: Duration,
    mut check: F,
) -> Result<T>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Check<T>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let last = match check().await {
            Check::Done(value) => return Ok(value),
            Check::Pending(observed) => observed,
        };
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::Timeout {
                what: what.into(),
                timeout,
                last_observed: truncate(last),
            });
        }
        tokio::time::sleep(POLL_INTERVAL).await;
    }
}

/// Waits until the object `name` exists and `condition` holds for it; returns the object.
///
/// On timeout the error shows the object's last observed `status` (or the whole object if it has
/// none, or the error of the last read).
pub async fn wait_for_object<K, C>(
    api: &Api<K>,
    name: &str,
    what: &str,
    timeout: Duration,
    condition: C,
) -> Result<K>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    K::DynamicType: Default,
    C: Fn(&K) -> bool,
{
    let description = format!("{what} ({} {name})", K::kind(&K::DynamicType::default()));
    wait_until(description, timeout, || async {
        match api.get_opt(name).await {
            Ok(Some(object)) if condition(&object) => Check::Done(object),
            Ok(Some(object)) => Check::Pending(describe(&object)),
            Ok(None) => Check::Pending("not found".to_owned()),
            Err(e) => Check::Pending(format!("error reading it: {e}")),
        }
    })
    .await
}

/// Waits until the object `name` is gone (deleted and its finalizers done).
pub async fn wait_for_deletion<K>(api: &Api<K>, name: &str, timeout: Duration) -> Result<()>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    K::DynamicType: Default,
{
    let description = format!(
        "{} {name} to be deleted",
        K::kind(&K::DynamicType::default())
    );
    wait_until(description, timeout, || async {
        match api.get_opt(name).await {
            Ok(None) => Check::Done(()),
            Ok(Some(object)) => Check::Pending(describe(&object)),
            Err(e) => Check::Pending(format!("error reading it: {e}")),
        }
    })
    .await
}

/// The object's `metadata` and `status` as JSON (the whole object if it has no status).
fn describe<K: Serialize>(object: &K) -> String {
    let value = match serde_json::to_value(object) {
        Ok(value) => value,
        Err(e) => return format!("(cannot serialize: {e})"),
    };
    let shown = match (value.get("metadata"), value.get("status")) {
        (Some(metadata), Some(status)) => serde_json::json!({
            "metadata": {
                "deletionTimestamp": metadata.get("deletionTimestamp"),
                "finalizers": metadata.get("finalizers"),
            },
            "status": status,
        }),
        _ => value,
    };
    shown.to_string()
}

fn truncate(mut text: String) -> String {
    if text.len() > MAX_OBSERVED {
        let mut end = MAX_OBSERVED;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn timeout_names_what_and_last_state() {
        let mut n = 0;
        let err = wait_until("the answer", Duration::from_millis(300), || {
            n += 1;
            let seen = format!("check {n}");
            async move { Check::<()>::Pending(seen) }
        })
        .await
        .expect_err("must time out");
        let message = err.to_string();
        assert!(message.contains("waiting for the answer"), "{message}");
        assert!(
            message.contains(&format!("last observed: check {n}")),
            "{message}"
        );
    }

    #[tokio::test]
    async fn done_returns_the_value() {
        let value = wait_until("x", Duration::from_secs(1), || async { Check::Done(42) })
            .await
            .expect("done");
        assert_eq!(value, 42);
    }
}
