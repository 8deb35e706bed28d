//! Repairing hand-edited Service ports before an apply.
//!
//! Server-side apply merges Service ports by port and protocol. A port of the operator's that
//! someone edits (80 changed to 81) is then another entry, owned by the editor: applying adds
//! port 80 back next to it, both named `http`, and the API server refuses the Service on every
//! retry. So before applying, every live port that carries the name of a wanted port with
//! another port or protocol is replaced by the wanted one, in one JSON patch that only applies
//! to the version of the Service that was read. Ports with other names (added by other
//! controllers) stay. The patch goes under its own field manager, [`PORT_REPAIR_MANAGER`]: it is not an
//! apply, and the apply that follows it takes the repaired ports back for the operator's apply
//! manager.

use crate::error::Error;
use k8s_openapi::api::core::v1::{Service, ServicePort};
use kube::api::{Patch, PatchParams};
use kube::{Api, ResourceExt};
use serde_json::json;

/// The field manager of the port repair's patch.
pub const PORT_REPAIR_MANAGER: &str = "celld-operator-port-repair";

fn protocol(p: &ServicePort) -> &str {
    p.protocol.as_deref().unwrap_or("TCP")
}

fn name(p: &ServicePort) -> Option<&str> {
    p.name.as_deref().filter(|n| !n.is_empty())
}

fn same_key(a: &ServicePort, b: &ServicePort) -> bool {
    a.port == b.port && protocol(a) == protocol(b)
}

fn ports(svc: &Service) -> &[ServicePort] {
    svc.spec
        .as_ref()
        .and_then(|s| s.ports.as_deref())
        .unwrap_or_default()
}

/// The live ports with every port that clashes with a wanted one (same name, another port or
/// protocol) replaced by that wanted port, or dropped when the wanted port is already there
/// under another name. None when nothing clashes.
pub fn repaired(live: &[ServicePort], want: &[ServicePort]) -> Option<Vec<ServicePort>> {
    let clash = |l: &ServicePort| {
        want.iter()
            .find(|w| name(w).is_some() && name(w) == name(l) && !same_key(w, l))
    };
    if !live.iter().any(|l| clash(l).is_some()) {
        return None;
    }
    let mut out: Vec<ServicePort> = Vec::with_capacity(live.len());
    for l in live {
        match clash(l) {
            None => out.push(l.clone()),
            Some(w) => {
                let taken = live.iter().any(|other| same_key(other, w))
                    || out.iter().any(|other| same_key(other, w));
                if !taken {
                    out.push(w.clone());
                }
            }
        }
    }
    Some(out)
}

/// Replaces the live Service's clashing ports with the wanted ones. Returns whether a patch was
/// sent; the caller then applies the Service regardless of how alike it looks, so the
/// operator's field manager owns the repaired ports again.
pub async fn repair(api: &Api<Service>, live: &Service, want: &Service) -> Result<bool, Error> {
    let Some(ports) = repaired(ports(live), ports(want)) else {
        return Ok(false);
    };
    let name = live.name_any();
    let action = format!("repairing the hand-edited ports of Service {name}");
    let patch = serde_json::from_value(json!([
        {"op": "test", "path": "/metadata/resourceVersion", "value": live.resource_version()},
        {"op": "replace", "path": "/spec/ports", "value": ports},
    ]))
    .map_err(|source| Error::Serialize {
        what: format!("the port repair of Service {name}"),
        source,
    })?;
    let params = PatchParams {
        field_manager: Some(PORT_REPAIR_MANAGER.into()),
        ..PatchParams::default()
    };
    api.patch(&name, &params, &Patch::<()>::Json(patch))
        .await
        .map_err(|e| Error::kube(action, e))?;
    Ok(true)
}

/// Whether a failed repair means the Service changed after it was read (the patch's
/// resourceVersion test failed, which the API server answers with 422).
pub fn raced(error: &Error) -> bool {
    matches!(error, Error::Kube { source: kube::Error::Api(s), .. } if s.code == 422)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(name: &str, port: i32, protocol: &str) -> ServicePort {
        ServicePort {
            name: (!name.is_empty()).then(|| name.to_string()),
            port,
            protocol: Some(protocol.into()),
            ..ServicePort::default()
        }
    }

    fn keys(ports: &[ServicePort]) -> Vec<(Option<String>, i32, String)> {
        ports
            .iter()
            .map(|p| (p.name.clone(), p.port, protocol(p).to_string()))
            .collect()
    }

    #[test]
    fn an_untouched_service_needs_no_repair() {
        let want = [port("http", 80, "TCP")];
        assert_eq!(repaired(&want, &want), None);
    }

    #[test]
    fn a_foreign_port_with_another_name_is_no_clash() {
        let want = [port("http", 80, "TCP")];
        let live = [port("http", 80, "TCP"), port("metrics", 9090, "TCP")];
        assert_eq!(repaired(&live, &want), None);
    }

    #[test]
    fn an_edited_port_number_is_replaced_in_place() {
        let want = [port("http", 80, "TCP")];
        let live = [port("metrics", 9090, "TCP"), port("http", 81, "TCP")];
        let fixed = repaired(&live, &want).expect("a clash");
        assert_eq!(
            keys(&fixed),
            keys(&[port("metrics", 9090, "TCP"), port("http", 80, "TCP")])
        );
    }

    #[test]
    fn an_edited_protocol_is_a_clash() {
        let want = [port("internal", 8081, "TCP")];
        let live = [port("internal", 8081, "UDP")];
        let fixed = repaired(&live, &want).expect("a clash");
        assert_eq!(keys(&fixed), keys(&want));
    }

    #[test]
    fn a_missing_protocol_means_tcp() {
        let want = [port("http", 80, "TCP")];
        let mut live = port("http", 80, "TCP");
        live.protocol = None;
        assert_eq!(repaired(&[live], &want), None);
    }

    #[test]
    fn a_clash_whose_port_exists_under_another_name_is_dropped() {
        let want = [port("http", 80, "TCP")];
        let live = [port("web", 80, "TCP"), port("http", 81, "TCP")];
        let fixed = repaired(&live, &want).expect("a clash");
        assert_eq!(keys(&fixed), keys(&[port("web", 80, "TCP")]));
    }

    #[test]
    fn the_wanted_target_port_comes_with_the_replacement() {
        let mut want = port("http", 80, "TCP");
        want.target_port =
            Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::Int(8080));
        let fixed =
            repaired(&[port("http", 81, "TCP")], std::slice::from_ref(&want)).expect("a clash");
        assert_eq!(fixed, vec![want]);
    }

    #[test]
    fn only_a_refused_guard_counts_as_a_race() {
        let answer = |code: u16| {
            Error::kube(
                "repairing",
                kube::Error::Api(Box::new(
                    kube::core::Status::failure("the server rejected our request", "Invalid")
                        .with_code(code),
                )),
            )
        };
        assert!(raced(&answer(422)));
        assert!(!raced(&answer(403)));
        assert!(!raced(&answer(500)));
    }
}
