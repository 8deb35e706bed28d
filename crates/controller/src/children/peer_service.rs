//! Service `<fleet>-peer`: headless, gives each node the stable DNS name it advertises to its
//! peers on port 8081. Never exposed outside the cluster.

use super::{Desired, INTERNAL_PORT};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

/// The headless peer Service of a fleet.
pub fn build(d: &Desired) -> Service {
    Service {
        metadata: d.meta(d.peer_service_name(), None),
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".into()),
            publish_not_ready_addresses: Some(true),
            selector: Some(d.node_selector()),
            ports: Some(vec![ServicePort {
                name: Some("internal".into()),
                port: INTERNAL_PORT,
                target_port: Some(IntOrString::Int(INTERNAL_PORT)),
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
    fn headless_and_publishes_not_ready() {
        let fleet = fixtures::fleet(fixtures::MINIMAL);
        insta::assert_yaml_snapshot!(build(&fixtures::desired(&fleet)));
    }
}
