//! Service `<fleet>`: the public Worker endpoint, port 80 to celld's port 8080.

use super::{Desired, HTTP_PORT, SERVICE_PORT};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The public Service of a fleet.
pub fn build(d: &Desired) -> Service {
    let spec = &d.fleet.spec.service;
    Service {
        metadata: d.meta(d.name.clone(), Some(spec.annotations.clone())),
        spec: Some(ServiceSpec {
            type_: Some(spec.type_.as_str().into()),
            selector: Some(d.node_selector()),
            ports: Some(vec![ServicePort {
                name: Some("http".into()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::Int(HTTP_PORT)),
                protocol: Some("TCP".into()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        status: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::children::fixtures;

    #[test]
    fn load_balancer_with_annotations() {
        let fleet = fixtures::fleet(fixtures::FULL);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }
}
