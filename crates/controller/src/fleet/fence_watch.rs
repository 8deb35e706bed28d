//! Reads the nodes' exits from a watch of the node pods (see
//! [`fences`](crate::nodes::fences)): each new one is recorded for its fleet, which is looked
//! at again so its status says it; a fence is also counted and logged.

use crate::cache::streams::Items;
use crate::fleet::context::Context;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::ObjectRef;
use std::future::Future;
use std::sync::Arc;
use tracing::info;

/// Reads `pods` until `shutdown` resolves.
pub async fn run(ctx: Arc<Context>, mut pods: Items<Pod>, shutdown: impl Future<Output = ()>) {
    tokio::pin!(shutdown);
    loop {
        let pod = tokio::select! {
            () = &mut shutdown => return,
            pod = pods.next() => pod,
        };
        let Some(pod) = pod else { return };
        let Ok(pod) = pod else { continue };
        if let Some(recorded) = ctx.nodes.fences.record(&pod, Timestamp::now()) {
            let (namespace, fleet) = recorded.fleet;
            if recorded.fenced {
                ctx.shared.metrics.node_fenced();
                info!(%namespace, %fleet, node = ?pod.metadata.name, "a node fenced itself (exit code 3)");
            }
            // A fleet gone in the meantime is not reconciled.
            let _ = ctx
                .nodes
                .trigger
                .unbounded_send(ObjectRef::new(&fleet).within(&namespace));
        }
    }
}
