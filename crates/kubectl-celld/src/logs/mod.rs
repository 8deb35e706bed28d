//! `logs`: the logs of every node of a fleet at once, each line prefixed with its pod.

pub mod follow;
pub mod stream;

use crate::cluster_flags::Globals;
use crate::error::{Error, Result};
use crate::{fleet_context, kubeconfig};
use clap::Args;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use std::time::Duration;
use stream::{Line, Options};
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// `logs`.
#[derive(Debug, Args)]
#[command(
    after_help = "\
Examples:
  # The last 10 lines of every node
  kubectl celld logs web

  # Follow every node, including nodes that start later; Ctrl-C ends it
  kubectl celld logs web -f

  # Everything of the last hour, with timestamps
  kubectl celld logs web --since 1h --tail -1 --timestamps",
    override_usage = "kubectl celld logs [OPTIONS] <FLEET>"
)]
pub struct LogsArgs {
    /// The fleet whose node logs to print
    #[arg(value_name = "FLEET", add = crate::completion::values::fleets())]
    pub fleet: String,

    /// Keep streaming, and pick up pods that start later
    #[arg(short = 'f', long)]
    pub follow: bool,

    /// Lines of recent log per pod, -1 for all (pods that start while following show all)
    #[arg(
        long,
        value_name = "LINES",
        default_value_t = 10,
        allow_negative_numbers = true,
        value_parser = tail_lines
    )]
    pub tail: i64,

    /// Only lines newer than this, e.g. 30s, 5m, 2h
    #[arg(long, value_name = "DURATION", value_parser = crate::parse::duration)]
    pub since: Option<Duration>,

    /// Start each line with its timestamp
    #[arg(long)]
    pub timestamps: bool,

    /// Container to read (default: the pod's only container, else celld)
    #[arg(short = 'c', long, value_name = "NAME")]
    pub container: Option<String>,

    /// Logs of the previous (crashed) container instance
    #[arg(short = 'p', long, conflicts_with = "follow")]
    pub previous: bool,
}

/// `--tail`: -1 (all lines) or a count of lines, as in kubectl.
pub fn tail_lines(value: &str) -> std::result::Result<i64, String> {
    match value.trim().parse::<i64>() {
        Ok(n) if n >= -1 => Ok(n),
        Ok(_) => Err("use -1 for all lines, or 0 or more lines".to_string()),
        Err(_) => Err("not a number of lines: use -1 for all lines, or 0 or more".to_string()),
    }
}

/// Refuses a `-c` container that none of the pods has, naming the ones they have.
pub fn check_container(pods: &[Pod], asked: &str, fleet: &str) -> Result<()> {
    let mut names: Vec<String> = Vec::new();
    for pod in pods {
        let Some(spec) = &pod.spec else { continue };
        for c in spec
            .containers
            .iter()
            .chain(spec.init_containers.iter().flatten())
        {
            if c.name == asked {
                return Ok(());
            }
            if !names.contains(&c.name) {
                names.push(c.name.clone());
            }
        }
    }
    if names.is_empty() {
        return Ok(());
    }
    Err(Error::Usage(format!(
        "container '{asked}' is not in the node pods of fleet {fleet}; valid containers: {}; pick one with -c {}",
        names.join(", "),
        names[0]
    )))
}

impl LogsArgs {
    fn options(&self) -> Options {
        Options {
            follow: self.follow,
            tail: (self.tail >= 0).then_some(self.tail),
            since_seconds: self
                .since
                .map(|d| i64::try_from(d.as_secs().max(1)).unwrap_or(i64::MAX)),
            since_time: None,
            timestamps: self.timestamps,
            container: self.container.clone(),
            previous: self.previous,
        }
    }
}

/// Runs `logs`.
pub async fn run(globals: &Globals, args: LogsArgs) -> Result<u8> {
    let target = kubeconfig::connect(globals).await?;
    fleet_context::find(&target, &args.fleet).await?;
    let ns = target.namespace.clone();
    let pods: Api<Pod> = Api::namespaced(target.client.clone(), &ns);
    let selector = fleet_context::node_selector(&args.fleet);
    let options = args.options();

    let list = fleet_context::node_pods(&target.client, Some(&ns), &selector).await?;
    if let Some(asked) = &args.container {
        check_container(&list, asked, &args.fleet)?;
    }

    if args.follow {
        let (tx, rx) = mpsc::channel(1024);
        let printer = tokio::spawn(print_lines(rx));
        eprintln!(
            "Following the logs of fleet {ns}/{}; pods that start later are picked up (Ctrl-C to stop)",
            args.fleet
        );
        let result = follow::follow(pods, selector, options, tx).await;
        let _ = printer.await;
        return result.map(|()| 0);
    }

    if list.is_empty() {
        eprintln!(
            "Fleet {ns}/{} has no node pods (see: kubectl celld status {} -n {ns})",
            args.fleet, args.fleet
        );
        return Ok(0);
    }
    let fetches = list.into_iter().map(|pod| {
        let (api, o) = (pods.clone(), options.clone());
        async move {
            let (tx, mut rx) = mpsc::channel(1024);
            let name = pod.metadata.name.clone().unwrap_or_default();
            let reading = async {
                let r = stream::pump(&api, &pod, &o, &tx).await;
                drop(tx);
                r
            };
            let collecting = async {
                let mut lines = Vec::new();
                while let Some(l) = rx.recv().await {
                    lines.push(l);
                }
                lines
            };
            let (result, lines) = tokio::join!(reading, collecting);
            (name, result, lines)
        }
    });
    let mut results = futures::stream::iter(fetches).buffered(8);
    let mut failed = 0;
    let mut out = tokio::io::stdout();
    while let Some((name, result, lines)) = results.next().await {
        let mut text = String::new();
        for l in &lines {
            text.push_str(&stream::prefixed(l));
            text.push('\n');
        }
        write(&mut out, &text).await?;
        if let Err(e) = result {
            failed += 1;
            eprintln!("[{name}] cannot read the log: {}", log_error(e, &ns));
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

fn log_error(e: kube::Error, ns: &str) -> String {
    match crate::error::status_code(&e) {
        Some(403) => Error::api("get", "pods/log", Some(ns), e).to_string(),
        _ => match e {
            kube::Error::Api(s) => s.message,
            other => crate::kube_error::describe(&other),
        },
    }
}

async fn write(out: &mut tokio::io::Stdout, text: &str) -> Result<()> {
    match out.write_all(text.as_bytes()).await {
        Ok(()) => out.flush().await.map_err(|e| Error::Output(e.to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(Error::Output(e.to_string())),
    }
}

/// Prints lines as they come; flushes whenever no more are waiting.
async fn print_lines(mut rx: mpsc::Receiver<Line>) {
    let mut out = tokio::io::stdout();
    while let Some(line) = rx.recv().await {
        let mut text = stream::prefixed(&line);
        text.push('\n');
        while let Ok(more) = rx.try_recv() {
            text.push_str(&stream::prefixed(&more));
            text.push('\n');
        }
        if out.write_all(text.as_bytes()).await.is_err() || out.flush().await.is_err() {
            // stdout is gone (a closed pipe): nothing left to do.
            std::process::exit(0);
        }
    }
}
