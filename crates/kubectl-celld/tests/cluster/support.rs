//! Shared pieces of the cluster tests: the CRDs, fixtures (Secret, CelldObjectStore, fleet,
//! node pods) and fake `celld` and `curl` tools that record what they got; running the plugin
//! binary ([`plugin_run`]); commands paused while a kwok Exec rule is put in place for their
//! deploy pod ([`paused`]), and fan-outs paused likewise for each of theirs ([`fan_out_run`]).

mod fan_out_run;
mod paused;
mod plugin_run;

pub use fan_out_run::*;
pub use paused::*;
pub use plugin_run::*;

use celld_api::{CelldFleet, CelldFleetSpec, CelldObjectStore, labels};
use celld_testkit::{ExecRule, S3Settings, TestEnv};
use k8s_openapi::api::core::v1::Pod;
use kube::api::PostParams;
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::OnceCell;

/// What the tests return.
pub type TestResult<T = ()> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

/// The plugin binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_kubectl-celld");

/// Longest a plugin run may take.
pub const RUN_TIMEOUT: Duration = Duration::from_secs(180);

static CRDS: OnceCell<()> = OnceCell::const_new();

/// Installs (server-side apply, idempotent) the CRDs from config/crd/bases and waits until the
/// API serves them.
pub async fn ensure_crds() -> TestResult {
    CRDS.get_or_try_init(|| async {
        let client = celld_testkit::client().await?;
        celld_testkit::install_crds(&client).await
    })
    .await?;
    Ok(())
}

/// A test namespace with the CRDs installed.
pub async fn env(test: &str) -> TestResult<TestEnv> {
    // First: without a control plane this fails saying to run `make cluster-up`.
    let env = TestEnv::new(test).await?;
    ensure_crds().await?;
    Ok(env)
}

/// A bucket URL under a prefix no other test uses, in the test S3 server's bucket.
pub fn bucket(s3: &S3Settings, test: &str) -> String {
    format!(
        "s3://{}/{}",
        s3.bucket,
        s3.unique_prefix(test).trim_end_matches('/')
    )
}

/// Creates the credentials Secret `name` with the test S3 server's keys.
pub async fn secret(env: &TestEnv, name: &str) -> TestResult {
    celld_fixtures::create_credentials(&env.api(), name, &env.s3()?).await?;
    Ok(())
}

/// Creates a CelldObjectStore `name` pointing at the test S3 server, with Secret `secret`.
pub async fn store(env: &TestEnv, name: &str, secret: &str) -> TestResult {
    let store = celld_fixtures::store(name, &env.s3()?, secret)?;
    env.api::<CelldObjectStore>()
        .create(&PostParams::default(), &store)
        .await?;
    Ok(())
}

/// Creates fleet `name` on store `store` with `bucket`.
pub async fn fleet(env: &TestEnv, name: &str, store: &str, bucket: &str) -> TestResult<CelldFleet> {
    let mut spec = CelldFleetSpec::with_bucket(bucket);
    spec.store_ref = Some(celld_api::StoreRef { name: store.into() });
    let fleet = CelldFleet::new(name, spec);
    Ok(env
        .api::<CelldFleet>()
        .create(&PostParams::default(), &fleet)
        .await?)
}

/// A test namespace for `test` with the fleet `web` on the store `minio` (credentials in the
/// Secret `s3-creds`), in the prefix `prefix` of the test bucket.
pub async fn env_with_web(test: &str, prefix: &str) -> TestResult<TestEnv> {
    let env = env(test).await?;
    let s3 = env.s3()?;
    secret(&env, "s3-creds").await?;
    store(&env, "minio", "s3-creds").await?;
    fleet(&env, "web", "minio", &bucket(&s3, prefix)).await?;
    Ok(env)
}

/// Labels of a fleet's node pods.
pub fn node_labels(fleet: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (labels::FLEET.to_string(), fleet.to_string()),
        (labels::ROLE.to_string(), labels::ROLE_NODE.to_string()),
    ])
}

/// Creates node pod `name` of `fleet` (as the operator's StatefulSet would) and waits until it
/// is Running and Ready; returns it with its pod IP.
pub async fn node_pod(env: &TestEnv, fleet: &str, name: &str) -> TestResult<Pod> {
    let mut pod = celld_testkit::fake_pod(name);
    pod.metadata.labels = Some(node_labels(fleet));
    Ok(celld_testkit::create_running_pod(&env.api(), &pod).await?)
}

/// The IP of a pod.
pub fn ip(pod: &Pod) -> String {
    pod.status
        .as_ref()
        .and_then(|s| s.pod_ip.clone())
        .unwrap_or_default()
}

/// Writes an executable shell script.
pub fn script(path: &Path, body: &str) -> TestResult {
    std::fs::write(path, body)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    Ok(())
}

/// Where the fake tools run and record what they saw.
pub struct FakeTools {
    /// The tools: `celld` and `curl`.
    pub bin: PathBuf,
    /// The exec working directory (the deploy container's working directory).
    pub work: PathBuf,
    /// What the tools recorded: `args`, `files`, `tree/`, `curl.log`; `answers/<ip>` for curl.
    pub record: PathBuf,
}

/// A fake `celld` that records its arguments, the files under the source directory (its 2nd
/// argument) and a copy of them, prints a deploy-like output on stdout and stderr, and exits
/// with `$CELLD_FAKE_EXIT` (0 by default). With `$CELLD_FAKE_INTERRUPT` (a process id) it sends
/// that process SIGINT, as Ctrl-C would, then runs on for a while.
const FAKE_CELLD: &str = r#"#!/bin/sh
rec=$CELLD_FAKE_RECORD
printf '%s\n' "$@" >"$rec/args"
if [ -d "$2" ]; then
  (cd "$2" && find . -type f | sed 's#^\./##' | LC_ALL=C sort) >"$rec/files"
  cp -R "$2" "$rec/tree"
fi
if [ -n "$CELLD_FAKE_INTERRUPT" ]; then
  kill -INT "$CELLD_FAKE_INTERRUPT"
  sleep 30
fi
echo "celld deploy: bundling $2"
echo "esbuild: 2 modules bundled" >&2
echo "celld deploy: published version 0123456789abcdef to $4"
exit "${CELLD_FAKE_EXIT:-0}"
"#;

/// A fake `curl` for the reload script: logs the URL, answers from `answers/<host>` (first
/// line the HTTP code, then the body) or fails like an unreachable host.
const FAKE_CURL: &str = r#"#!/bin/sh
out= url=
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift ;;
    -w|-X|--max-time|--connect-timeout) shift ;;
    http*) url=$1 ;;
  esac
  shift
done
echo "$url" >>"$CELLD_FAKE_RECORD/curl.log"
host=${url#http://}; host=${host%%:*}
answer="$CELLD_FAKE_RECORD/answers/$host"
if [ ! -f "$answer" ]; then
  echo "curl: (7) Failed to connect to $host port 8081: Connection refused" >&2
  printf 000
  exit 7
fi
tail -n +2 "$answer" >"$out"
printf %s "$(head -n 1 "$answer")"
"#;

impl FakeTools {
    /// Writes the tools into the test's scratch directory.
    pub fn new(env: &TestEnv) -> TestResult<Self> {
        let root = env.scratch_dir()?;
        let tools = FakeTools {
            bin: root.join("bin"),
            work: root.join("work"),
            record: root.join("record"),
        };
        for d in [
            &tools.bin,
            &tools.work,
            &tools.record,
            &tools.record.join("answers"),
        ] {
            std::fs::create_dir_all(d)?;
        }
        script(&tools.bin.join("celld"), FAKE_CELLD)?;
        script(&tools.bin.join("curl"), FAKE_CURL)?;
        Ok(tools)
    }

    /// Makes the node at `ip` answer `/reload` with `code` and `body`.
    pub fn answer(&self, ip: &str, code: u16, body: &str) -> TestResult {
        std::fs::write(
            self.record.join("answers").join(ip),
            format!("{code}\n{body}"),
        )?;
        Ok(())
    }

    /// The kwok Exec rule that makes the deploy pod `pod` run these tools.
    pub fn rule(&self, pod: &str) -> ExecRule {
        ExecRule::for_pod(pod)
            .work_dir(&self.work)
            .path([self.bin.clone(), "/usr/bin".into(), "/bin".into()])
            .env("CELLD_FAKE_RECORD", self.record.display().to_string())
            .dispatch(["celld"])
    }

    /// A file the tools recorded, or empty.
    pub fn recorded(&self, name: &str) -> String {
        std::fs::read_to_string(self.record.join(name)).unwrap_or_default()
    }
}
