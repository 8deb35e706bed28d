//! How every controller starts and ends a reconcile, and retries a failed one: an object that
//! does not match the schema waits for a change; a success forgets the object's failures; a
//! failure is said on the object by its kind's [writer](Writer::failed) (Degraded and one
//! Warning, unless its reconcile already said it) and retried with the shared exponential
//! [backoff](crate::shared::backoff), 1 s doubling up to 5 minutes, for every kind alike.

use crate::error::Error;
use crate::shared::context::{Controlled, Shared};
use crate::status::reported::Reported;
use crate::status::writer::Writer;
use kube::Resource;
use kube::core::{DeserializeGuard, ObjectMeta};
use kube::runtime::controller::Action;
use std::sync::Arc;
use tracing::warn;

/// The key of an object's failures: its kind, namespace and name.
fn key<K: Reported>(meta: &ObjectMeta) -> String {
    format!(
        "{}/{}/{}",
        K::KIND,
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default()
    )
}

/// The object `guard` holds, or None (logged once per change) when it does not match the
/// schema: its reconcile then waits for it to change.
pub fn parsed<K: Reported>(guard: &DeserializeGuard<K>) -> Option<&K> {
    match &guard.0 {
        Ok(object) => Some(object),
        Err(invalid) => {
            warn!(kind = K::KIND, error = %invalid.error, name = ?invalid.metadata.name, namespace = ?invalid.metadata.namespace,
                "an object does not match the schema; waiting for it to change");
            None
        }
    }
}

/// Ends a reconcile of `object` that gave `result`: forgets its failures after a success, and
/// says a failure on the object through `writer`.
pub async fn settle<K: Reported>(
    shared: &Shared,
    writer: &Writer<K>,
    object: &K,
    result: &Result<Action, Error>,
) {
    match result {
        Ok(_) => shared.backoff.succeeded(&key::<K>(object.meta())),
        Err(error) => writer.failed(object, error).await,
    }
}

/// What every controller does after a failed reconcile: retry with the object's exponential
/// backoff.
pub fn error_policy<K: Reported, C: Controlled>(
    guard: Arc<DeserializeGuard<K>>,
    error: &Error,
    ctx: Arc<C>,
) -> Action {
    let key = key::<K>(guard.meta());
    let wait = ctx.shared().backoff.failed(&key);
    warn!(kind = K::KIND, object = %key, error = %error, retry_in = ?wait, "reconcile failed");
    Action::requeue(wait)
}
