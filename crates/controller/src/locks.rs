//! The one way the operator takes a lock on state it shares between tasks.

use std::sync::{Mutex, MutexGuard};

/// The value behind `mutex`, also after a panic elsewhere left it poisoned: every update of the
/// operator's shared maps leaves them whole, so a panic never leaves one half-written.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
