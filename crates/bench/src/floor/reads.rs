//! What the floor reads for each fleet, as any operator must to write the status it writes:
//! the deployment pointer in the fleet's bucket, before its pods (celld nodes exit at boot
//! without a deployment, so a correct operator sizes its StatefulSet by it), and each node's
//! state once its StatefulSet is ready (the version the status says every node serves). Read
//! with the operator's own clients (`celld_operator::storage`, `celld_operator::nodes`), from
//! the same S3 server and the same stand-in for the nodes' API as in the operator's run; with
//! the nodes unreachable ([`NodeAnswers::Unreachable`]), at the nodes' own names, as the
//! operator's run dials them, where every read fails, waited for no longer than the operator's
//! reconcile waits ([`NODE_READ_BUDGET`]): its status is Ready without them.

use crate::error::{Error, Result};
use crate::node_answers::NodeAnswers;
use crate::settings::REPLICAS;
use celld_api::CelldFleet;
use celld_operator::buckets::bucket_clients::BucketClients;
use celld_operator::buckets::object_store::StoreEndpoints;
use celld_operator::buckets::pointer::{self, Pointer, PointerRead};
use celld_operator::fleet::inputs::NODE_READ_BUDGET;
use celld_operator::nodes::adoption::{Answer, Reading, standing};
use celld_operator::nodes::client::NodeApi;
use celld_operator::nodes::reachability::Reader;
use celld_operator::nodes::reads::{FleetNodes, states};
use k8s_openapi::api::core::v1::Secret;
use kube::ResourceExt;
use std::time::Duration;

/// The bound of one read, as the operator's default for the bucket.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The floor's clients of the buckets and of the nodes' API.
pub struct FloorReads {
    buckets: BucketClients,
    nodes: NodeApi,
    answers: NodeAnswers,
}

impl FloorReads {
    /// Clients reaching every node through the nodes' API stand-in at `nodes_at`
    /// (`HOST:PORT`), as the operator's `--node-api-connect-to`.
    pub fn new(nodes_at: &str) -> Self {
        Self::with(Some(nodes_at.to_owned()), NodeAnswers::Answering)
    }

    /// Clients reaching every node at its own name through its fleet's peer Service, as the
    /// operator without `--node-api-connect-to` does: no node answers there.
    pub fn unreachable() -> Self {
        Self::with(None, NodeAnswers::Unreachable)
    }

    fn with(connect_to: Option<String>, answers: NodeAnswers) -> Self {
        Self {
            buckets: BucketClients::new(TIMEOUT, StoreEndpoints::default(), TIMEOUT),
            nodes: NodeApi::new(connect_to, TIMEOUT),
            answers,
        }
    }

    /// The deployment `fleet`'s bucket holds, read with the keys in `secret`; an error when
    /// it holds none, or cannot be read (the bench published one for every fleet).
    pub async fn pointer(&self, fleet: &CelldFleet, secret: &Secret) -> Result<Pointer> {
        let name = fleet.name_any();
        let failed = |detail: String| Error::FloorRead {
            what: format!("the deployment pointer of fleet {name}"),
            detail,
        };
        let storage =
            celld_api::resolve::resolve(&fleet.spec, &fleet.namespace().unwrap_or_default(), None)
                .map_err(|e| failed(e.to_string()))?;
        let source = self
            .buckets
            .get(&fleet.uid().unwrap_or_default(), &storage, Some(secret))
            .map_err(failed)?;
        match pointer::read(source.as_ref(), &storage, None, TIMEOUT).await {
            PointerRead::Changed {
                pointer: pointer @ Pointer::Deployed(_),
                ..
            } => Ok(pointer),
            PointerRead::Changed {
                pointer: Pointer::Missing,
                ..
            } => Err(failed("the bucket holds no deployment".into())),
            PointerRead::Changed {
                pointer: Pointer::Unknown(why) | Pointer::NoCredentials(why),
                ..
            } => Err(failed(why)),
            PointerRead::NotModified => Err(failed(
                "304 Not Modified to a read without If-None-Match".into(),
            )),
        }
    }

    /// The state of each node of fleet `name` in `namespace`, every one serving `version`; an
    /// error naming the node that does not. With the nodes unreachable, every node's read must
    /// fail instead (the status then says why, as the operator's does; an error names a node
    /// that answered), and a reading that takes longer than the operator's reconcile waits for
    /// one (a resolver that does not answer) is none: the status is written without it, as the
    /// operator's reconcile writes it.
    pub async fn nodes(
        &self,
        namespace: &str,
        name: &str,
        version: &str,
    ) -> Result<Option<Reading>> {
        let fleet = FleetNodes {
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            peer_service: celld_operator::children::peer_service_name(name),
            replicas: REPLICAS,
        };
        if self.answers == NodeAnswers::Unreachable {
            let Ok(nodes) = tokio::time::timeout(
                NODE_READ_BUDGET,
                states(&self.nodes, &fleet, Reader::Reconcile),
            )
            .await
            else {
                return Ok(None);
            };
            if let Some((node, _)) = nodes
                .iter()
                .find(|(_, answer)| !matches!(answer, Answer::Unreadable(_)))
            {
                return Err(Error::FloorRead {
                    what: format!("the state of node {node} of fleet {name}"),
                    detail: "it answered, in a run whose nodes cannot be read".into(),
                });
            }
            return Ok(Some(Reading {
                version: version.to_owned(),
                nodes,
            }));
        }
        let nodes = states(&self.nodes, &fleet, Reader::Reconcile).await;
        // Judged as the operator judges a node for its status: adopted, or why not (`standing`
        // gives a reason exactly when the node has not adopted the version).
        for (node, answer) in &nodes {
            if let (_, Some(why)) = standing(version, answer) {
                return Err(Error::FloorRead {
                    what: format!("the state of node {node} of fleet {name}"),
                    detail: why,
                });
            }
        }
        Ok(Some(Reading {
            version: version.to_owned(),
            nodes,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_operator::nodes::unanswered::Unanswered;

    #[tokio::test]
    async fn the_nodes_are_read_through_the_double_and_each_must_serve_the_version() {
        // f7-1 serves another version than its fleet's.
        let double = celld_fixtures::NodeDouble::start_per_pod("0.6.1", |pod| match pod {
            "f7-1" => "0000000000000099".to_owned(),
            _ => crate::workload::deployed_version(pod).unwrap_or_default(),
        })
        .await
        .unwrap();
        let reads = FloorReads::new(&double.address);
        let version = crate::workload::deployed_version("f3-0").unwrap();
        let reading = reads.nodes("bench-0", "f3", &version).await.unwrap();
        let reading = reading.expect("read");
        assert_eq!(reading.version, version);
        let names: Vec<&str> = reading.nodes.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f3-0", "f3-1"]);
        assert_eq!(double.total_state_reads(), 2, "one read a node");
        // A node serving another version, or not answering, fails the floor, naming it.
        let version = crate::workload::deployed_version("f7-0").unwrap();
        let error = reads.nodes("bench-0", "f7", &version).await.unwrap_err();
        let error = error.to_string();
        assert!(
            error.contains("node f7-1 of fleet f7")
                && error
                    .contains("it serves 0000000000000099; it reads the pointer again within 30 s"),
            "{error}"
        );
        double.break_state("f3-1", true);
        let version = crate::workload::deployed_version("f3-0").unwrap();
        let error = reads.nodes("bench-0", "f3", &version).await.unwrap_err();
        assert!(
            error.to_string().contains("node f3-1 of fleet f3"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn unreachable_nodes_are_read_at_their_own_names_and_each_read_fails() {
        let reads = FloorReads::unreachable();
        let version = crate::workload::deployed_version("f3-0").unwrap();
        let started = std::time::Instant::now();
        let read = reads.nodes("bench-0", "f3", &version).await.unwrap();
        // Never waited for longer than the operator's reconcile waits.
        assert!(
            started.elapsed() < NODE_READ_BUDGET + std::time::Duration::from_millis(200),
            "{:?}",
            started.elapsed()
        );
        // A resolver that does not answer in time leaves no reading.
        let Some(reading) = read else {
            return;
        };
        assert_eq!(reading.version, version);
        let names: Vec<&str> = reading.nodes.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["f3-0", "f3-1"]);
        // Dialled at its name through the peer Service, as the operator dials it: no
        // connection is made.
        for (node, answer) in &reading.nodes {
            assert_eq!(
                *answer,
                Answer::Unreadable(Unanswered::Unreachable),
                "{node}"
            );
        }
    }
}
