//! What a rollout looks at before it goes on: every node's `/state` between two nodes of a
//! rolling upgrade, the fleet's pods before a fully stopped fleet starts its new image; and the
//! pods that hold a rollout past its deadline.

use crate::children::peer_service_name;
use crate::error::Error;
use crate::failure::Failure;
use crate::fleet::context::Context;
use crate::upgrade::decide::{Probe, Probed};
use celld_api::contract::node_address;
use celld_api::labels;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::ListParams;

/// Probes what `probe` asks for, for the fleet `name` in `ns` running `replicas` nodes.
pub async fn probe(
    ctx: &Context,
    ns: &str,
    name: &str,
    replicas: i32,
    probe: Probe,
) -> Result<Probed, Failure> {
    match probe {
        Probe::NodeStates => {
            let peers = peer_service_name(name);
            let nodes: Vec<(String, String)> = (0..replicas)
                .map(|ordinal| {
                    let pod = format!("{name}-{ordinal}");
                    let address = node_address(&pod, &peers, ns);
                    (pod, address)
                })
                .collect();
            Ok(Probed {
                restores: Some(ctx.node_api.restores(&nodes).await),
                ..Probed::default()
            })
        }
        Probe::PodsLeft => {
            let pods = pods(ctx, ns)
                .list_metadata(&node_pods(name))
                .await
                .map_err(|e| pods_unlisted(name, e))?;
            Ok(Probed {
                pods_left: Some(pods.items.len()),
                ..Probed::default()
            })
        }
    }
}

/// The nodes of the fleet `name` in `ns` (`replicas` of them) that hold its rollout, read from
/// its pods: asked only once the rollout passed its deadline.
pub async fn holders(
    ctx: &Context,
    ns: &str,
    name: &str,
    replicas: i32,
    statefulset: Option<&StatefulSet>,
) -> Result<Vec<String>, Failure> {
    let pods = pods(ctx, ns)
        .list(&node_pods(name))
        .await
        .map_err(|e| pods_unlisted(name, e))?;
    Ok(crate::fleet::holders::holders(
        name,
        replicas,
        statefulset,
        &pods.items,
    ))
}

/// The pods API of namespace `ns`.
fn pods(ctx: &Context, ns: &str) -> Api<Pod> {
    Api::namespaced(ctx.client.clone(), ns)
}

/// The selector of the node pods of the fleet `name`.
fn node_pods(name: &str) -> ListParams {
    ListParams::default().labels(&labels::node_selector_string(name))
}

/// The failure of listing the pods of the fleet `name`.
fn pods_unlisted(name: &str, e: kube::Error) -> Failure {
    Failure::child(
        "Pod",
        "",
        "list",
        &Error::kube(format!("listing the pods of CelldFleet {name}"), e),
    )
}
