//! `celld-bucket merge-vars --project src --secret NAME=DIR...`: what `kubectl celld deploy
//! --vars-from-secret` runs in the deploy pod just before `celld deploy`. Its answer names the
//! keys merged, never a value.

use crate::error::AgentError;
use crate::vars::mounted;
use crate::wire::Answer;
use clap::Args;
use std::path::{Path, PathBuf};

/// `merge-vars`.
#[derive(Debug, Args)]
pub struct MergeVarsArgs {
    /// The Worker project directory, with wrangler.jsonc or wrangler.json
    #[arg(long, value_name = "DIR", default_value = "src")]
    pub project: PathBuf,

    /// A Secret's name and the directory it is mounted at (one file per key); repeat for more
    /// Secrets, merged in order
    #[arg(long = "secret", value_name = "NAME=DIR", required = true)]
    pub secrets: Vec<String>,
}

impl MergeVarsArgs {
    /// Each `--secret` as a name and a directory.
    pub fn secrets(&self) -> Result<Vec<(String, &Path)>, AgentError> {
        self.secrets
            .iter()
            .map(|s| match s.split_once('=') {
                Some((name, dir)) if !name.is_empty() && !dir.is_empty() => {
                    Ok((name.to_string(), Path::new(dir)))
                }
                _ => Err(AgentError::SecretArg(s.clone())),
            })
            .collect()
    }

    /// Merges, in place.
    pub fn run(&self) -> Result<Answer, AgentError> {
        let secrets = self.secrets()?;
        let (config, plan) = mounted::merge_project(&self.project, &secrets)?;
        Ok(Answer::VarsMerged {
            config,
            keys: plan.keys.into_iter().map(|(k, _)| k).collect(),
            overridden: plan.overridden,
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::{Cli, Command};
    use clap::Parser;

    #[test]
    fn parses_secrets_in_order() {
        let cli = Cli::try_parse_from([
            "celld-bucket",
            "merge-vars",
            "--secret",
            "a=vars/a",
            "--secret",
            "b.x=vars/b.x",
        ])
        .unwrap();
        let Command::MergeVars(args) = cli.command else {
            panic!("merge-vars")
        };
        let secrets = args.secrets().unwrap();
        assert_eq!(secrets[0].0, "a");
        assert_eq!(secrets[1].1, std::path::Path::new("vars/b.x"));
        assert_eq!(args.project, std::path::Path::new("src"));
        assert!(Cli::try_parse_from(["celld-bucket", "merge-vars"]).is_err());
        let cli = Cli::try_parse_from(["celld-bucket", "merge-vars", "--secret", "nodir"]).unwrap();
        let Command::MergeVars(args) = cli.command else {
            panic!("merge-vars")
        };
        assert!(args.secrets().is_err());
    }
}
