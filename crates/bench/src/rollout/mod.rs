//! A CelldRollout over many fleets on two stores under one operator, against its floor: the
//! fleets and stores ([`workload`]) and the buckets the bench writes ([`buckets`]), the
//! stand-in for the deploy pods ([`player`]), the floor of each wave's publishes ([`floor`]),
//! the watch of the rollout's waves ([`watch`]), the Events it published ([`events`]), the run that times them ([`run`]) and
//! what it saw, read into times ([`seen`]).

pub mod buckets;
pub mod events;
pub mod floor;
pub mod player;
pub mod run;
pub mod seen;
pub mod watch;
pub mod workload;
