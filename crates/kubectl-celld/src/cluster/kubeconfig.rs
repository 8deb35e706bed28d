//! Connecting to a cluster the way kubectl does: `--kubeconfig`, else every file in
//! `KUBECONFIG` merged, else `~/.kube/config`, else the in-cluster service account; `--context`,
//! `--cluster` and `--user` pick entries; the namespace is `-n`, else the context's, else
//! `default`. Exec and OIDC auth plugins named in the kubeconfig work as in kubectl.

use crate::error::{Error, Result};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};
use std::path::PathBuf;
use std::time::Duration;

/// What connecting takes: the cluster flags as plain values (the command line's cluster flags
/// convert into it; shell completion reads it from the words typed so far).
#[derive(Debug, Clone, Default)]
pub struct ConnectArgs {
    /// The kubeconfig file, instead of `KUBECONFIG` and `~/.kube/config`.
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context, instead of the current one.
    pub context: Option<String>,
    /// The kubeconfig cluster, instead of the context's.
    pub cluster: Option<String>,
    /// The kubeconfig user, instead of the context's.
    pub user: Option<String>,
    /// The namespace, instead of the context's (else `default`).
    pub namespace: Option<String>,
    /// The limit of one server request.
    pub request_timeout: Option<RequestTimeout>,
    /// The user to impersonate.
    pub as_user: Option<String>,
    /// The groups to impersonate (with [`ConnectArgs::as_user`]).
    pub as_group: Vec<String>,
    /// A bearer token, instead of the kubeconfig's credentials.
    pub token: Option<String>,
    /// The API server URL, instead of the kubeconfig's.
    pub server: Option<String>,
    /// Whether the server's certificate goes unchecked.
    pub insecure_skip_tls_verify: bool,
    /// A certificate authority file, instead of the kubeconfig's.
    pub certificate_authority: Option<PathBuf>,
}

/// `--request-timeout`: a limit, or none (`0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTimeout(pub Option<Duration>);

/// A client and the namespace commands act in.
#[derive(Clone)]
pub struct Target {
    /// The API client.
    pub client: Client,
    /// The namespace from `-n`, the context, or `default`.
    pub namespace: String,
}

/// Where the configuration came from.
enum Source {
    File(Box<Kubeconfig>, Option<PathBuf>),
    InCluster,
}

fn options(args: &ConnectArgs) -> KubeConfigOptions {
    KubeConfigOptions {
        context: args.context.clone(),
        cluster: args.cluster.clone(),
        user: args.user.clone(),
    }
}

fn home_kubeconfig() -> Option<PathBuf> {
    let home = std::env::var_os("HOME").filter(|h| !h.is_empty())?;
    let path = PathBuf::from(home).join(".kube").join("config");
    path.is_file().then_some(path)
}

fn source(args: &ConnectArgs) -> Result<Source> {
    let read = |path: PathBuf| {
        Kubeconfig::read_from(&path)
            .map(|k| Source::File(Box::new(k), Some(path.clone())))
            .map_err(|source| Error::Kubeconfig {
                path: Some(path),
                source: Box::new(source),
            })
    };
    if let Some(path) = &args.kubeconfig {
        return read(path.clone());
    }
    if let Some(k) = from_env()? {
        return Ok(Source::File(Box::new(k), None));
    }
    match home_kubeconfig() {
        Some(path) => read(path),
        None if in_cluster_available() => Ok(Source::InCluster),
        None => Err(Error::NoKubeconfig),
    }
}

/// The files listed in `KUBECONFIG`, merged (the first to set a value wins). As in kubectl,
/// files that do not exist are skipped; None when the variable names no existing file.
fn from_env() -> Result<Option<Kubeconfig>> {
    let Some(value) = std::env::var_os("KUBECONFIG") else {
        return Ok(None);
    };
    let mut merged: Option<Kubeconfig> = None;
    for path in std::env::split_paths(&value).filter(|p| p.is_file()) {
        let wrap = |source| Error::Kubeconfig {
            path: Some(path.clone()),
            source: Box::new(source),
        };
        let next = Kubeconfig::read_from(&path).map_err(wrap)?;
        merged = Some(match merged {
            Some(m) => m.merge(next).map_err(wrap)?,
            None => next,
        });
    }
    Ok(merged)
}

fn in_cluster_available() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
}

async fn config(args: &ConnectArgs) -> Result<Config> {
    let config = from_source(args).await?;
    apply_flags(config, args)
}

/// The server URL of `--server`: kubectl takes `HOST:PORT` as `https://HOST:PORT`.
fn server_url(server: &str) -> Result<http::Uri> {
    let full = if server.contains("://") {
        server.to_string()
    } else {
        format!("https://{server}")
    };
    full.parse().map_err(|e| {
        Error::Usage(format!(
            "--server '{server}' is not a URL ({e}): write it like https://HOST:PORT"
        ))
    })
}

/// The kubectl flags that override the kubeconfig: server, TLS, credentials, impersonation
/// and the per-request timeout.
pub fn apply_flags(mut config: Config, g: &ConnectArgs) -> Result<Config> {
    if let Some(server) = &g.server {
        config.cluster_url = server_url(server)?;
    }
    if g.insecure_skip_tls_verify && g.certificate_authority.is_some() {
        return Err(Error::Usage(
            "specifying a root certificates file with the insecure flag is not allowed: drop --insecure-skip-tls-verify or --certificate-authority".into(),
        ));
    }
    if g.insecure_skip_tls_verify {
        config.accept_invalid_certs = true;
        config.root_cert = None;
        config.root_cert_file = None;
    }
    if let Some(ca) = &g.certificate_authority {
        if !ca.is_file() {
            return Err(Error::Io {
                what: "reading the --certificate-authority file",
                path: ca.clone(),
                source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            });
        }
        config.root_cert = None;
        config.root_cert_file = Some(ca.clone());
    }
    if let Some(token) = &g.token {
        let auth = &mut config.auth_info;
        auth.token = Some(secrecy::SecretString::from(token.clone()));
        auth.token_file = None;
        auth.exec = None;
        auth.auth_provider = None;
        auth.username = None;
        auth.password = None;
    }
    if !g.as_group.is_empty() && g.as_user.is_none() {
        return Err(Error::Usage(
            "--as-group needs --as USER: Kubernetes impersonates groups only together with a user"
                .into(),
        ));
    }
    if let Some(user) = &g.as_user {
        config.auth_info.impersonate = Some(user.clone());
    }
    if !g.as_group.is_empty() {
        config.auth_info.impersonate_groups = Some(g.as_group.clone());
    }
    if let Some(RequestTimeout(limit)) = g.request_timeout {
        config.read_timeout = limit;
        config.write_timeout = limit;
        if limit.is_some() {
            config.connect_timeout = limit;
        }
    }
    Ok(config)
}

/// The configuration of the kubeconfig or the in-cluster service account, before the flags.
async fn from_source(args: &ConnectArgs) -> Result<Config> {
    match source(args)? {
        Source::File(kubeconfig, path) => {
            Config::from_custom_kubeconfig(*kubeconfig, &options(args))
                .await
                .map_err(|source| Error::Kubeconfig {
                    path,
                    source: Box::new(source),
                })
        }
        Source::InCluster => Config::incluster().map_err(|e| Error::InCluster(Box::new(e))),
    }
}

/// The context names of the kubeconfig `args` point at (none when it cannot be read, or in
/// a cluster).
pub fn contexts(args: &ConnectArgs) -> Vec<String> {
    match source(args) {
        Ok(Source::File(kubeconfig, _)) => {
            kubeconfig.contexts.into_iter().map(|c| c.name).collect()
        }
        _ => Vec::new(),
    }
}

/// Builds the client and picks the namespace.
pub async fn connect(args: &ConnectArgs) -> Result<Target> {
    let config = config(args).await?;
    let namespace = args
        .namespace
        .clone()
        .unwrap_or_else(|| config.default_namespace.clone());
    let client = Client::try_from(config).map_err(|e| Error::Client(Box::new(e)))?;
    Ok(Target { client, namespace })
}

/// The namespace commands would act in, without contacting the cluster: `-n`, else the
/// context's namespace, else `default`. None when no configuration can be read at all.
pub async fn namespace_offline(args: &ConnectArgs) -> Option<String> {
    if let Some(ns) = &args.namespace {
        return Some(ns.clone());
    }
    config(args).await.ok().map(|c| c.default_namespace)
}

/// The API server URL of the configuration, without contacting it. None when no configuration
/// can be read at all.
pub async fn server_offline(args: &ConnectArgs) -> Option<String> {
    config(args)
        .await
        .ok()
        .map(|c| c.cluster_url.to_string().trim_end_matches('/').to_string())
}
