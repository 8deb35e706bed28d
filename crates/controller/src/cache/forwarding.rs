//! A watch's items forwarded to its consumers by a task of its own: one watch feeds every
//! controller that looks at its kind, makes progress whatever they do, and ends once they are
//! all gone; its errors are logged here and never reach a controller.

use futures::{Stream, StreamExt, future};
use kube::runtime::watcher;
use tracing::{debug, warn};

/// Items of a watch stream for a controller.
pub type Items<K> = futures::stream::BoxStream<'static, Result<K, watcher::Error>>;

/// The sending end of a forwarded watch. Its items are boxed: the channel keeps a few of its
/// blocks of 32 slots for reuse for as long as the watch lasts, and slots the size of a pointer
/// keep those blocks small; slots the size of a cached object made them 12 to 49 KiB each, held
/// after a burst of changes long after the objects were gone.
type Sender<K> = tokio::sync::mpsc::UnboundedSender<Box<Result<K, watcher::Error>>>;

/// A consumer of a forwarded watch: its sender, and its end as a stream.
fn consumer<K: Send + 'static>() -> (Sender<K>, Items<K>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let items = futures::stream::unfold(
        rx,
        |mut rx: tokio::sync::mpsc::UnboundedReceiver<Box<_>>| async move {
            rx.recv().await.map(|item| (*item, rx))
        },
    );
    (tx, items.boxed())
}

/// Drives `items` in a task of its own, forwarding every item to each of `consumers`; the task,
/// and with it the watch, ends as soon as every consumer is gone. The watch (and the cache it
/// keeps) makes progress whatever its consumers do: a reconcile waiting for the caches never
/// waits for its own controller to poll them.
fn forward<K: Clone + Send + 'static>(mut items: Items<K>, consumers: Vec<Sender<K>>) {
    tokio::spawn(async move {
        let all_gone = future::join_all(consumers.iter().map(|c| c.closed()));
        tokio::pin!(all_gone);
        loop {
            tokio::select! {
                _ = &mut all_gone => return,
                item = items.next() => {
                    let Some(item) = item else { return };
                    let Ok(object) = item else { continue };
                    for c in &consumers {
                        // A consumer that is gone misses nothing it wants.
                        let _ = c.send(Box::new(Ok(object.clone())));
                    }
                }
            }
        }
    });
}

/// `items`, driven by a task of their own (see `forward`).
pub fn detached<K: Clone + Send + 'static>(items: Items<K>) -> Items<K> {
    let (tx, rx) = consumer();
    forward(items, vec![tx]);
    rx
}

/// `items` delivered to `N` consumers, driven by a task of their own: one watch feeds every
/// controller that looks at the kind, so the API server serves it once.
pub fn fanned<K: Clone + Send + 'static, const N: usize>(items: Items<K>) -> [Items<K>; N] {
    let mut senders = Vec::with_capacity(N);
    let ends = std::array::from_fn(|_| {
        let (tx, rx) = consumer();
        senders.push(tx);
        rx
    });
    forward(items, senders);
    ends
}

/// `items` without their errors, which are logged as failures of the watch `name`; the watch's
/// own backoff (before `items`) holds it back after each.
pub fn without_errors<K: Send + 'static>(
    name: String,
    items: impl Stream<Item = Result<K, watcher::Error>> + Send + 'static,
) -> Items<K> {
    items
        .filter_map(move |item| {
            future::ready(match item {
                Ok(object) => Some(Ok(object)),
                // 410 Gone: the resource version is too old; the watcher lists again.
                Err(watcher::Error::WatchError(status)) if status.code == 410 => {
                    debug!(watch = %name, error = %status, "watch expired; listing again");
                    None
                }
                Err(error) => {
                    warn!(watch = %name, %error, "watch failed; retrying with backoff");
                    None
                }
            })
        })
        .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;
    use std::time::Duration;

    fn status(code: u16) -> watcher::Error {
        watcher::Error::WatchError(Box::new(
            serde_json::from_value(serde_json::json!({
                "status": "Failure", "message": "m", "reason": "r", "code": code
            }))
            .unwrap(),
        ))
    }

    #[tokio::test]
    async fn a_shared_watch_delivers_every_item_to_every_consumer() {
        let items: Items<i32> = stream::iter(vec![Ok(1), Ok(2), Ok(3)]).boxed();
        let ends: [Items<i32>; 3] = fanned(items);
        for (i, end) in ends.into_iter().enumerate() {
            let got: Vec<i32> = end.map(|i| i.unwrap()).collect().await;
            assert_eq!(
                got,
                vec![1, 2, 3],
                "consumer {i}: a slower consumer misses nothing"
            );
        }
    }

    #[tokio::test]
    async fn a_watch_nobody_reads_any_more_ends() {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<i32, watcher::Error>>();
        let endless = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        })
        .boxed();
        let items = detached(endless);
        drop(items);
        tokio::time::timeout(Duration::from_secs(5), tx.closed())
            .await
            .expect("the forwarding task ended and dropped the watch");
    }

    #[tokio::test]
    async fn errors_are_kept_from_the_controller() {
        let items = stream::iter(vec![
            Ok(1),
            Err(status(410)),
            Err(status(429)),
            Err(watcher::Error::NoResourceVersion),
            Ok(2),
        ]);
        let seen: Vec<i32> = without_errors("fleets/CelldFleet".into(), items)
            .map(|item| item.unwrap())
            .collect()
            .await;
        assert_eq!(seen, vec![1, 2]);
    }
}
