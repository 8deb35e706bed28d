//! The command line of `celld-bucket`, and running it.

use crate::error::AgentError;
use crate::merge_vars::MergeVarsArgs;
use crate::store::Bucket;
use crate::wire::{Answer, Expect, Version};
use clap::{Args, Parser, Subcommand};

/// Reads and compare-and-swap writes of the fleet's bucket prefix (CELLD_BUCKET), with the
/// credentials of the environment, and the merge of mounted Secrets into a Worker's vars;
/// prints one JSON object. Run by kubectl celld history, rollback and deploy in a deploy pod of
/// the fleet.
#[derive(Debug, Parser)]
#[command(name = "celld-bucket", version)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The operations.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read an object: its body, version and time
    Get {
        /// Key under the bucket prefix, such as deploy/current.json
        key: String,
    },
    /// List every object under a key prefix
    List {
        /// Key prefix under the bucket prefix, such as deploy/
        prefix: String,
    },
    /// Write an object only if it is still as expected (compare-and-swap)
    Put(PutArgs),
    /// Merge the keys of mounted Secrets into the vars of a project's wrangler config
    MergeVars(MergeVarsArgs),
}

/// `put`.
#[derive(Debug, Args)]
pub struct PutArgs {
    /// Key under the bucket prefix
    pub key: String,
    /// The content (JSON)
    pub body: String,
    /// What the write expects.
    #[command(flatten)]
    pub expect: ExpectArgs,
}

/// Exactly one expectation of a write.
#[derive(Debug, Args)]
#[group(required = true, multiple = false)]
pub struct ExpectArgs {
    /// Write only if the object does not exist
    #[arg(long)]
    pub if_absent: bool,
    /// Write only if the object has this ETag (S3, Azure)
    #[arg(long, value_name = "ETAG")]
    pub if_etag: Option<String>,
    /// Write only if the object has this generation (GCS)
    #[arg(long, value_name = "GENERATION")]
    pub if_generation: Option<String>,
}

impl ExpectArgs {
    /// The expectation.
    pub fn expect(&self) -> Expect {
        match (&self.if_etag, &self.if_generation) {
            (Some(etag), _) => Expect::Version(Version::ETag(etag.clone())),
            (None, Some(g)) => Expect::Version(Version::Generation(g.clone())),
            (None, None) => Expect::Absent,
        }
    }
}

/// Runs `command`: against the bucket of the environment, or (`merge-vars`) on local files.
pub async fn run(command: &Command) -> Result<Answer, AgentError> {
    match command {
        Command::MergeVars(args) => args.run(),
        Command::Get { key } => Bucket::from_env()?.get(key).await,
        Command::List { prefix } => Bucket::from_env()?.list(prefix).await,
        Command::Put(put) => {
            Bucket::from_env()?
                .put_if(
                    &put.key,
                    put.body.clone().into_bytes(),
                    &put.expect.expect(),
                )
                .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn put_takes_exactly_one_expectation() {
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from(["celld-bucket", "put", "k", "{}", "--if-generation", "7"])
            .unwrap();
        let Command::Put(put) = cli.command else {
            panic!("put")
        };
        assert_eq!(
            put.expect.expect(),
            Expect::Version(Version::Generation("7".into()))
        );
        assert!(Cli::try_parse_from(["celld-bucket", "put", "k", "{}"]).is_err());
        assert!(
            Cli::try_parse_from([
                "celld-bucket",
                "put",
                "k",
                "{}",
                "--if-absent",
                "--if-etag",
                "e"
            ])
            .is_err()
        );
    }
}
