//! SettingsHeld: spec.env's settings that a celld release holds until every node runs it, kept
//! from the nodes for now (absent when spec.env uses none).

use super::{Cond, cond};
use crate::upgrade::held::HeldBack;
use celld_api::conditions::SETTINGS_HELD;
use celld_api::reasons::Reason;

/// The condition, from the settings spec.env uses (`None`: none) and those held back.
pub fn condition(held: Option<&[HeldBack]>) -> Option<Cond> {
    let held = held?;
    if held.is_empty() {
        return Some(cond(
            SETTINGS_HELD,
            Some(false),
            Reason::SettingsInUse,
            "every node runs a celld release that allows spec.env's settings, and has them",
        ));
    }
    let reason = if held.iter().all(|h| h.on_its_way) {
        Reason::HeldForNodes
    } else {
        Reason::HeldForImage
    };
    let message: Vec<&str> = held.iter().map(|h| h.why.as_str()).collect();
    Some(cond(SETTINGS_HELD, Some(true), reason, message.join("; ")))
}
