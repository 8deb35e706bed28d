//! What a rollout looks at before it goes on: every node's `/state` between two nodes of a
//! rolling upgrade (from the reconcile's reading of its nodes when it made one), the fleet's pods before a fully stopped fleet starts its new image; and the
//! pods that hold a rollout past its deadline.

use crate::children::peer_service_name;
use crate::error::Error;
use crate::failure::Failure;
use crate::fleet::context::Context;
use crate::nodes::adoption::{Answer, Reading};
use crate::nodes::reachability::Reader;
use crate::nodes::reads::{self, FleetNodes};
use crate::nodes::unanswered::Unanswered;
use crate::upgrade::decide::{Probe, Probed, Restores};
use celld_api::labels;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::Api;
use kube::api::ListParams;

/// Probes what `probe` asks for, for the fleet `name` in `ns` running `replicas` nodes: the
/// nodes' states come from the `reading` this reconcile made, when it made one.
pub async fn probe(
    ctx: &Context,
    ns: &str,
    name: &str,
    replicas: i32,
    probe: Probe,
    reading: Option<&Reading>,
) -> Result<Probed, Failure> {
    match probe {
        Probe::NodeStates => {
            let answers = match reading {
                Some(reading) => reading.nodes.clone(),
                None => {
                    let nodes = FleetNodes {
                        namespace: ns.to_string(),
                        name: name.to_string(),
                        peer_service: peer_service_name(name),
                        replicas,
                    };
                    reads::states(&ctx.nodes.api, &nodes, Reader::Reconcile).await
                }
            };
            let pods = pods(ctx, ns)
                .list(&node_pods(name))
                .await
                .map_err(|e| pods_unlisted(name, e))?;
            Ok(Probed {
                restores: Some(Restores {
                    busy: busy(&answers),
                    unready: unready(name, replicas, &pods.items),
                }),
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
                at: Timestamp::now(),
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

/// The nodes that restore cells or did not answer, each with the sentence. A node the operator
/// cannot connect to at all is judged by its pod's readiness alone (see [`unready`]): that is
/// the operator's network, not the node.
fn busy(answers: &[(String, Answer)]) -> Vec<(String, String)> {
    answers
        .iter()
        .filter_map(|(pod, answer)| match answer {
            Answer::State(state, _) if state.restoring == 0 => None,
            Answer::Unreadable(Unanswered::Unreachable) => None,
            Answer::State(state, _) => Some((pod.clone(), format!(
                "node {pod} reports {} cells restoring; the next node is updated once every node reports none",
                state.restoring
            ))),
            Answer::Unreadable(e) => Some((pod.clone(), format!(
                "the state of node {pod} could not be read ({e}); the next node is updated once every node reports no restores"
            ))),
        })
        .collect()
}

/// The nodes of the fleet `name` whose pod among `pods` is not Ready: those that exist, and
/// the missing ones of the first `replicas`.
fn unready(name: &str, replicas: i32, pods: &[Pod]) -> Vec<String> {
    let ready = |pod: &Pod| {
        pod.metadata.deletion_timestamp.is_none()
            && pod
                .status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
    };
    let mut unready: Vec<String> = pods
        .iter()
        .filter(|p| !ready(p))
        .filter_map(|p| p.metadata.name.clone())
        .collect();
    for ordinal in 0..replicas.max(0) {
        let node = format!("{name}-{ordinal}");
        if !pods
            .iter()
            .any(|p| p.metadata.name.as_deref() == Some(&node))
        {
            unready.push(node);
        }
    }
    unready.sort();
    unready
}

/// The pods API of namespace `ns`.
fn pods(ctx: &Context, ns: &str) -> Api<Pod> {
    Api::namespaced(ctx.shared.client.clone(), ns)
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
