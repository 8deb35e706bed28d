//! What a fleet is told, and how: the status [`compute`]d from what a reconcile observed
//! ([`observation`]), the Events it is worth ([`events`]), the one writer of both ([`write`]),
//! and the [`follower`] that keeps the Ready condition in step with the StatefulSet between
//! reconciles.

pub mod compute;
pub mod conditions;
pub mod events;
pub mod follower;
pub mod observation;
pub mod write;
