//! The `deploy` command line `preview create` runs against the preview's fleet: the deploy
//! flags it takes ([`DeployFlags`]) passed on, `--fleet` the preview's name, and `--no-wait`
//! unless it waits. It is parsed by `deploy`'s own flags, so what it leaves out takes deploy's
//! defaults.

use crate::commands::deploy::DeployArgs;
use crate::error::{Error, Result};
use clap::{Args, FromArgMatches};
use std::path::Path;
use std::time::Duration;

/// The flags of `preview create` passed on to `deploy`.
#[derive(Debug, Args)]
pub struct DeployFlags {
    /// Deploy from this image, which holds the Worker source at /app (and celld, esbuild,
    /// curl), instead of uploading DIR
    #[arg(long, value_name = "IMAGE", conflicts_with = "dir")]
    pub image: Option<String>,

    /// Image of the deploy pod when uploading DIR, as for deploy [default: the deployer of the
    /// fleet's celld version]
    #[arg(long, value_name = "IMAGE", conflicts_with = "image")]
    pub deployer_image: Option<String>,

    /// Merge the keys of this Secret (in the namespace) into the Worker's vars, in the deploy
    /// pod; repeatable
    #[arg(long, value_name = "NAME")]
    pub vars_from_secret: Vec<String>,

    /// Keep the deploy Job and its pod (for inspection) instead of deleting them
    #[arg(long)]
    pub keep_job: bool,

    /// Do not ask the nodes to reload; they adopt the new version within 30s
    #[arg(long)]
    pub no_reload: bool,

    /// Longest time the deploy pod lives [default: deploy's, 30m]
    #[arg(long, value_name = "DURATION", value_parser = crate::text::parse::duration)]
    pub timeout: Option<Duration>,

    /// How long to wait for the deploy pod to start [default: deploy's, 5m]
    #[arg(long, value_name = "DURATION", value_parser = crate::text::parse::duration)]
    pub pod_timeout: Option<Duration>,
}

/// A duration as deploy's flags read it.
fn duration(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// The words after `kubectl celld` that deploy `dir` (or `flags.image`) to fleet `fleet`,
/// waiting for every ready node within `wait` when given.
pub fn words(
    fleet: &str,
    dir: Option<&Path>,
    flags: &DeployFlags,
    wait: Option<Duration>,
) -> Vec<String> {
    let mut w = vec!["deploy".to_string()];
    if let Some(dir) = dir {
        w.push(dir.display().to_string());
    }
    w.extend(["--fleet".to_string(), fleet.to_string()]);
    let mut flag = |name: &str, value: Option<String>| {
        if let Some(value) = value {
            w.extend([format!("--{name}"), value]);
        }
    };
    flag("image", flags.image.clone());
    flag("deployer-image", flags.deployer_image.clone());
    for secret in &flags.vars_from_secret {
        flag("vars-from-secret", Some(secret.clone()));
    }
    flag("timeout", flags.timeout.map(duration));
    flag("pod-timeout", flags.pod_timeout.map(duration));
    flag("wait-timeout", wait.map(duration));
    if flags.keep_job {
        w.push("--keep-job".to_string());
    }
    if flags.no_reload {
        w.push("--no-reload".to_string());
    }
    if wait.is_none() {
        w.push("--no-wait".to_string());
    }
    w
}

/// `deploy`'s arguments from `words` (from [`words`]).
pub fn parse(words: &[String]) -> Result<DeployArgs> {
    let command = DeployArgs::augment_args(clap::Command::new("deploy"));
    command
        .try_get_matches_from(words)
        .and_then(|matches| DeployArgs::from_arg_matches(&matches))
        .map_err(|e| {
            Error::Usage(format!(
                "the deploy of the preview (kubectl celld {}) cannot run: {}",
                words.join(" "),
                e.render().to_string().trim()
            ))
        })
}
