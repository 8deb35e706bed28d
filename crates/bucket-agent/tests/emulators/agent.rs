//! Running the built `celld-bucket` as a deploy pod runs it: a clean environment holding only
//! the pod's variables, one command line, one JSON answer on stdout.

use crate::TestResult;
use crate::stores::Store;
use celld_bucket::wire::{Answer, Expect, Version};
use std::process::Command;

/// The agent of one fleet's bucket prefix on one emulator.
#[derive(Debug, Clone)]
pub struct Agent {
    /// Which emulator.
    pub store: Store,
    /// `CELLD_BUCKET`.
    pub bucket: String,
    env: Vec<(&'static str, String)>,
}

/// The Worker whose pointers the tests write.
pub const SCRIPT: &str = "web";

impl Agent {
    /// The agent of a fresh prefix on `store`, named after `test`.
    pub fn on(store: Store, test: &str) -> TestResult<Self> {
        let (bucket, env) = store.pod_env(test)?;
        Ok(Self { store, bucket, env })
    }

    /// The same store and credentials with another `CELLD_BUCKET`.
    pub fn with_bucket(&self, bucket: &str) -> Self {
        let mut env = self.env.clone();
        for (name, value) in &mut env {
            if *name == "CELLD_BUCKET" {
                *value = bucket.to_string();
            }
        }
        Self {
            store: self.store,
            bucket: bucket.to_string(),
            env,
        }
    }

    /// Runs `celld-bucket ARGS`; its answer. The exit code must agree with it: 1 for `failed`,
    /// else 0.
    pub fn run(&self, args: &[&str]) -> TestResult<Answer> {
        let out = Command::new(env!("CARGO_BIN_EXE_celld-bucket"))
            .args(args)
            .env_clear()
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .output()?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let answer: Answer = serde_json::from_str(stdout.trim()).map_err(|e| {
            format!(
                "celld-bucket {args:?} on {} printed no answer ({e}): stdout {stdout:?}, stderr {:?}",
                self.store,
                String::from_utf8_lossy(&out.stderr)
            )
        })?;
        let expected_code = if matches!(answer, Answer::Failed { .. }) {
            1
        } else {
            0
        };
        if out.status.code() != Some(expected_code) {
            return Err(format!(
                "celld-bucket {args:?} on {} answered {} with {}, expected exit code {expected_code}",
                self.store,
                answer.to_line(),
                out.status
            )
            .into());
        }
        Ok(answer)
    }

    /// `get KEY`: the body and the version a compare-and-swap expects, or None when missing.
    pub fn get(&self, key: &str) -> TestResult<Option<(String, Expect)>> {
        match self.run(&["get", key])? {
            Answer::Object { body, version, .. } => {
                let kind_fits = matches!(
                    (self.store, &version),
                    (Store::Gcs, Version::Generation(_))
                        | (Store::S3 | Store::Azure, Version::ETag(_))
                );
                if !kind_fits {
                    return Err(format!("{} gave {key} the version {version}", self.store).into());
                }
                Ok(Some((body, Expect::Version(version))))
            }
            Answer::Missing => Ok(None),
            other => Err(format!("get {key} on {}: {}", self.store, other.to_line()).into()),
        }
    }

    /// `get KEY` of an object that must exist.
    pub fn read(&self, key: &str) -> TestResult<(String, Expect)> {
        self.get(key)?
            .ok_or_else(|| format!("{key} is missing on {}", self.store).into())
    }

    /// `put KEY BODY` with the flags of `expect`: the answer.
    pub fn put(&self, key: &str, body: &str, expect: &Expect) -> TestResult<Answer> {
        let flags = expect.flags();
        let mut args = vec!["put", key, body];
        args.extend(flags.iter().map(String::as_str));
        self.run(&args)
    }

    /// `put` that must answer `want` (`written` or `changed`).
    pub fn put_expecting(
        &self,
        key: &str,
        body: &str,
        expect: &Expect,
        want: &Answer,
    ) -> TestResult {
        let answer = self.put(key, body, expect)?;
        if &answer != want {
            return Err(format!(
                "put {key} on {} expecting {expect}: answered {}, expected {}",
                self.store,
                answer.to_line(),
                want.to_line()
            )
            .into());
        }
        Ok(())
    }

    /// Fails unless `key` holds `body`.
    pub fn assert_body(&self, key: &str, body: &str) -> TestResult {
        let (read, _) = self.read(key)?;
        if read != body {
            return Err(format!("{key} on {} holds {read}, expected {body}", self.store).into());
        }
        Ok(())
    }
}
