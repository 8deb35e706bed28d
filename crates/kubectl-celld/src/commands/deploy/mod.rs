//! `deploy`: publish a Worker to a fleet's bucket prefix from a short-lived pod in the fleet's
//! namespace, then make every ready node adopt it at once; or, as a fan-out, publish one build
//! to many fleets.
//!
//! Steps, for each fleet ([`pipeline`]): resolve the fleet's storage exactly as the operator
//! does; refuse a fleet whose Worker comes from spec.source (unless it is suspended, or
//! `--force`); create the deploy Job; wait for its pod; stream the directory in as a tar (or use
//! the source baked into `--image` at /app); run `celld deploy` there with the fleet's bucket,
//! endpoint and region; `POST /reload` to each ready node; wait until the operator reports every
//! ready node serving the new version; delete the Job.
//!
//! `--fleet` deploys to one fleet with celld's output streamed live ([`single`]); `--fleets` and
//! `--selector` deploy to many ([`fan_out`]); `--selector` with `--waves` and `--image` creates
//! a CelldRollout instead, which the operator ships to the fleets in waves ([`rollout`]).

pub mod archive;
pub mod args;
pub mod celld_run;
pub mod fan_out;
pub mod fleet_result;
pub mod pipeline;
pub mod python_gate;
pub mod results_table;
pub mod rollout;
pub mod single;
pub mod sourced;
pub mod storage_text;
pub mod targets;
pub mod upload;
pub mod vars;

use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::Result;
use targets::Selection;

pub use args::{DeployArgs, deploy_image, fleet_flag};
pub use single::interrupted_note;

/// Runs `deploy`; returns the process exit code.
pub async fn run(cluster: &ConnectArgs, args: DeployArgs) -> Result<u8> {
    match targets::selection(&args)? {
        Selection::One(fleet) => single::run(cluster, args, fleet).await,
        Selection::FanOut(fan_out) => fan_out::run(cluster, args, fan_out).await,
        Selection::Rollout(request) => rollout::run(cluster, *request, args.dry_run).await,
    }
}
