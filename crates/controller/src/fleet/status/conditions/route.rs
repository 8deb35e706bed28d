//! RouteReady: whether the route the spec asks for (an Ingress or an HTTPRoute) was applied.

use super::{Cond, cond};
use crate::fleet::status::observation::{Observed, Route};
use celld_api::conditions::ROUTE_READY;
use celld_api::reasons::Reason;

/// The RouteReady condition of the route `o` observed.
pub fn condition(o: &Observed) -> Cond {
    let kind = match o.route {
        Route::Ingress => "Ingress",
        Route::HttpRoute => "HTTPRoute",
        Route::None | Route::GatewayApiMissing => "",
    };
    if let Some(f) = o.failures.iter().find(|f| f.is_child(kind)) {
        return cond(
            ROUTE_READY,
            Some(false),
            f.reason,
            format!("the {kind} could not be applied; see the Degraded condition"),
        );
    }
    match o.route {
        Route::None => cond(
            ROUTE_READY,
            Some(true),
            Reason::NoRouteRequested,
            "spec.ingress is not set; the fleet is reachable through its Service",
        ),
        Route::Ingress => cond(
            ROUTE_READY,
            Some(true),
            Reason::IngressApplied,
            "the Ingress is applied",
        ),
        Route::HttpRoute => cond(
            ROUTE_READY,
            Some(true),
            Reason::HTTPRouteApplied,
            "the HTTPRoute is applied",
        ),
        Route::GatewayApiMissing => cond(
            ROUTE_READY,
            Some(false),
            Reason::GatewayAPIMissing,
            "spec.ingress.gatewayRefs needs the Gateway API HTTPRoute CRD (gateway.networking.k8s.io/v1), which this cluster does not serve: install the Gateway API CRDs, or use spec.ingress.ingressClass",
        ),
    }
}
