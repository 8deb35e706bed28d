//! The cluster flags every command takes, with kubectl's names, meanings and defaults. They
//! convert into the plain [`ConnectArgs`] that connecting takes.

use super::kubeconfig::{ConnectArgs, RequestTimeout};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Flags every command takes, with kubectl's names and defaults.
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Cluster")]
pub struct Globals {
    /// Path to the kubeconfig file (default: the files in $KUBECONFIG, else ~/.kube/config, else
    /// the in-cluster service account)
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,

    /// Kubeconfig context to use (default: the current context)
    #[arg(long, global = true, value_name = "NAME", add = crate::cluster::complete::contexts())]
    pub context: Option<String>,

    /// Kubeconfig cluster to use instead of the context's
    #[arg(long, global = true, value_name = "NAME")]
    pub cluster: Option<String>,

    /// Kubeconfig user to use instead of the context's
    #[arg(long, global = true, value_name = "NAME")]
    pub user: Option<String>,

    /// Namespace of the fleet (default: the context's namespace, else default)
    #[arg(
        short = 'n',
        long,
        global = true,
        value_name = "NAMESPACE",
        add = crate::cluster::complete::namespaces()
    )]
    pub namespace: Option<String>,

    /// Time to wait for one server request before giving up (1s, 2m, 3h; 0 waits forever)
    #[arg(long, global = true, value_name = "DURATION", value_parser = request_timeout)]
    pub request_timeout: Option<RequestTimeout>,

    /// Username to impersonate for the operation
    #[arg(long = "as", global = true, value_name = "USER")]
    pub as_user: Option<String>,

    /// Group to impersonate for the operation (repeat for several)
    #[arg(long = "as-group", global = true, value_name = "GROUP")]
    pub as_group: Vec<String>,

    /// Bearer token for authentication to the API server
    #[arg(long, global = true, value_name = "TOKEN")]
    pub token: Option<String>,

    /// The address and port of the Kubernetes API server
    #[arg(short = 's', long, global = true, value_name = "URL")]
    pub server: Option<String>,

    /// Do not check the server's certificate (insecure)
    #[arg(long, global = true)]
    pub insecure_skip_tls_verify: bool,

    /// Path to a cert file for the certificate authority
    #[arg(long, global = true, value_name = "PATH")]
    pub certificate_authority: Option<PathBuf>,
}

impl From<&Globals> for ConnectArgs {
    fn from(globals: &Globals) -> Self {
        let Globals {
            kubeconfig,
            context,
            cluster,
            user,
            namespace,
            request_timeout,
            as_user,
            as_group,
            token,
            server,
            insecure_skip_tls_verify,
            certificate_authority,
        } = globals.clone();
        ConnectArgs {
            kubeconfig,
            context,
            cluster,
            user,
            namespace,
            request_timeout,
            as_user,
            as_group,
            token,
            server,
            insecure_skip_tls_verify,
            certificate_authority,
        }
    }
}

/// Parses `--request-timeout` as kubectl does: `0` for none, a bare number of seconds, or a
/// duration with a unit.
pub fn request_timeout(s: &str) -> Result<RequestTimeout, String> {
    let s = s.trim();
    if let Ok(secs) = s.parse::<u64>() {
        return Ok(RequestTimeout(
            (secs > 0).then(|| Duration::from_secs(secs)),
        ));
    }
    let d = crate::text::parse::duration(s)?;
    Ok(RequestTimeout((!d.is_zero()).then_some(d)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_timeouts_like_kubectl() {
        assert_eq!(request_timeout("0"), Ok(RequestTimeout(None)));
        assert_eq!(
            request_timeout("5"),
            Ok(RequestTimeout(Some(Duration::from_secs(5))))
        );
        assert_eq!(
            request_timeout("2m"),
            Ok(RequestTimeout(Some(Duration::from_secs(120))))
        );
        assert!(request_timeout("soon").is_err());
    }
}
