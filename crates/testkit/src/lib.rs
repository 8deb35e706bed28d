//! Test support for integration tests against the local Kubernetes control plane of
//! `testenv/scripts/up.sh` (`make cluster-up`): etcd, kube-apiserver, kube-controller-manager,
//! kube-scheduler and kwok on 127.0.0.1, plus an S3 server, an OCI registry and Flux's
//! source-controller ([`Flux`]).
//!
//! Each test typically starts with [`TestEnv::new`], which gives an admin [`kube::Client`], a
//! fresh namespace (deleted on drop) and kubectl. If the control plane is not up, it fails with a
//! message saying to run `make cluster-up`; it never skips.
//!
//! Pods on the fake nodes become Running and Ready at once and stay so (also a Job's pods). To
//! complete a pod, annotate it with [`COMPLETE_ANNOTATION`] `=Succeeded` or `=Failed`, or call
//! [`complete_pod`], which can also give its containers a termination message and an image ID;
//! [`hold_pod_waiting`] keeps a pod's containers waiting (`ErrImagePull`, ...) instead.
//! [`ExecRule`] sets what `kubectl exec` into a pod runs (a local command), [`LogsRule`] what
//! `kubectl logs` shows.
//!
//! [`deploy_double`] is `celld-deploy-double`, a test double of `celld deploy` that writes to
//! the local S3 server what celld writes, and [`DeployDouble`] makes a deploy pod's `celld` run
//! it. (The operator binary as a process is `celld_fixtures::OperatorProcess`.)
//!
//! Its folders: [`deploy_double`] (the `celld deploy` test double) and [`faults`] (faults
//! injected into the control plane and the object store) over `flux` (Flux's
//! source-controller and the OCI registry).

mod auth;
mod cargo_bin;
mod client;
mod component;
mod crds;
pub mod deploy_double;
mod emulators;
mod env_file;
mod error;
mod exec_rule;
pub mod faults;
mod flux;
mod kubectl;
mod kwok_api;
mod logs_rule;
mod names;
mod namespace;
pub mod paths;
mod pod_states;
mod pods;
mod s3;
mod test_env;
mod wait;

pub use auth::{client_as_service_account, client_as_user, service_account_token};
pub use cargo_bin::cargo_bin;
pub use client::{client, config, config_from};
pub use component::{Component, compact_etcd};
pub use crds::install_crds;
pub use deploy_double::{DEPLOY_POD_SELECTOR, DeployDouble};
pub use emulators::{AzureSettings, GcsSettings};
pub use error::{Error, ProcessError, Result};
pub use exec_rule::{ExecRule, RULE_MARKER_ENV};
pub use flux::{
    ARTIFACT_TIMEOUT, Flux, FluxArtifact, FluxSource, FluxSourceKind, OciRegistry, unpack_tar_gz,
};
pub use kubectl::{KUBECTL_TIMEOUT, Kubectl};
pub use logs_rule::{LogsRule, append_cri_log, cri_log_messages, write_cri_log};
pub use names::unique_name;
pub use namespace::{KEEP_ENV, TEST_LABEL, TestNamespace};
pub use pod_states::{
    COMPLETE_ANNOTATION, Completion, IMAGE_ID_ANNOTATION, TERMINATION_MESSAGE_ANNOTATION,
    WAITING_MESSAGE_ANNOTATION, WAITING_REASON_ANNOTATION, complete_pod, hold_pod_waiting,
    restart_containers,
};
pub use pods::{FAKE_CONTAINER, create_running_pod, fake_pod, is_running_and_ready};
pub use s3::S3Settings;
pub use test_env::TestEnv;
pub use wait::{Check, DEFAULT_TIMEOUT, wait_for_deletion, wait_for_object, wait_until};
