//! What every controller's objects are told, and how: the one [`writer`](mod@writer) of
//! statuses and Events for every [reported](reported::Reported) kind, and the
//! [`Note`](note::Note)s (Events) a change is worth.

pub mod note;
pub mod reported;
pub mod writer;
