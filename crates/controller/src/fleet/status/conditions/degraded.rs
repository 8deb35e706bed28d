//! Degraded: whether anything keeps the fleet from its spec, listing every failure met.

use super::{Cond, cond};
use crate::failure;
use crate::fleet::status::observation::{Observed, ObservedStorage};
use celld_api::conditions::DEGRADED;
use celld_api::reasons::Reason;

/// The Degraded condition: the failures `o` met, or else an unresolved storage or a route the
/// cluster cannot serve (`route`, when RouteReady says so).
pub fn condition(o: &Observed, route: &Cond) -> Cond {
    if let Some(first) = o.failures.first() {
        return cond(
            DEGRADED,
            Some(true),
            first.reason,
            failure::summary(&o.failures),
        );
    }
    if let ObservedStorage::Failed(f) = &o.storage {
        return cond(DEGRADED, Some(true), f.reason, f.message.clone());
    }
    if route.reason == Reason::GatewayAPIMissing {
        return cond(DEGRADED, Some(true), route.reason, route.message.clone());
    }
    cond(
        DEGRADED,
        Some(false),
        Reason::AsExpected,
        "nothing keeps the fleet from its spec",
    )
}
