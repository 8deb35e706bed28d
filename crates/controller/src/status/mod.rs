//! What every controller's objects are told, and how: the one [`writer`](mod@writer) of
//! statuses and Events for every [reported](reported::Reported) kind, the
//! [`Note`](note::Note)s (Events) a change is worth, and the [`written`](mod@written) statuses
//! the caches may not show yet (what the reconciles read back).

pub mod note;
pub mod reported;
pub mod writer;
pub mod written;
