//! The command line: the same as `celld deploy [DIR] --bucket B [--endpoint E] [--region R]
//! [--dry-run] [--json]`, with the same environment fallbacks.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// What `--help` says first, so nobody mistakes the double for celld.
const ABOUT: &str = "celld-deploy-double: a TEST DOUBLE of `celld deploy`, for the local control plane only (NOT celld)";

const LONG_ABOUT: &str = "\
celld-deploy-double: a TEST DOUBLE of `celld deploy`, for the local control plane only (NOT celld).

It takes celld v0.4's deploy command line and writes to the bucket what celld deploy writes: the
modules under deploy/<script>/<version>/, a manifest.json, then with compare-and-swap
deploy/<script>/current.json and last the fleet pointer deploy/current.json. It does not bundle
(no esbuild): the project's .js, .mjs, .cjs, .ts, .mts and .wasm files are uploaded as they are.
It writes only to emulators on this machine: S3 at --endpoint http://127.0.0.1:PORT; gs:// and
az:// buckets at the GCS or Azure Blob emulator named by GOOGLE_BASE_URL or AZURE_STORAGE_ENDPOINT.

On the local control plane, `kubectl exec` of `celld` in a deploy pod runs it (see
testenv/README.md). Credentials come from the environment celld reads: AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY; GOOGLE_SERVICE_ACCOUNT_KEY; AZURE_STORAGE_ACCOUNT_NAME and
AZURE_STORAGE_ACCOUNT_KEY.";

/// `celld-deploy-double`.
#[derive(Debug, Parser)]
#[command(name = "celld-deploy-double", version, about = ABOUT, long_about = LONG_ABOUT)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands: only `deploy`.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Publish a Worker project to a bucket prefix as `celld deploy` does (test double: no
    /// bundling, local emulators only)
    Deploy(DeployArgs),
}

/// `deploy`.
#[derive(Debug, Args)]
#[command(after_help = "\
Test seam: with CELLD_DEPLOY_DOUBLE_HOLD_DIR=DIR the deploy stops before its compare-and-swap
write of deploy/current.json, writes DIR/held and waits until DIR/release exists.")]
pub struct DeployArgs {
    /// Worker project directory, with wrangler.jsonc or wrangler.json
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,

    /// Bucket and prefix to publish to: [s3://|gs://|az://]NAME[/PREFIX]
    #[arg(long, env = "CELLD_BUCKET", value_name = "BUCKET")]
    pub bucket: String,

    /// S3 endpoint URL (path-style); must be on this machine
    #[arg(long, env = "S3_ENDPOINT", value_name = "URL")]
    pub endpoint: Option<String>,

    /// Region [default: $AWS_DEFAULT_REGION, else us-east-1]
    #[arg(long, env = "AWS_REGION", value_name = "REGION")]
    pub region: Option<String>,

    /// Read and check the project and compute its version; upload and publish nothing
    #[arg(long)]
    pub dry_run: bool,

    /// Print the result as one JSON object on stdout (progress goes to stderr)
    #[arg(long)]
    pub json: bool,
}

impl DeployArgs {
    /// The region: `--region`, `$AWS_REGION`, `$AWS_DEFAULT_REGION`, else `us-east-1`.
    pub fn region(&self) -> String {
        self.region
            .clone()
            .filter(|r| !r.is_empty())
            .or_else(|| {
                std::env::var("AWS_DEFAULT_REGION")
                    .ok()
                    .filter(|r| !r.is_empty())
            })
            .unwrap_or_else(|| "us-east-1".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn parses_the_plugin_s_command_line() {
        let cli = Cli::try_parse_from([
            "celld",
            "deploy",
            "src",
            "--bucket",
            "s3://celld-test/p",
            "--endpoint",
            "http://127.0.0.1:9000",
            "--region",
            "us-east-1",
            "--dry-run",
        ])
        .unwrap();
        let Command::Deploy(args) = cli.command;
        assert_eq!(args.dir, PathBuf::from("src"));
        assert_eq!(args.bucket, "s3://celld-test/p");
        assert_eq!(args.endpoint.as_deref(), Some("http://127.0.0.1:9000"));
        assert_eq!(args.region(), "us-east-1");
        assert!(args.dry_run && !args.json);
    }

    #[test]
    fn help_says_it_is_a_test_double() {
        let help = Cli::command().render_long_help().to_string();
        assert!(help.starts_with("celld-deploy-double: a TEST DOUBLE of `celld deploy`, for the local control plane only (NOT celld)"), "{help}");
        Cli::command().debug_assert();
    }
}
