//! The flags of `deploy`: one fleet (`--fleet`), a fan-out to many (`--fleets`,
//! `--selector`), or a rollout in waves (`--selector` with `--waves`), and how each deploy runs.

use super::rollout::body::{self, Layout};
use super::rollout::waves::{self, Waves};
use crate::cluster::adoption::WaitArgs;
use crate::error::{Error, Result};
use crate::pod::job;
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Fleets a fan-out deploys to at the same time unless `--concurrency` says otherwise.
pub const DEFAULT_CONCURRENCY: u16 = 4;

/// Most fleets a fan-out deploys to at the same time (each one is a deploy pod and its
/// `pods/exec` streams).
pub const MAX_CONCURRENCY: u16 = 32;

/// `deploy`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # Upload ./my-worker (skipping .git, node_modules and what .celldignore lists) and deploy it
  kubectl celld deploy ./my-worker --fleet web -n apps

  # Deploy the source baked into an image at /app; no directory needed
  kubectl celld deploy --image registry.example.com/web-src:1.2.0 --fleet web

  # Check the project builds and uploads, without publishing
  kubectl celld deploy ./my-worker --fleet web --dry-run

  # Keep the deploy pod for inspection; do not ask the nodes to reload
  kubectl celld deploy ./my-worker --fleet web --keep-job --no-reload

  # Merge the keys of Secret web-vars into the Worker's vars (values never printed)
  kubectl celld deploy ./my-worker --fleet web --vars-from-secret web-vars

  # A fleet with spec.source is published by the operator: suspend that first, then deploy
  kubectl annotate celldfleet web platform.celld.dev/source-suspended=\"hotfix by hand\"
  kubectl celld deploy ./hotfix --fleet web

  # Fan-out: pack once, publish to every fleet labelled team=payments, 8 at a time
  kubectl celld deploy ./my-worker --selector team=payments -A --concurrency 8

  # Fan-out to named fleets (NAME in the namespace of -n, or NAMESPACE/NAME)
  kubectl celld deploy ./my-worker --fleets pay-eu,pay-us,billing/pay-apac

  # List the fan-out's targets and their storage; create nothing
  kubectl celld deploy ./my-worker --selector team=payments --dry-run

  # A rollout: the operator ships an image to the fleets labelled app=web in waves, one fleet,
  # then up to a tenth, then the rest, each wave baking 10 minutes before the next
  kubectl celld deploy --selector app=web --waves 1,10%,100% --bake 10m \\
    --image registry.example.com/web-worker:1.4.2@sha256:<digest> -n tenants

  # The rollout's plan: each wave's fleets, the fleets it leaves alone and why; create nothing
  kubectl celld deploy --selector app=web --waves 1,10%,100% --image IMAGE --dry-run",
    override_usage = "kubectl celld deploy [OPTIONS] --fleet <FLEET> [DIR]\n       \
        kubectl celld deploy [OPTIONS] --selector <SELECTOR> [DIR]\n       \
        kubectl celld deploy [OPTIONS] --fleets <FLEET,...> [DIR]\n       \
        kubectl celld deploy [OPTIONS] --selector <SELECTOR> --waves <WAVES> --image <IMAGE>"
)]
pub struct DeployArgs {
    /// Worker project directory (with wrangler.jsonc or wrangler.json) to upload
    #[arg(
        value_name = "DIR",
        required_unless_present_any = ["image", "waves"],
        conflicts_with = "image"
    )]
    pub dir: Option<PathBuf>,

    /// Fleet to deploy to
    #[arg(
        long,
        value_name = "FLEET",
        required_unless_present_any = ["stray_fleet", "fleets", "selector"],
        add = crate::cluster::complete::fleets()
    )]
    pub fleet: Option<String>,

    /// A second positional argument: a fleet given without --fleet (refused with a hint)
    #[arg(value_name = "FLEET", hide = true)]
    pub stray_fleet: Option<String>,

    /// Fan-out: deploy one build to each of these fleets (comma-separated; NAME in the
    /// namespace of -n, or NAMESPACE/NAME)
    #[arg(
        long,
        value_name = "FLEET,...",
        value_delimiter = ',',
        conflicts_with_all = ["fleet", "selector"]
    )]
    pub fleets: Vec<String>,

    /// Fan-out: deploy one build to every fleet whose labels match this selector (e.g.
    /// team=payments,tier!=canary), in the namespace of -n or, with -A, in every namespace.
    /// With --waves: the fleets of the rollout, in the namespace of -n
    #[arg(short = 'l', long, value_name = "SELECTOR", conflicts_with = "fleet")]
    pub selector: Option<String>,

    /// Rollout: instead of writing every fleet at once, create (or update) a CelldRollout that
    /// the operator ships to the fleets of --selector in waves, each passing its gates before
    /// the next: how far each wave goes, a number of fleets or a percentage counting the waves
    /// before (1,10%,100% is one fleet, then up to a tenth, then the rest). Needs --image
    #[arg(
        long,
        value_name = "WAVES",
        value_parser = waves::parse,
        requires = "selector",
        conflicts_with_all = [
            "fleet", "fleets", "all_namespaces", "concurrency", "deployer_image",
            "vars_from_secret", "keep_job", "no_reload", "force", "timeout", "pod_timeout",
            "wait_timeout",
        ]
    )]
    pub waves: Option<Waves>,

    /// Rollout: how long each wave's fleets must stay healthy once they serve the new version,
    /// before the next wave starts, from 0s to 24h [default: 5m]
    #[arg(long, value_name = "DURATION", value_parser = body::parse_bake, requires = "waves", conflicts_with_all = ["fleet", "fleets"])]
    pub bake: Option<String>,

    /// Rollout: the CelldRollout's name [default: the last part of the image's repository,
    /// e.g. web-worker]; deploying again under the same name ships the new image as its next
    /// revision
    #[arg(long, value_name = "NAME", value_parser = body::parse_name, requires = "waves", conflicts_with_all = ["fleet", "fleets"])]
    pub name: Option<String>,

    /// Rollout: how --image holds the Worker project: deployer, as deploy --image takes it (the
    /// deployer with the project at /app); volume, the project alone at the image's root (the
    /// operator mounts it into the deployer of each fleet's celld release; Kubernetes 1.35 or
    /// later)
    #[arg(
        long,
        value_name = "LAYOUT",
        value_enum,
        default_value_t = Layout::Deployer,
        requires = "waves",
        conflicts_with_all = ["fleet", "fleets"]
    )]
    pub image_layout: Layout,

    /// Fan-out with --selector: the fleets of every namespace
    #[arg(short = 'A', long, requires = "selector", conflicts_with_all = ["fleet", "fleets"])]
    pub all_namespaces: bool,

    /// Fan-out: how many fleets are deployed at the same time (1 to 32)
    #[arg(
        long,
        value_name = "N",
        default_value_t = DEFAULT_CONCURRENCY,
        value_parser = clap::value_parser!(u16).range(1..=i64::from(MAX_CONCURRENCY))
    )]
    pub concurrency: u16,

    /// Deploy from this image, which holds the Worker source at /app (and celld, esbuild, curl),
    /// instead of uploading DIR. With --waves: the image the rollout ships (see --image-layout)
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,

    /// Image of the deploy pod when uploading DIR: celld, esbuild, curl and celld-bucket, no
    /// source [default: this release's deployer built on the fleet's celld version,
    /// ghcr.io/anthaathi/celld-operator-deployer:v<plugin>-celld-v<version>, or without the
    /// suffix (the default image's celld) when the fleet's version is unknown]
    #[arg(long, value_name = "IMAGE", conflicts_with = "image")]
    pub deployer_image: Option<String>,

    /// Merge the keys of this Secret (in the fleet's namespace) into the Worker's vars, in the
    /// deploy pod; repeatable. A key already in the config's vars takes the Secret's value
    #[arg(long, value_name = "NAME")]
    pub vars_from_secret: Vec<String>,

    /// Keep the deploy Job and its pod (for inspection) instead of deleting them
    #[arg(long)]
    pub keep_job: bool,

    /// Do not ask the nodes to reload; they adopt the new version within 30s
    #[arg(long)]
    pub no_reload: bool,

    /// One fleet: run celld deploy --dry-run, which builds and checks and publishes nothing
    /// (implies --no-reload). Fan-out: list the fleets and their storage, and which would be
    /// refused; create nothing. Rollout: print each wave's fleets, the fleets left alone and
    /// the CelldRollout; create nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Deploy to a fleet whose Worker comes from spec.source, which is refused otherwise: the
    /// operator publishes the source again over the deploy (driftPolicy Correct) or reports it
    /// as drift (Report), unless publishing from the source is suspended. Also deploys a Python
    /// Worker to nodes whose celld version their image tag does not tell (a known release
    /// older than v0.6.1 is refused even so)
    #[arg(long)]
    pub force: bool,

    /// Longest time the deploy pod lives (the Job's deadline)
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = crate::text::parse::duration)]
    pub timeout: Duration,

    /// How long to wait for the deploy pod to start
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = crate::text::parse::duration)]
    pub pod_timeout: Duration,

    /// The wait for every ready node to serve the new version.
    #[command(flatten)]
    pub wait: WaitArgs,
}

/// The fleet of `--fleet`; a fleet given as a second argument is refused with the command
/// that was meant.
pub fn fleet_flag(args: &DeployArgs) -> Result<String> {
    match (&args.fleet, &args.stray_fleet) {
        (Some(fleet), None) => Ok(fleet.clone()),
        (_, Some(stray)) => Err(Error::Usage(format!(
            "unexpected argument '{stray}': the fleet is named with --fleet; did you mean --fleet {stray}? (kubectl celld deploy {} --fleet {stray})",
            source_word(args)
        ))),
        (None, None) => Err(Error::Usage(
            "the fleet to deploy to is missing: add --fleet FLEET".to_string(),
        )),
    }
}

/// What the deploy publishes, as a command line shows it: DIR, or `--image IMAGE`.
pub fn source_word(args: &DeployArgs) -> String {
    match (&args.dir, &args.image) {
        (Some(dir), _) => dir.display().to_string(),
        (None, Some(image)) => format!("--image {image}"),
        (None, None) => "DIR".to_string(),
    }
}

/// The image of the deploy pod: `--image`, `--deployer-image`, or the deployer of the fleet's
/// celld version (`fleet_image`).
pub fn deploy_image(args: &DeployArgs, fleet_image: &str) -> String {
    args.image
        .clone()
        .or_else(|| args.deployer_image.clone())
        .unwrap_or_else(|| job::deployer_for(fleet_image))
}
