//! Shared pieces of the cluster tests: the CRDs, fixtures (Secret, CelldObjectStore, fleet,
//! node pods), running the plugin binary, fake `celld` and `curl` tools that record what they
//! got, the test double of `celld deploy` for the deploy pod, and pausing the plugin while a
//! kwok Exec rule is put in place for its deploy pod.

use celld_api::{CelldFleet, CelldFleetSpec, CelldObjectStore, CelldObjectStoreSpec, labels};
use celld_testkit::{Check, DeployDouble, ExecRule, S3Settings, TestEnv, wait_until};
use k8s_openapi::api::core::v1::{Pod, Secret};
use kube::Api;
use kube::api::{ListParams, ObjectMeta, PostParams};
use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::Command;
use tokio::sync::OnceCell;

/// What the plugin says once it created its deploy Job.
const CREATED_JOB: &str = "Created Job";

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
    let s3 = env.s3()?;
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        string_data: Some(BTreeMap::from([
            (
                labels::secret_keys::ACCESS_KEY_ID.to_string(),
                s3.access_key_id.clone(),
            ),
            (
                labels::secret_keys::SECRET_ACCESS_KEY.to_string(),
                s3.secret_access_key.clone(),
            ),
        ])),
        ..Secret::default()
    };
    env.api::<Secret>()
        .create(&PostParams::default(), &secret)
        .await?;
    Ok(())
}

/// Creates a CelldObjectStore `name` pointing at the test S3 server, with Secret `secret`.
pub async fn store(env: &TestEnv, name: &str, secret: &str) -> TestResult {
    let s3 = env.s3()?;
    let store = CelldObjectStore::new(
        name,
        CelldObjectStoreSpec {
            endpoint: Some(s3.endpoint.clone()),
            region: Some(s3.region.clone()),
            allow_http: Some(true),
            azure_storage_account: None,
            credentials_secret_ref: Some(celld_api::SecretRef {
                name: secret.into(),
            }),
        },
    );
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

/// The outcome of a plugin run.
#[derive(Debug)]
pub struct Run {
    /// Exit code (-1 when killed by a signal).
    pub code: i32,
    /// Everything on stdout.
    pub stdout: String,
    /// Everything on stderr.
    pub stderr: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit code {}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }
}

/// The plugin with the test kubeconfig (unless `args` name one) and the test namespace
/// (unless `args` name one), global flags after the command.
pub fn plugin(env: &TestEnv, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args);
    if !args.contains(&"--kubeconfig") {
        cmd.arg("--kubeconfig")
            .arg(celld_testkit::paths::kubeconfig());
    }
    if !args.iter().any(|a| matches!(*a, "-n" | "--namespace")) {
        cmd.args(["-n", env.namespace()]);
    }
    cmd.env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    cmd
}

/// Runs the plugin to its end.
pub async fn run(env: &TestEnv, args: &[&str]) -> TestResult<Run> {
    let out = tokio::time::timeout(RUN_TIMEOUT, plugin(env, args).output())
        .await
        .map_err(|_| format!("kubectl-celld {args:?} did not finish within {RUN_TIMEOUT:?}"))??;
    Ok(Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    })
}

/// Collects a stream's lines; `seen` reports each line as it comes.
pub fn collect(
    stream: impl AsyncRead + Unpin + Send + 'static,
    seen: Option<tokio::sync::mpsc::UnboundedSender<String>>,
) -> (Arc<Mutex<String>>, tokio::task::JoinHandle<()>) {
    collect_with(stream, seen, |_| {})
}

/// [`collect`], calling `first` on each line before anything else sees it.
fn collect_with(
    stream: impl AsyncRead + Unpin + Send + 'static,
    seen: Option<tokio::sync::mpsc::UnboundedSender<String>>,
    mut first: impl FnMut(&str) + Send + 'static,
) -> (Arc<Mutex<String>>, tokio::task::JoinHandle<()>) {
    let text = Arc::new(Mutex::new(String::new()));
    let t = text.clone();
    let task = tokio::spawn(async move {
        let mut lines = BufReader::new(stream).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            first(&line);
            if let Ok(mut s) = t.lock() {
                s.push_str(&line);
                s.push('\n');
            }
            if let Some(tx) = &seen {
                let _ = tx.send(line);
            }
        }
    });
    (text, task)
}

/// Stops the process `pid` (SIGSTOP) or lets it go on (SIGCONT), with no process of its own in
/// between: the plugin is stopped the moment it says it created its Job.
pub fn pause(pid: u32, stop: bool) -> TestResult {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .ok_or_else(|| format!("{pid} is no process id"))?;
    let signal = if stop {
        rustix::process::Signal::STOP
    } else {
        rustix::process::Signal::CONT
    };
    rustix::process::kill_process(pid, signal)
        .map_err(|e| format!("signalling the plugin ({pid:?}) failed: {e}"))?;
    Ok(())
}

/// Waits for a line containing `needle` on `rx`.
pub async fn wait_line(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    needle: &str,
    timeout: Duration,
) -> TestResult<String> {
    let found = tokio::time::timeout(timeout, async {
        while let Some(line) = rx.recv().await {
            if line.contains(needle) {
                return Some(line);
            }
        }
        None
    })
    .await;
    match found {
        Ok(Some(line)) => Ok(line),
        Ok(None) => Err(format!("the output ended without a line containing {needle:?}").into()),
        Err(_) => Err(format!("no line containing {needle:?} within {timeout:?}").into()),
    }
}

/// Waits until the collected text contains `needle`.
pub async fn wait_text(text: &Arc<Mutex<String>>, needle: &str, timeout: Duration) -> TestResult {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if text.lock().map(|t| t.contains(needle)).unwrap_or(false) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("no {needle:?} in the output within {timeout:?}").into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The Job a `Created Job NS/NAME (image ...)` progress line names.
pub fn created_job(line: &str) -> TestResult<String> {
    line.split_whitespace()
        .skip_while(|word| *word != "Job")
        .nth(1)
        .and_then(|qualified| qualified.rsplit('/').next())
        .map(str::to_string)
        .ok_or_else(|| format!("no Job name in {line:?}").into())
}

/// The Running deploy pod of `fleet` that Job `job` created (not a pod of an earlier command's
/// Job, which may still be terminating).
pub async fn deploy_pod(env: &TestEnv, fleet: &str, job: &str) -> TestResult<String> {
    let pods: Api<Pod> = env.api();
    let selector = format!(
        "{}={fleet},{}={},batch.kubernetes.io/job-name={job}",
        labels::FLEET,
        labels::ROLE,
        labels::ROLE_DEPLOY
    );
    let name = wait_until(
        format!("the deploy pod of fleet {fleet} (Job {job}) to run"),
        Duration::from_secs(60),
        || async {
            match pods.list(&ListParams::default().labels(&selector)).await {
                Ok(list) => match list.items.iter().find(|p| {
                    p.metadata.deletion_timestamp.is_none()
                        && celld_testkit::is_running_and_ready(p)
                }) {
                    Some(p) => Check::Done(p.metadata.name.clone().unwrap_or_default()),
                    None => {
                        Check::Pending(format!("{} deploy pods, none running", list.items.len()))
                    }
                },
                Err(e) => Check::Pending(e.to_string()),
            }
        },
    )
    .await?;
    Ok(name)
}

/// Runs `deploy` (args after `deploy`) with the fake tools: the plugin is paused (SIGSTOP) as
/// soon as it created its Job, until kwok applies an Exec rule for the Job's pod, so that every
/// exec of the plugin runs the fake tools. Returns the finished run.
pub async fn deploy(
    env: &TestEnv,
    tools: &FakeTools,
    fleet: &str,
    args: &[&str],
) -> TestResult<Run> {
    deploy_with(env, fleet, args, |pod| tools.rule(pod)).await
}

/// [`deploy`] with a custom Exec rule.
pub async fn deploy_with(
    env: &TestEnv,
    fleet: &str,
    args: &[&str],
    rule: impl FnOnce(&str) -> ExecRule,
) -> TestResult<Run> {
    deploy_paused(env, fleet, args, async |pod: String| {
        rule(&pod).apply(&env.client(), env.namespace()).await?;
        Ok(())
    })
    .await
}

/// Runs `deploy` with the test double of `celld deploy` in the deploy pod (see
/// [`celld_testkit::DeployDouble`]).
pub async fn deploy_double(
    env: &TestEnv,
    double: &DeployDouble,
    fleet: &str,
    args: &[&str],
) -> TestResult<Run> {
    deploy_paused(env, fleet, args, async |pod: String| {
        double.wire(&env.client(), env.namespace(), &pod).await?;
        Ok(())
    })
    .await
}

/// Runs `deploy` (args after `deploy`), pausing the plugin (SIGSTOP) as soon as it created its
/// Job until `wire` has put an Exec rule in place for the Job's pod (whose name it gets), so
/// that every exec of the plugin runs what the rule says. Returns the finished run.
pub async fn deploy_paused(
    env: &TestEnv,
    fleet: &str,
    args: &[&str],
    wire: impl AsyncFnOnce(String) -> TestResult,
) -> TestResult<Run> {
    let mut full = vec!["deploy"];
    full.extend_from_slice(args);
    command_paused(env, fleet, &full, wire).await
}

/// Runs any command that starts a deploy pod (`deploy`, `history`, `rollback`; `args` from the
/// command's name on), paused like [`deploy_paused`] until `wire` has put an Exec rule in place.
pub async fn command_paused(
    env: &TestEnv,
    fleet: &str,
    full: &[&str],
    wire: impl AsyncFnOnce(String) -> TestResult,
) -> TestResult<Run> {
    command_paused_pid(env, fleet, full, async |pod: String, _pid: u32| {
        wire(pod).await
    })
    .await
}

/// [`command_paused`], with `wire` also given the plugin's process id.
pub async fn command_paused_pid(
    env: &TestEnv,
    fleet: &str,
    full: &[&str],
    wire: impl AsyncFnOnce(String, u32) -> TestResult,
) -> TestResult<Run> {
    let mut child = plugin(env, full).spawn()?;
    let pid = child.id().ok_or("the plugin exited at once")?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel();
    let mut stop_tx = Some(stop_tx);
    let (stderr, err_task) = collect_with(
        child.stderr.take().ok_or("no stderr")?,
        Some(tx),
        move |line| {
            if line.contains(CREATED_JOB)
                && let Some(stopped) = stop_tx.take()
            {
                let _ = stopped.send(pause(pid, true));
            }
        },
    );
    let (stdout, out_task) = collect(child.stdout.take().ok_or("no stdout")?, None);

    let created = wait_line(&mut rx, CREATED_JOB, Duration::from_secs(60)).await;
    let ruled = match created.and_then(|line| created_job(&line)) {
        Ok(job) => {
            stop_rx
                .await
                .map_err(|_| "the plugin's stderr ended before it was stopped")??;
            let applied = match deploy_pod(env, fleet, &job).await {
                Ok(pod) => wire(pod, pid).await,
                Err(e) => Err(e),
            };
            pause(pid, false)?;
            applied
        }
        Err(e) => Err(e),
    };
    let status = match tokio::time::timeout(RUN_TIMEOUT, child.wait()).await {
        Ok(s) => s.ok(),
        Err(_) => {
            let _ = child.kill().await;
            None
        }
    };
    let _ = tokio::join!(err_task, out_task);
    let run = Run {
        code: status.and_then(|s| s.code()).unwrap_or(-1),
        stdout: stdout.lock().map(|s| s.clone()).unwrap_or_default(),
        stderr: stderr.lock().map(|s| s.clone()).unwrap_or_default(),
    };
    if let Err(e) = ruled {
        return Err(format!("setting up the deploy pod's Exec rule failed: {e}\n{run}").into());
    }
    Ok(run)
}

/// Runs a command that starts a deploy pod of `fleet` (`args` from the command's name on) with
/// the double's Exec rule (`celld-bucket`, which `history` and `rollback` reach the bucket with)
/// plus this machine's tools (curl, which `rollback` asks the nodes to reload with) on the
/// pod's PATH.
pub async fn with_curl(
    env: &TestEnv,
    double: &DeployDouble,
    fleet: &str,
    args: &[&str],
) -> TestResult<Run> {
    command_paused(env, fleet, args, async |name: String| {
        let pod = env.api::<Pod>().get(&name).await?;
        double
            .rule(&env.client(), &pod)
            .await?
            .path([double.bin_dir(), "/usr/bin".into(), "/bin".into()])
            .apply(&env.client(), env.namespace())
            .await?;
        Ok(())
    })
    .await
}

#[test]
fn created_job_reads_the_progress_line() {
    assert_eq!(
        created_job("Created Job apps/web-deploy-fk64h (image celld-deployer:latest)").unwrap(),
        "web-deploy-fk64h"
    );
    assert!(created_job("Created nothing").is_err());
}
