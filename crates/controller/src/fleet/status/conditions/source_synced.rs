//! SourceSynced: whether the bucket serves the revision spec.source names, as the publishing
//! decision found it; absent for a fleet without spec.source.

use super::{Cond, cond};
use crate::fleet::status::observation::Observed;
use celld_api::conditions::SOURCE_SYNCED;

/// The SourceSynced condition of `o`, if it has a source.
pub fn condition(o: &Observed) -> Option<Cond> {
    let synced = &o.source.as_deref()?.synced;
    Some(cond(
        SOURCE_SYNCED,
        synced.status,
        synced.reason,
        synced.message.clone(),
    ))
}
