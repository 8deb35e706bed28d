//! What the rollout controller keeps beside the [shared](crate::shared::context) state: the
//! writer of the rollouts' statuses and Events.

use crate::shared::context::WithWriter;
use celld_api::CelldRollout;

/// The rollout controller's state.
pub type Context = WithWriter<CelldRollout>;
