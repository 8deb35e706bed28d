//! A deploy pod for commands that read or write the fleet's bucket without deploying (`history`,
//! `rollback`): the same restricted Job as `deploy` (the credentials only as `secretKeyRef`
//! env, labels the fleet's NetworkPolicy admits to the nodes' internal port), kept up while the
//! plugin runs `celld-bucket` (and `curl` to reload the nodes) in it over `pods/exec`, deleted
//! at the end.

use crate::cluster::fleet_context::FleetContext;
use crate::error::{Error, Result};
use crate::pod::job::{self, DEFAULT_DEPLOYER_IMAGE};
use crate::pod::pod_wait;
use crate::pod::preflight;
use crate::text::progress::Progress;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{Event, Pod};
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use std::time::Duration;

/// Flags of the commands that start a deploy pod only to reach the bucket.
#[derive(Debug, Clone, clap::Args)]
pub struct WorkPodArgs {
    /// Image of the pod that reaches the bucket (it needs sh and celld-bucket; curl to reload)
    #[arg(long, value_name = "IMAGE", default_value = DEFAULT_DEPLOYER_IMAGE)]
    pub deployer_image: String,

    /// How long to wait for that pod to start
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::text::parse::duration)]
    pub pod_timeout: Duration,
}

/// Longest life of the pod: these commands take seconds; the Job's deadline cleans up after an
/// interrupted plugin.
const LIFETIME: Duration = Duration::from_secs(600);

/// A running deploy pod of a fleet.
pub struct WorkPod {
    /// The pods API of the fleet's namespace.
    pub pods: Api<Pod>,
    /// The pod's name.
    pub pod: String,
    jobs: Api<Job>,
    job: String,
}

impl WorkPod {
    /// Creates the Job, waits for its pod and checks it has `tools` (sh is implied).
    pub async fn start(
        context: &FleetContext,
        args: &WorkPodArgs,
        tools: &[&str],
        progress: &mut Progress,
    ) -> Result<Self> {
        let ns = context.namespace().to_string();
        let jobs: Api<Job> = Api::namespaced(context.target.client.clone(), &ns);
        // This release's deployer runs by digest when the build knows it.
        let image = celld_api::contract::deployer::pinned(&args.deployer_image);
        let built = job::build(&job::Input {
            fleet: &context.fleet,
            storage: &context.storage,
            image: &image,
            lifetime: LIFETIME,
            keep: false,
        });
        let created = jobs
            .create(&PostParams::default(), &built)
            .await
            .map_err(|e| Error::api("create", "jobs.batch", Some(&ns), e))?;
        let job_name = created.metadata.name.clone().unwrap_or_default();
        let job_uid = created.metadata.uid.clone().unwrap_or_default();
        progress.note(&format!("Created Job {ns}/{job_name} (image {image})"));
        let pods = context.pods();
        let mut pod = WorkPod {
            pods: pods.clone(),
            pod: String::new(),
            jobs,
            job: job_name.clone(),
        };
        let events: Api<Event> = Api::namespaced(context.target.client.clone(), &ns);
        let started = pod_wait::wait(
            &pods,
            &events,
            &job_name,
            &job_uid,
            &pod_wait::config_hint(&context.storage),
            args.pod_timeout,
            progress,
        )
        .await;
        match started {
            Ok(name) => pod.pod = name,
            Err(e) => {
                pod.delete(&ns, progress).await;
                return Err(e);
            }
        }
        let checked = preflight::check(&pods, &pod.pod, &image, tools, &[]).await;
        if let Err(e) = checked {
            pod.delete(&ns, progress).await;
            return Err(e);
        }
        Ok(pod)
    }

    /// Deletes the Job; a failure is a warning (the Job's TTL and deadline clean up).
    pub async fn delete(&self, ns: &str, progress: &mut Progress) {
        match self
            .jobs
            .delete(&self.job, &DeleteParams::background())
            .await
        {
            Ok(_) => progress.note(&format!("Deleted Job {ns}/{}", self.job)),
            Err(e) => progress.note(&format!(
                "warning: could not delete Job {ns}/{} ({}); Kubernetes removes it {}s after it ends",
                self.job,
                Error::api("delete", "jobs.batch", Some(ns), e),
                job::TTL_AFTER_FINISHED
            )),
        }
    }
}
