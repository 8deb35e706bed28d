//! The floor: the children the operator would make for the fleets, rendered by its own
//! builders before the clock starts, and applied by server-side apply from concurrent client
//! tasks with no operator running; timed until every StatefulSet is ready.

use crate::control_plane::BenchControlPlane;
use crate::error::{Error, Result};
use crate::identity::FIELD_MANAGER;
use crate::readiness::Watches;
use crate::results::FloorRun;
use crate::settings::{CONCURRENCY, FLEET_NAMESPACE, REPLICAS, pods_of, ready_timeout};
use crate::workload::Workload;
use celld_api::CelldFleet;
use celld_operator::children::{self, Desired};
use celld_operator::upgrade::decide;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::Secret;
use kube::api::{ApiResource, DynamicObject, Patch, PatchParams};
use kube::{Api, Client, Resource, ResourceExt};
use std::time::Instant;

/// One child, ready to apply.
#[derive(Debug, Clone)]
pub struct Rendered {
    resource: ApiResource,
    name: String,
    body: serde_json::Value,
}

fn rendered<K>(object: K) -> Result<Rendered>
where
    K: Resource<DynamicType = ()> + serde::Serialize,
{
    let name = object.meta().name.clone().unwrap_or_default();
    let body = serde_json::to_value(&object).map_err(|e| Error::Manifest {
        what: format!("{} {name}", K::kind(&())),
        detail: e.to_string(),
    })?;
    Ok(Rendered {
        resource: ApiResource::erase::<K>(&()),
        name,
        body,
    })
}

/// Every child the operator applies for `fleet` (on a cluster without the Gateway API route
/// it asks for none), rendered with the operator's builders.
pub fn render(fleet: &CelldFleet, secret: &Secret) -> Result<Vec<Rendered>> {
    let namespace = fleet.namespace().unwrap_or_else(|| FLEET_NAMESPACE.into());
    let storage = celld_api::resolve::resolve(&fleet.spec, &namespace, None).map_err(|e| {
        Error::Manifest {
            what: format!("the storage of fleet {}", fleet.name_any()),
            detail: e.to_string(),
        }
    })?;
    let desired = Desired {
        fleet,
        name: fleet.name_any(),
        namespace,
        config_hash: celld_operator::fleet::config_hash::compute(&storage, Some(secret)),
        storage,
        replicas: REPLICAS,
        https: false,
        operator: children::OperatorPods::default(),
        upgrade: decide::decide(&fleet.spec, REPLICAS, None, &decide::Probed::default()),
    };
    let mut out = vec![
        rendered(children::statefulset::build(&desired))?,
        rendered(children::service::build(&desired))?,
        rendered(children::peer_service::build(&desired))?,
        rendered(children::network_policy::build(&desired))?,
    ];
    out.extend(children::pdb::build(&desired).map(rendered).transpose()?);
    out.extend(
        children::ingress::build(&desired)
            .map(rendered)
            .transpose()?,
    );
    out.extend(
        children::httproute::build(&desired)
            .map(rendered)
            .transpose()?,
    );
    Ok(out)
}

async fn apply(client: Client, child: Rendered) -> Result<()> {
    let api: Api<DynamicObject> = Api::namespaced_with(client, FLEET_NAMESPACE, &child.resource);
    api.patch(
        &child.name,
        &PatchParams::apply(FIELD_MANAGER).force(),
        &Patch::Apply(&child.body),
    )
    .await
    .map_err(Error::kube(format!(
        "applying {} {}",
        child.resource.kind, child.name
    )))?;
    Ok(())
}

/// Measures the floor for `count` fleets on a fresh control plane.
pub async fn run(count: usize) -> Result<FloorRun> {
    let plane = BenchControlPlane::start(&format!("floor-{count}"), pods_of(count)).await?;
    let client = plane.client();
    let workload = Workload::prepare(client.clone(), plane.s3(), count).await?;
    let fleets = workload.create(count).await?;
    let secret = workload.secret().await?;
    let objects: Vec<Rendered> = fleets
        .iter()
        .map(|f| render(f, &secret))
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .flatten()
        .collect();
    let total = objects.len();
    let watches = Watches::start(&client, FLEET_NAMESPACE);
    let started = Instant::now();
    futures::stream::iter(objects)
        .map(|child| apply(client.clone(), child))
        .buffer_unordered(CONCURRENCY)
        .try_collect::<Vec<()>>()
        .await?;
    let logs = plane.dir().join("logs");
    watches
        .wait_ready(count, 0, ready_timeout(count), logs, || Ok(()))
        .await?;
    let last = watches.statefulsets().last_ready().unwrap_or(started);
    eprintln!(
        "bench: floor: {total} objects applied, every StatefulSet ready after {:.1} s",
        last.saturating_duration_since(started).as_secs_f64()
    );
    drop(watches);
    plane.remove().await?;
    Ok(FloorRun {
        fleets: count,
        objects: total,
        statefulsets_ready: last.saturating_duration_since(started),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_testkit::S3Settings;

    #[test]
    fn a_fleet_renders_to_the_operators_six_children() {
        let s3 = S3Settings {
            endpoint: "http://127.0.0.1:9000".into(),
            access_key_id: "ak".into(),
            secret_access_key: "sk".into(),
            region: "us-east-1".into(),
            bucket: "b".into(),
        };
        let fleet = crate::workload::fleet_manifest(3, &s3).unwrap();
        let kinds: Vec<String> = render(&fleet, &Secret::default())
            .unwrap()
            .into_iter()
            .map(|r| format!("{}/{}", r.resource.kind, r.name))
            .collect();
        assert_eq!(
            kinds,
            [
                "StatefulSet/f3",
                "Service/f3",
                "Service/f3-peer",
                "NetworkPolicy/f3",
                "PodDisruptionBudget/f3",
                "Ingress/f3"
            ]
        );
    }
}
