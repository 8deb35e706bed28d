//! A Job that has the name of a fleet's next deploy Job, and is not the fleet's, is never taken
//! as its publish: the fleet is Degraded with NameTaken naming the Job, and the Job is left as
//! it is.

use super::harness::*;
use crate::support::*;
use celld_api::BucketUrl;
use celld_operator::children::MANAGER;
use celld_operator::source::wanted;
use k8s_openapi::api::batch::v1::Job;
use kube::ResourceExt;
use kube::api::PostParams;
use serde_json::json;

#[tokio::test]
async fn a_foreign_job_with_the_deploy_jobs_name_is_left_alone() {
    let (env, _nodes, op) = env_with_nodes("source-job-taken", "0.6.0", V1).await;
    let s3 = env.s3().expect("S3 settings");
    let prefix = prefix(&s3, "source-job-taken");
    celld_fixtures::create_credentials(&env.api(), "creds", &s3)
        .await
        .expect("credentials Secret created");
    // The name the operator gives the first deploy Job of this source, taken beforehand.
    let deployer = "registry.invalid/acme/deployer:1";
    let bucket = BucketUrl::parse(&format!("s3://{}/{prefix}", s3.bucket))
        .expect("bucket URL")
        .to_string();
    let wanted::Wanted::Revision(revision) = wanted::from_image(REF1) else {
        panic!("an image reference is a revision");
    };
    let key = wanted::key(&revision, "./", &bucket, None);
    let name = wanted::job_name(&wanted::job_base("web", &key, deployer), 1);
    let foreign: Job = serde_json::from_value(json!({
        "metadata": {"name": name, "labels": {"team": "platform"}},
        "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "other", "image": "registry.invalid/other:1"}]}}},
    }))
    .expect("a Job");
    let foreign = env
        .api::<Job>()
        .create(&PostParams::default(), &foreign)
        .await
        .expect("the foreign Job created");

    let spec = json!({"image": "ghcr.io/denoland/celld:v0.6.0", "replicas": 2,
        "source": {"image": {"reference": REF1}, "deployerImage": deployer}});
    apply_fleet(
        &env,
        &celld_fixtures::inline_fleet("web", &s3, &prefix, spec).expect("a CelldFleet"),
    )
    .await;
    let fleet = wait_condition(&env, "web", "Degraded", "True", Some("NameTaken")).await;
    let degraded = message(&fleet, "Degraded");
    assert!(
        degraded.contains(&format!(
            "Job {name} already exists in namespace {} and is not this fleet's (it has no owner reference to the fleet)",
            env.namespace()
        )),
        "{degraded}"
    );
    let now = env.api::<Job>().get(&name).await.expect("the Job stays");
    assert_eq!(now.uid(), foreign.uid(), "the same Job");
    assert!(now.owner_references().is_empty());
    assert!(
        now.managed_fields()
            .iter()
            .all(|f| f.manager.as_deref() != Some(MANAGER))
    );
    op.stop().await;
}
