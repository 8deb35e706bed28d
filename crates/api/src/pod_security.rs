//! The restricted security settings every pod the project starts uses: celld nodes and deploy
//! pods alike (non-root, no privilege escalation, no capabilities, RuntimeDefault seccomp,
//! read-only root filesystem).

use k8s_openapi::api::core::v1::{
    Capabilities, PodSecurityContext, SeccompProfile, SecurityContext,
};

/// uid and gid the pods run as.
pub const RUN_AS: i64 = 65532;

/// The pod-level settings: non-root uid/gid [`RUN_AS`] with fsGroup, RuntimeDefault seccomp.
pub fn pod() -> PodSecurityContext {
    PodSecurityContext {
        run_as_non_root: Some(true),
        run_as_user: Some(RUN_AS),
        run_as_group: Some(RUN_AS),
        fs_group: Some(RUN_AS),
        seccomp_profile: Some(SeccompProfile {
            type_: "RuntimeDefault".into(),
            ..SeccompProfile::default()
        }),
        ..PodSecurityContext::default()
    }
}

/// The container-level settings: no privilege escalation, read-only root filesystem, every
/// capability dropped.
pub fn container() -> SecurityContext {
    SecurityContext {
        allow_privilege_escalation: Some(false),
        read_only_root_filesystem: Some(true),
        run_as_non_root: Some(true),
        capabilities: Some(Capabilities {
            drop: Some(vec!["ALL".into()]),
            ..Capabilities::default()
        }),
        ..SecurityContext::default()
    }
}
