//! Reconciling and Stalled, the abnormal-true conditions of the kstatus conventions that Flux's
//! health checks and kapp-style waits read: Stalled=True when the fleet cannot reach its spec
//! until someone acts (a bad reference or credentials, a child or image the API server or celld
//! refuses, a rollout past its deadline, a version the nodes refuse, no Worker deployed yet),
//! Reconciling=True while it is on its way (a rollout, nodes not ready yet, nodes adopting a version, a failure retried).
//! Both False otherwise, and never both True. Built from the other conditions: pure.

use super::{Cond, cond};
use crate::fleet::status::observation::Observed;
use crate::source::terms::Synced;
use celld_api::conditions::{RECONCILING, STALLED};
use celld_api::reasons::Reason;

/// Failures that only a person (or another controller) can end: retrying changes nothing.
const NEEDS_A_PERSON: [Reason; 16] = [
    Reason::StoreNotFound,
    Reason::InvalidStore,
    Reason::ConnectionMismatch,
    Reason::InvalidEndpoint,
    Reason::InvalidBucket,
    Reason::SecretNotFound,
    Reason::SecretKeyMissing,
    Reason::PrefixClaimed,
    Reason::ApiError,
    Reason::ChildRejected,
    Reason::NameTaken,
    Reason::UpgradeRefused,
    Reason::EnvRefused,
    Reason::FeatureUnsupported,
    Reason::NoOperatorCredentials,
    Reason::GatewayAPIMissing,
];

/// The other conditions the two are read from.
pub struct Basis<'a> {
    /// Progressing.
    pub progressing: &'a Cond,
    /// Adopted.
    pub adopted: &'a Cond,
    /// Ready.
    pub ready: &'a Cond,
    /// Degraded.
    pub degraded: &'a Cond,
    /// Deployed.
    pub deployed: &'a Cond,
    /// What publishing spec.source found, for a fleet with one.
    pub source: Option<&'a Synced>,
    /// SettingsHeld, for a fleet whose spec.env uses a held setting.
    pub held: Option<&'a Cond>,
}

/// Reconciling and Stalled for the fleet `o`, given its other conditions.
pub fn conditions(o: &Observed, c: &Basis) -> [Cond; 2] {
    let stalled = o
        .failures
        .iter()
        .find(|f| NEEDS_A_PERSON.contains(&f.reason))
        .map(|f| (f.reason, f.message.clone()))
        .or_else(|| {
            c.source
                .filter(|s| s.stalled)
                .map(|s| (s.reason, s.message.clone()))
        })
        .or_else(|| {
            // A setting that waits for spec.image to change.
            c.held
                .filter(|h| h.reason == Reason::HeldForImage)
                .map(|h| (h.reason, h.message.clone()))
        })
        .or_else(|| {
            // A fleet without a Worker stays at 0 nodes until someone deploys one (or, with
            // spec.source, until the operator publishes it).
            let publishes = c.source.is_some();
            [c.degraded, c.progressing, c.deployed, c.adopted]
                .into_iter()
                .find(|x| match x.reason {
                    Reason::GatewayAPIMissing
                    | Reason::ProgressDeadlineExceeded
                    | Reason::VersionRefused => true,
                    Reason::NoDeployment => !publishes,
                    _ => false,
                })
                .map(|x| (x.reason, x.message.clone()))
        });
    if let Some((reason, message)) = stalled {
        return [
            cond(
                RECONCILING,
                Some(false),
                reason,
                "stalled: see the Stalled condition",
            ),
            cond(STALLED, Some(true), reason, message),
        ];
    }
    let reconciling = o
        .failures
        .first()
        .map(|f| (f.reason, format!("retrying: {}", f.message)))
        .or_else(|| {
            c.source
                .filter(|s| s.progressing)
                .map(|s| (s.reason, s.message.clone()))
        })
        .or_else(|| {
            (c.progressing.status == Some(true))
                .then(|| (c.progressing.reason, c.progressing.message.clone()))
        })
        .or_else(|| {
            c.held
                .filter(|h| h.reason == Reason::HeldForNodes)
                .map(|h| (h.reason, h.message.clone()))
        })
        .or_else(|| {
            [c.ready, c.adopted]
                .into_iter()
                .find(|x| matches!(x.reason, Reason::NodesNotReady | Reason::Adopting))
                .map(|x| (x.reason, x.message.clone()))
        });
    let not_stalled = cond(
        STALLED,
        Some(false),
        Reason::AsExpected,
        "nothing keeps the fleet from its spec that retrying cannot end",
    );
    match reconciling {
        Some((reason, message)) => [cond(RECONCILING, Some(true), reason, message), not_stalled],
        None => [
            cond(
                RECONCILING,
                Some(false),
                Reason::AsExpected,
                "the fleet is as its spec asks",
            ),
            not_stalled,
        ],
    }
}
