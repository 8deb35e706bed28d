//! What the preview controller keeps beside the [shared](crate::shared::context) state: the
//! writer of the previews' statuses and Events.

use crate::shared::context::WithWriter;
use celld_api::CelldPreview;

/// The preview controller's state.
pub type Context = WithWriter<CelldPreview>;
