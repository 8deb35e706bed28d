//! [`DeployDouble`]: making `kubectl exec` of `celld` in a deploy pod run `celld-deploy-double`.
//!
//! kwok runs an exec's command as a local process with the pod's Exec rule: its working
//! directory and environment. It does not give the process the pod's own environment (kwok runs
//! no container), so the rule carries what the deploy pod's container would get: its plain
//! variables (paths under the container's working directory mapped to the local one) and the
//! values of the Secret and ConfigMap keys it references, read as the kubelet reads them. That
//! is how the double gets the fleet's credentials (`AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`): from the Secret the plugin's Job names, so a Job naming the wrong
//! Secret fails here as it would in a real cluster.
//!
//! The rule's PATH is a directory holding `celld` (a link to the double), `celld-bucket` (the
//! deployer image's bucket agent, which `history` and `rollback` run) and links to the few tools
//! the plugin's exec scripts use ([`POD_TOOLS`]); no `curl`, so the plugin skips asking the
//! nodes to reload (no celld runs on kwok's fake nodes).

use std::collections::{BTreeMap, HashSet};
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, EnvVar, Pod, Secret};
use kube::runtime::WatchStreamExt;
use kube::runtime::watcher::{self, Event};
use kube::{Api, Client};

use crate::cargo_bin::cargo_bin;
use crate::error::{Error, Result};
use crate::exec_rule::ExecRule;

use super::volumes;

/// The test double's binary name.
pub const DOUBLE_BINARY: &str = "celld-deploy-double";

/// The bucket agent's binary name: the deployer image holds it as `celld-bucket`, and so does
/// the double's pod PATH.
pub const AGENT_BINARY: &str = "celld-bucket";

/// Environment variable naming a prebuilt bucket agent (else it is built with cargo).
pub const AGENT_BIN_ENV: &str = "CELLD_BUCKET_AGENT_BIN";

/// Environment variable naming a prebuilt double (else it is built with cargo).
pub const DOUBLE_BIN_ENV: &str = "CELLD_DEPLOY_DOUBLE_BIN";

/// The label selector of the plugin's deploy pods.
pub const DEPLOY_POD_SELECTOR: &str = "platform.celld.dev/role=deploy";

/// The tools on the deploy pod's PATH besides `celld`: what the plugin's preflight check,
/// upload and deploy need (`sh`, `head`, `tar`, ...), and no `curl`.
pub const POD_TOOLS: &[&str] = &["sh", "rm", "mkdir", "head", "tar", "touch", "cat", "ls"];

/// Where system tools are looked for.
const SYSTEM_DIRS: &[&str] = &["/usr/bin", "/bin"];

/// A laid-out test double: `bin/` (the deploy pod's PATH) and `work/<pod>/` (each deploy pod's
/// working directory).
#[derive(Debug, Clone)]
pub struct DeployDouble {
    root: PathBuf,
}

impl DeployDouble {
    /// The double's binary: `$CELLD_DEPLOY_DOUBLE_BIN`, else built now with cargo.
    pub async fn binary() -> Result<PathBuf> {
        cargo_bin("celld-testkit", DOUBLE_BINARY, DOUBLE_BIN_ENV).await
    }

    /// The bucket agent `celld-bucket`: `$CELLD_BUCKET_AGENT_BIN`, else built now with cargo.
    pub async fn agent_binary() -> Result<PathBuf> {
        cargo_bin("celld-bucket-agent", AGENT_BINARY, AGENT_BIN_ENV).await
    }

    /// [`DeployDouble::binary`], laid out under `root`, with the bucket agent beside it
    /// ([`DeployDouble::add_agent`]).
    pub async fn new(root: impl Into<PathBuf>) -> Result<Self> {
        let binary = Self::binary().await?;
        let double = Self::install(root, &binary)?;
        double.add_agent(&Self::agent_binary().await?)?;
        Ok(double)
    }

    /// Puts the bucket agent `agent` on the pods' PATH as `celld-bucket`, as in the deployer
    /// image (`history` and `rollback` run it).
    pub fn add_agent(&self, agent: &Path) -> Result<()> {
        let agent = std::path::absolute(agent)
            .map_err(|e| Error::io("locating the bucket agent", agent, e))?;
        if !agent.is_file() {
            return Err(Error::io(
                "locating the bucket agent",
                &agent,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ));
        }
        link(&agent, &self.bin_dir().join(AGENT_BINARY))
    }

    /// Lays out `root`: `bin/celld` links to `double`, `bin/<tool>` to each of [`POD_TOOLS`].
    /// Existing links are replaced.
    pub fn install(root: impl Into<PathBuf>, double: &Path) -> Result<Self> {
        let root = root.into();
        let bin = root.join("bin");
        for dir in [&bin, &root.join("work")] {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io("creating the deploy double's directory", dir, e))?;
        }
        let double = std::path::absolute(double)
            .map_err(|e| Error::io("locating the deploy double", double, e))?;
        if !double.is_file() {
            return Err(Error::io(
                "locating the deploy double",
                &double,
                std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
            ));
        }
        link(&double, &bin.join("celld"))?;
        for tool in POD_TOOLS {
            let found = SYSTEM_DIRS
                .iter()
                .map(|d| Path::new(d).join(tool))
                .find(|p| p.is_file())
                .ok_or_else(|| Error::Invalid {
                    what: "deploy pod tool",
                    value: (*tool).to_string(),
                    reason: "is in neither /usr/bin nor /bin; install it",
                })?;
            link(&found, &bin.join(tool))?;
        }
        Ok(DeployDouble { root })
    }

    /// The deploy pods' PATH: `celld` (the double), [`POD_TOOLS`] and, once added,
    /// `celld-bucket`.
    pub fn bin_dir(&self) -> PathBuf {
        self.root.join("bin")
    }

    /// The local working directory of deploy pod `pod` (its container's working directory).
    pub fn work_dir(&self, pod: &str) -> PathBuf {
        self.root.join("work").join(pod)
    }

    /// The Exec rule that makes `kubectl exec` into `pod` run the double for `celld`, with the
    /// environment the pod's container would get; creates the pod's working directory, with the
    /// Secret volumes mounted under it.
    pub async fn rule(&self, client: &Client, pod: &Pod) -> Result<ExecRule> {
        let name = pod.metadata.name.clone().unwrap_or_default();
        let work = self.work_dir(&name);
        std::fs::create_dir_all(&work)
            .map_err(|e| Error::io("creating a deploy pod's working directory", &work, e))?;
        volumes::project_secrets(client, pod, &work).await?;
        let mut rule = ExecRule::for_pod(&name).work_dir(&work);
        if let Some(uid) = &pod.metadata.uid {
            rule = rule.owned_by_pod(uid);
        }
        for (var, value) in container_env(client, pod, &work).await? {
            rule = rule.env(var, value);
        }
        Ok(rule
            .path([self.bin_dir()])
            .dispatch(["celld", AGENT_BINARY]))
    }

    /// Reads pod `name` in `namespace`, applies its [`DeployDouble::rule`] and waits until kwok
    /// uses it.
    pub async fn wire(&self, client: &Client, namespace: &str, name: &str) -> Result<()> {
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let pod = pods
            .get(name)
            .await
            .map_err(|e| Error::kube(format!("reading pod {namespace}/{name}"), e))?;
        self.rule(client, &pod)
            .await?
            .apply(client, namespace)
            .await
    }

    /// Wires every pod matching `selector` (such as [`DEPLOY_POD_SELECTOR`]) in `namespace` as
    /// soon as it appears, until the watch ends, and annotates it [`WIRED_ANNOTATION`]; `report`
    /// hears what happens. The rule is in place a few hundred milliseconds after the pod is
    /// created, normally before it runs; in the demo's namespace testenv holds the pod Pending
    /// until the annotation says so, elsewhere a client that execs into a pod at the very moment
    /// it runs may still get kwok's default.
    pub async fn serve(
        &self,
        client: &Client,
        namespace: &str,
        selector: &str,
        report: impl Fn(String) + Send + Sync + 'static,
    ) -> Result<()> {
        let report = Arc::new(report);
        let pods: Api<Pod> = Api::namespaced(client.clone(), namespace);
        let mut events = watcher::watcher(pods, watcher::Config::default().labels(selector))
            .default_backoff()
            .boxed();
        let mut wired: HashSet<String> = HashSet::new();
        while let Some(event) = events.next().await {
            match event {
                Ok(Event::InitDone) => report(format!(
                    "watching pods {selector} in namespace {namespace}: `celld` in them runs {}",
                    self.bin_dir().join("celld").display()
                )),
                Ok(Event::Apply(pod) | Event::InitApply(pod)) => {
                    let uid = pod.metadata.uid.clone().unwrap_or_default();
                    if pod.metadata.deletion_timestamp.is_some() || !wired.insert(uid) {
                        continue;
                    }
                    let (double, client, ns, report) = (
                        self.clone(),
                        client.clone(),
                        namespace.to_string(),
                        report.clone(),
                    );
                    tokio::spawn(async move {
                        let name = pod.metadata.name.clone().unwrap_or_default();
                        let wired = async {
                            double
                                .rule(&client, &pod)
                                .await?
                                .apply(&client, &ns)
                                .await?;
                            mark_wired(&client, &ns, &name).await
                        };
                        match wired.await {
                            Ok(()) => {
                                report(format!("pod {ns}/{name}: `celld` runs the deploy double"))
                            }
                            Err(e) => report(format!(
                                "pod {ns}/{name}: could not wire the deploy double: {e}"
                            )),
                        }
                    });
                }
                Ok(Event::Delete(pod)) => {
                    let name = pod.metadata.name.clone().unwrap_or_default();
                    let _ = std::fs::remove_dir_all(self.work_dir(&name));
                }
                Ok(Event::Init) => {}
                Err(e) => report(format!("watching pods in {namespace}: {e} (retrying)")),
            }
        }
        Ok(())
    }
}

/// The annotation that lets a deploy pod held by testenv's `pod-held-until-wired` stage (the
/// demo's namespace) run, once its Exec rule is in place.
pub const WIRED_ANNOTATION: &str = "testenv.celld.dev/wired";

/// Annotates pod `ns`/`name` [`WIRED_ANNOTATION`].
async fn mark_wired(client: &Client, ns: &str, name: &str) -> Result<()> {
    let patch = serde_json::json!({"metadata": {"annotations": {WIRED_ANNOTATION: "true"}}});
    Api::<Pod>::namespaced(client.clone(), ns)
        .patch(
            name,
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(&patch),
        )
        .await
        .map_err(|e| Error::kube(format!("annotating pod {ns}/{name} as wired"), e))?;
    Ok(())
}

/// Replaces `link` with a symbolic link to `target`.
fn link(target: &Path, link: &Path) -> Result<()> {
    if link.symlink_metadata().is_ok() {
        std::fs::remove_file(link)
            .map_err(|e| Error::io("replacing a link of the deploy double", link, e))?;
    }
    symlink(target, link).map_err(|e| Error::io("linking a tool of the deploy double", link, e))
}

/// The environment `pod`'s first container gets, resolved as the kubelet resolves it: plain
/// values (a path under the container's working directory mapped under `work`), and Secret and
/// ConfigMap key references. Field and resource references are left out.
async fn container_env(client: &Client, pod: &Pod, work: &Path) -> Result<Vec<(String, String)>> {
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let pod_name = pod.metadata.name.clone().unwrap_or_default();
    let Some(container) = pod.spec.as_ref().and_then(|s| s.containers.first()) else {
        return Ok(Vec::new());
    };
    let working_dir = container.working_dir.clone().unwrap_or_default();
    let mut secrets: BTreeMap<String, Option<Secret>> = BTreeMap::new();
    let mut maps: BTreeMap<String, Option<ConfigMap>> = BTreeMap::new();
    let mut out = Vec::new();
    for var in container.env.iter().flatten() {
        let problem = |problem: String| Error::PodEnv {
            namespace: namespace.clone(),
            pod: pod_name.clone(),
            var: var.name.clone(),
            problem,
        };
        if let Some(value) = &var.value {
            out.push((var.name.clone(), map_path(value, &working_dir, work)));
            continue;
        }
        let Some(from) = &var.value_from else {
            out.push((var.name.clone(), String::new()));
            continue;
        };
        if let Some(r) = &from.secret_key_ref {
            let secret = match secrets.get(&r.name) {
                Some(s) => s.clone(),
                None => {
                    let api: Api<Secret> = Api::namespaced(client.clone(), &namespace);
                    let s = api.get_opt(&r.name).await.map_err(|e| {
                        Error::kube(format!("reading Secret {namespace}/{}", r.name), e)
                    })?;
                    secrets.insert(r.name.clone(), s.clone());
                    s
                }
            };
            let value = secret.and_then(|s| s.data).and_then(|d| {
                d.get(&r.key)
                    .map(|b| String::from_utf8_lossy(&b.0).into_owned())
            });
            push(&mut out, var, value, r.optional, || {
                problem(format!(
                    "Secret {} has no key {} (or does not exist): the real pod would not start (CreateContainerConfigError)",
                    r.name, r.key
                ))
            })?;
        } else if let Some(r) = &from.config_map_key_ref {
            let map = match maps.get(&r.name) {
                Some(m) => m.clone(),
                None => {
                    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &namespace);
                    let m = api.get_opt(&r.name).await.map_err(|e| {
                        Error::kube(format!("reading ConfigMap {namespace}/{}", r.name), e)
                    })?;
                    maps.insert(r.name.clone(), m.clone());
                    m
                }
            };
            let value = map
                .and_then(|m| m.data)
                .and_then(|d| d.get(&r.key).cloned());
            push(&mut out, var, value, r.optional, || {
                problem(format!(
                    "ConfigMap {} has no key {} (or does not exist): the real pod would not start (CreateContainerConfigError)",
                    r.name, r.key
                ))
            })?;
        }
    }
    Ok(out)
}

fn push(
    out: &mut Vec<(String, String)>,
    var: &EnvVar,
    value: Option<String>,
    optional: Option<bool>,
    missing: impl FnOnce() -> Error,
) -> Result<()> {
    match value {
        Some(v) => out.push((var.name.clone(), v)),
        None if optional == Some(true) => {}
        None => return Err(missing()),
    }
    Ok(())
}

/// `value` with a leading `working_dir` (the container's) replaced by `work` (the local one).
fn map_path(value: &str, working_dir: &str, work: &Path) -> String {
    if working_dir.is_empty() || working_dir == "/" {
        return value.to_string();
    }
    match value.strip_prefix(working_dir) {
        Some("") => work.display().to_string(),
        Some(rest) if rest.starts_with('/') => format!("{}{rest}", work.display()),
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_paths_under_the_container_working_dir() {
        let work = Path::new("/tmp/double/work/p");
        assert_eq!(map_path("/work", "/work", work), "/tmp/double/work/p");
        assert_eq!(
            map_path("/work/cache", "/work", work),
            "/tmp/double/work/p/cache"
        );
        assert_eq!(map_path("/workshop", "/work", work), "/workshop");
        assert_eq!(map_path("x", "", work), "x");
    }

    #[test]
    fn install_links_celld_and_the_tools() {
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("double");
        std::fs::write(&fake, "#!/bin/sh\n").unwrap();
        let double = DeployDouble::install(dir.path().join("root"), &fake).unwrap();
        let bin = double.bin_dir();
        assert_eq!(std::fs::read_link(bin.join("celld")).unwrap(), fake);
        for tool in POD_TOOLS {
            assert!(bin.join(tool).is_file(), "{tool}");
        }
        assert!(!bin.join("curl").exists());
        // Twice is fine.
        DeployDouble::install(dir.path().join("root"), &fake).unwrap();
        assert!(DeployDouble::install(dir.path().join("r2"), &dir.path().join("none")).is_err());
    }
}
