//! `logs`: the logs of every node of a fleet (or of the fleets `-l` and `-A` pick) at once,
//! each line prefixed with its pod.

pub mod follow;
pub mod selection;
pub mod stream;

use crate::cluster::kubeconfig;
use crate::cluster::kubeconfig::ConnectArgs;
use crate::error::{Error, Result};
use clap::Args;
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use selection::Selection;
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
  kubectl celld logs web --since 1h --tail -1 --timestamps

  # Every fleet labelled team=web in the namespace; every fleet of the cluster
  kubectl celld logs -l team=web -f
  kubectl celld logs -A --tail 1",
    override_usage = "kubectl celld logs [OPTIONS] <FLEET>\n       \
                      kubectl celld logs [OPTIONS] -l <SELECTOR> [-A]\n       \
                      kubectl celld logs [OPTIONS] -A"
)]
pub struct LogsArgs {
    /// The fleet whose node logs to print (or pick fleets with -l or -A)
    #[arg(
        value_name = "FLEET",
        add = crate::cluster::complete::fleets(),
        required_unless_present_any = ["selector", "all_namespaces"]
    )]
    pub fleet: Option<String>,

    /// The fleets whose labels match this selector (e.g. team=web,tier!=canary), instead of FLEET
    #[arg(short = 'l', long, value_name = "SELECTOR", conflicts_with = "fleet")]
    pub selector: Option<String>,

    /// The fleets of all namespaces (with -l: those that match); lines are prefixed
    /// [namespace/pod]
    #[arg(short = 'A', long, conflicts_with = "fleet")]
    pub all_namespaces: bool,

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
    #[arg(long, value_name = "DURATION", value_parser = crate::text::parse::duration)]
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

/// Refuses a `-c` container that none of the pods has, naming the ones they have; `fleets`
/// is what the message calls the pods' fleets (`fleet apps/web`).
pub fn check_container(pods: &[Pod], asked: &str, fleets: &str) -> Result<()> {
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
        "container '{asked}' is not in the node pods of {fleets}; valid containers: {}; pick one with -c {}",
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
            namespace_prefix: self.all_namespaces,
        }
    }
}

/// Runs `logs`.
pub async fn run(cluster: &ConnectArgs, args: LogsArgs) -> Result<u8> {
    let target = kubeconfig::connect(cluster).await?;
    let selection = match &args.fleet {
        Some(fleet) => Selection::one(&target, fleet).await?,
        None => Selection::matching(&target, args.selector.as_deref(), args.all_namespaces).await?,
    };
    if selection.is_empty() {
        eprintln!("{}", selection.none_found());
        return Ok(0);
    }
    let options = args.options();
    let list = selection.node_pods(&target).await?;
    if let Some(asked) = &args.container {
        check_container(&list, asked, &selection.describe())?;
    }

    if args.follow {
        let (tx, rx) = mpsc::channel(1024);
        let printer = tokio::spawn(print_lines(rx));
        eprintln!(
            "Following the logs of {}; pods that start later are picked up (Ctrl-C to stop)",
            selection.describe()
        );
        let result = follow::follow(&target, &selection, options, tx).await;
        let _ = printer.await;
        return result.map(|()| 0);
    }

    if list.is_empty() {
        eprintln!(
            "{} {} no node pods (see: {})",
            capitalized(&selection.describe()),
            if selection.fleets.len() == 1 {
                "has"
            } else {
                "have"
            },
            selection.status_command()
        );
        return Ok(0);
    }
    let fetches = list.into_iter().map(|pod| {
        let (client, o) = (target.client.clone(), options.clone());
        async move {
            let (tx, mut rx) = mpsc::channel(1024);
            let name = stream::shown_name(&pod, &o);
            let reading = async {
                let r = stream::pump(&client, &pod, &o, &tx).await;
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
            (name, pod.metadata.namespace.clone(), result, lines)
        }
    });
    let mut results = futures::stream::iter(fetches).buffered(8);
    let mut failed = 0;
    let mut out = tokio::io::stdout();
    while let Some((name, ns, result, lines)) = results.next().await {
        let mut text = String::new();
        for l in &lines {
            text.push_str(&stream::prefixed(l));
            text.push('\n');
        }
        write(&mut out, &text).await?;
        if let Err(e) = result {
            failed += 1;
            eprintln!(
                "[{name}] cannot read the log: {}",
                log_error(e, ns.as_deref().unwrap_or_default())
            );
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

fn capitalized(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn log_error(e: kube::Error, ns: &str) -> String {
    match crate::error::status_code(&e) {
        Some(403) => Error::api("get", "pods/log", Some(ns), e).to_string(),
        _ => match e {
            kube::Error::Api(s) => s.message,
            other => crate::error::kube_error::describe(&other),
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
