//! Where the local control plane keeps its state: `<workspace root>/.testenv/` (or
//! `$CELLD_TESTENV_DIR`), written by `testenv/scripts/up.sh`.

use std::path::PathBuf;

/// Environment variable that points the kit at another kubeconfig.
pub const KUBECONFIG_ENV: &str = "CELLD_TEST_KUBECONFIG";

/// Environment variable that points the kit (and up.sh/down.sh) at another state directory.
pub const STATE_DIR_ENV: &str = "CELLD_TESTENV_DIR";

/// The workspace root: the checkout this crate was built from (`.cargo/config.toml`).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CELLD_WORKSPACE_ROOT"))
}

/// The state directory of the local control plane: `$CELLD_TESTENV_DIR` if set, else
/// `<workspace root>/.testenv`.
pub fn state_dir() -> PathBuf {
    match std::env::var_os(STATE_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => workspace_root().join(".testenv"),
    }
}

/// The kubeconfig to use: `$CELLD_TEST_KUBECONFIG` if set, else `.testenv/kubeconfig`.
pub fn kubeconfig() -> PathBuf {
    match std::env::var_os(KUBECONFIG_ENV) {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => state_dir().join("kubeconfig"),
    }
}

/// The kubectl built for the local control plane (`.testenv/bin/kubectl`).
pub fn kubectl() -> PathBuf {
    state_dir().join("bin").join("kubectl")
}

/// The GitOps health judge (`.testenv/bin/gitops-health`, from testenv/go/gitops-health):
/// Argo CD's Lua health checks in gopher-lua, and kstatus.
pub fn gitops_health() -> PathBuf {
    state_dir().join("bin").join("gitops-health")
}

/// Prometheus's own checker (`.testenv/bin/promtool`, built from the Prometheus Go module by
/// testenv/go/promtool): `promtool check metrics` lints a metrics exposition.
pub fn promtool() -> PathBuf {
    state_dir().join("bin").join("promtool")
}

/// prometheus-adapter's own reading of a configuration (`.testenv/bin/adapter-config`, from
/// testenv/go/adapter-config): its config loader and rule namers, and the queries they build.
pub fn adapter_config() -> PathBuf {
    state_dir().join("bin").join("adapter-config")
}

/// The S3 settings file written by up.sh (`.testenv/s3.env`).
pub fn s3_env() -> PathBuf {
    state_dir().join("s3.env")
}

/// Flux source-controller's settings written by up.sh (`.testenv/flux.env`).
pub fn flux_env() -> PathBuf {
    state_dir().join("flux.env")
}

/// The OCI registry's settings written by up.sh (`.testenv/oci.env`).
pub fn oci_env() -> PathBuf {
    state_dir().join("oci.env")
}

/// The OCI registry and Flux artifact pusher (`.testenv/bin/oci-registry`, from
/// testenv/go/oci-registry).
pub fn oci_registry() -> PathBuf {
    state_dir().join("bin").join("oci-registry")
}

/// The directory kwok puts first on its PATH to look up exec commands (`.testenv/pod-path`).
pub fn pod_path() -> PathBuf {
    state_dir().join("pod-path")
}

/// Per-test scratch space (`.testenv/scratch`), removed by down.sh.
pub fn scratch_root() -> PathBuf {
    state_dir().join("scratch")
}
