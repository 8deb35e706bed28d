//! How many changes a watch brought to its cache: a pass over every cached object that only
//! reads the cache finds the same as the last one while the count stands still.

use super::streams::Items;
use futures::StreamExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Counts the objects a watch applied to or deleted from its cache, as they pass on to the
/// controller that looks at them (the cache holds each before it passes).
#[derive(Debug, Clone, Default)]
pub struct Changes(Arc<AtomicU64>);

impl Changes {
    /// `items`, counted as they pass.
    pub fn counting<K: Send + 'static>(&self, items: Items<K>) -> Items<K> {
        let count = self.0.clone();
        items
            .inspect(move |_| {
                count.fetch_add(1, Ordering::Relaxed);
            })
            .boxed()
    }

    /// The changes counted so far.
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::stream;

    #[tokio::test]
    async fn every_change_that_passes_is_counted() {
        let changes = Changes::default();
        let items: Items<u32> = stream::iter([Ok(1), Ok(2), Ok(3)]).boxed();
        let passed: Vec<_> = changes.counting(items).collect().await;
        assert_eq!(passed.len(), 3);
        assert_eq!(changes.count(), 3);
        assert_eq!(
            changes.clone().count(),
            3,
            "a clone counts the same changes"
        );
    }
}
