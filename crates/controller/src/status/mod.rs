//! What every controller's resources are told, and how: the [`Note`](note::Note)s (Events)
//! a change is worth.

pub mod note;
