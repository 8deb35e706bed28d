//! `testenv-wire-deploy-double`: keeps the deploy pods of one namespace of the local control
//! plane wired to `celld-deploy-double`, so that `kubectl celld deploy` there runs the double for
//! `celld` (see [`celld_testkit::DeployDouble::serve`]), and, with `--agent`, `kubectl celld
//! history` and `rollback` there run the bucket agent `celld-bucket`. Runs until killed; the
//! no-Docker demo starts it in the background.

use std::path::PathBuf;
use std::process::ExitCode;

use celld_testkit::{DEPLOY_POD_SELECTOR, DeployDouble};
use clap::Parser;

/// Wires the deploy pods of a namespace of the local control plane to celld-deploy-double (a test
/// double of `celld deploy`): a kwok Exec rule per pod makes `kubectl exec POD -- celld ...` run
/// the double, with the pod's environment (its credentials Secret included).
#[derive(Debug, Parser)]
#[command(name = "testenv-wire-deploy-double", version)]
struct Args {
    /// Namespace whose deploy pods to wire
    #[arg(long, short = 'n')]
    namespace: String,

    /// Label selector of the deploy pods
    #[arg(long, default_value = DEPLOY_POD_SELECTOR)]
    selector: String,

    /// The celld-deploy-double binary
    #[arg(long, value_name = "PATH")]
    double: PathBuf,

    /// Directory for the pods' PATH (bin/) and working directories (work/<pod>/)
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,

    /// The bucket agent celld-bucket, put on the pods' PATH as in the deployer image (kubectl
    /// celld history and rollback run it)
    #[arg(long, value_name = "PATH")]
    agent: Option<PathBuf>,
}

async fn run(args: Args) -> celld_testkit::Result<()> {
    let double = DeployDouble::install(&args.dir, &args.double)?;
    if let Some(agent) = &args.agent {
        double.add_agent(agent)?;
    }
    let client = celld_testkit::client().await?;
    double
        .serve(&client, &args.namespace, &args.selector, |line| {
            println!("testenv-wire-deploy-double: {line}");
        })
        .await
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("testenv-wire-deploy-double: error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("testenv-wire-deploy-double: error: {e}");
            ExitCode::FAILURE
        }
    }
}
