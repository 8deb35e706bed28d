//! `init`: a CelldFleet from flags, checked with the admission rules, printed or applied.

pub mod apply;
pub mod args;
pub mod build;
pub mod hints;
pub mod storage_warning;

pub use args::InitArgs;

use crate::cluster::kubeconfig;
use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::Result;
use crate::text::output;

/// Runs `init`.
pub async fn run(cluster: &ConnectArgs, args: &InitArgs) -> Result<u8> {
    if args.apply {
        let target = kubeconfig::connect(cluster).await?;
        let built = build::build(args, Some(&target.namespace))?;
        let outcome = apply::apply(&target, &built, args.force_conflicts).await?;
        output::print(&format!("{}\n", apply::line(&args.name, outcome)))?;
        for warning in storage_warning::check(&target, &built.fleet).await {
            eprintln!("{warning}");
        }
    } else {
        let namespace = kubeconfig::namespace_offline(cluster).await;
        let built = build::build(args, namespace.as_deref())?;
        output::print(&output::serialize(&built.document, args.output)?)?;
    }
    Ok(0)
}
