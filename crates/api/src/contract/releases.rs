//! Every celld release the operator knows, with what changed in it that an operator depends on:
//! environment variables added, refused at startup and constrained, the readiness gate, the
//! shutdown bound the grace period derives from, the manifest features it serves, and whether
//! older nodes may roll to it. The rules a version follows are the changes of every release up
//! to it ([`Rules::of`]); admission, the operator, the plugin and the tests read them here.
//!
//! Sources: celld's own source and docs at each release (`celld-versions.md` in the reference
//! notes names the file and commit of every change).

use semver::Version;

/// A version as (major, minor, patch).
pub type Triple = (u64, u64, u64);

/// A variable celld refuses at startup when it is set at all, even empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    /// The variable, or the prefix of a family of variables when it ends with `_`
    /// (`CELLD_VAR_`).
    pub name: &'static str,
    /// What to set instead, or why nothing replaces it.
    pub instead: &'static str,
    /// Whether an empty value is accepted (only a value is refused).
    pub empty_tolerated: bool,
}

/// A variable refused when set at all, even empty.
const fn refused(name: &'static str, instead: &'static str) -> Refusal {
    Refusal {
        name,
        instead,
        empty_tolerated: false,
    }
}

impl Refusal {
    /// Whether the variable `name` is refused by this rule.
    pub fn refuses(&self, name: &str) -> bool {
        if self.is_prefix() {
            name.starts_with(self.name)
        } else {
            name == self.name
        }
    }

    /// Whether the rule names a family of variables by their prefix.
    pub fn is_prefix(&self) -> bool {
        self.name.ends_with('_')
    }
}

/// How celld's fleet readiness gate opens for a node that joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// It opens once the fleet settled, or after `after_s` seconds at most.
    FallsOpen {
        /// The longest a node waits at the gate.
        after_s: u64,
    },
    /// It opens only once the fleet settled, never by timeout: a node may wait at it for as
    /// long as the fleet needs, and an orchestrator must set its own rollout deadline.
    HeldUntilSettled,
}

/// How celld bounds its graceful shutdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shutdown {
    /// CELLD_SHUTDOWN_TOTAL_MS bounds the whole shutdown.
    Total,
    /// As [`Shutdown::Total`], and CELLD_DRAIN_TOKEN_WAIT_MS (default
    /// [`DRAIN_TOKEN_WAIT_MS`]) may be at most ¾ of CELLD_SHUTDOWN_TOTAL_MS: otherwise the node
    /// stops at start.
    TokenWaitWithinThreeQuarters,
    /// Every wait is derived from CELLD_SHUTDOWN_TOTAL_MS (the token wait is ¾ of it).
    Derived,
}

/// celld's default graceful-shutdown bound (CELLD_SHUTDOWN_TOTAL_MS), in milliseconds, in every
/// release the table holds.
pub const SHUTDOWN_TOTAL_MS: u64 = 40_000;

/// celld's default drain-token wait (CELLD_DRAIN_TOKEN_WAIT_MS) where it can be set.
pub const DRAIN_TOKEN_WAIT_MS: u64 = 30_000;

/// The manifest feature of Workers with containers, which needs a container engine on the node.
pub const FEATURE_CONTAINERS: &str = "containers-v1";

/// One release and what changed in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Release {
    /// Its version.
    pub version: Triple,
    /// Variables it reads for the first time.
    pub adds: &'static [&'static str],
    /// Variables it refuses at startup for the first time.
    pub refuses: &'static [Refusal],
    /// Its readiness gate, when it changed in this release.
    pub gate: Option<Gate>,
    /// Its shutdown bound, when it changed in this release.
    pub shutdown: Option<Shutdown>,
    /// Manifest features it serves for the first time.
    pub features: &'static [&'static str],
    /// Whether nodes of an older release may roll to it one at a time: `false` when every
    /// older node must stop first.
    pub rolls_from_older: Rolling,
    /// Whether no older release may start again on a fleet once this one ran.
    pub no_return: bool,
    /// Settings it brings that no node may use until every node of the fleet runs it.
    pub held: &'static [Held],
    /// Variables it reads that must have the same value on the deployer (`celld deploy`) and
    /// on the nodes.
    pub shared_with_deployer: &'static [&'static str],
    /// The digest of its image index as celld's release notes publish it in full, when they
    /// do: the default image is the newest release with one.
    pub digest: Option<&'static str>,
}

/// A setting a release brings that the nodes may use only once every node of the fleet runs
/// that release (celld's upgrade notes call them gates).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Held {
    /// The variable.
    pub name: &'static str,
    /// What counts as using it.
    pub used: Use,
    /// Whether a rollback below the release needs the variable unset on every node first.
    pub unset_before_rollback: bool,
}

/// What counts as using a held setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// Set to anything but empty or `0`.
    Set,
    /// Set above celld's default, the number given.
    RaisedAbove(u64),
}

/// Whether nodes of older releases may roll to a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rolling {
    /// One node at a time.
    Yes,
    /// Never: every older node stops first.
    No,
    /// Only with bucket durability; with fleet durability (celld's default) every older node
    /// stops first.
    WithBucketDurability,
}

const NOTHING: Release = Release {
    version: (0, 0, 0),
    adds: &[],
    refuses: &[],
    gate: None,
    shutdown: None,
    features: &[],
    rolls_from_older: Rolling::Yes,
    no_return: false,
    held: &[],
    shared_with_deployer: &[],
    digest: None,
};

/// celld's default largest asset file of a deployment (CELLD_MAX_ASSET_FILE_BYTES), 25 MiB.
pub const MAX_ASSET_FILE_BYTES: u64 = 25 * 1024 * 1024;

/// What 0.6.1 brings that no node may use before every node runs it.
const HELD_0_6_1: &[Held] = &[
    Held {
        name: "CELLD_LTX_RETENTION_SECS",
        used: Use::Set,
        unset_before_rollback: true,
    },
    Held {
        name: "CELLD_MAX_ASSET_FILE_BYTES",
        used: Use::RaisedAbove(MAX_ASSET_FILE_BYTES),
        unset_before_rollback: false,
    },
];

/// Variables removed in 0.5.0, refused at startup even when empty.
const REFUSED_0_5_0: &[Refusal] = &[
    refused(
        "CELLD_SHUTDOWN_DRAIN_MS",
        "set CELLD_SHUTDOWN_TOTAL_MS alone; every shutdown wait is derived from it",
    ),
    refused(
        "CELLD_DRAIN_TOKEN_WAIT_MS",
        "set CELLD_SHUTDOWN_TOTAL_MS alone; the drain-token wait is ¾ of it",
    ),
    refused(
        "CELLD_PACED_HANDOFF",
        "remove it; handoff is always batched (CELLD_RELEASES)",
    ),
    refused(
        "CELLD_OUTPUT_GATE",
        "remove it; the setting no longer exists",
    ),
    refused(
        "CELLD_OTEL_SINK",
        "use CELLD_OTEL=1 or CELLD_OTEL=<collector URL>",
    ),
    refused(
        "CELLD_AI_BINDING",
        "remove it; the setting no longer exists",
    ),
    refused("CELLD_AI_URL", "remove it; the setting no longer exists"),
    refused(
        "CELLD_CLOUD_RESTART_ON_DEPLOY",
        "remove it; nodes adopt a deployment in place",
    ),
    refused(
        "CELLD_STORAGE_PROBE",
        "remove it; the storage probe can no longer be turned off",
    ),
    refused("CELLD_EVICTIONS", "remove it; the setting no longer exists"),
    refused(
        "CELLD_LOG_CAPTURE_WORKERS",
        "remove it; the setting no longer exists",
    ),
    refused(
        "CELLD_REBALANCE_BATCH_CELLS",
        "remove it; the setting no longer exists",
    ),
    refused(
        "CELLD_PRESENCE_SHADOW",
        "remove it; the setting no longer exists",
    ),
    refused(
        "CELLD_LOG_BUNDLE",
        "remove it; the setting no longer exists",
    ),
    refused(
        "CELLD_QUEUE_PRODUCER_GROUP_MS",
        "remove it; the setting no longer exists",
    ),
    refused(
        "CELLD_LOG_GROUP_COMMIT_MS",
        "remove it; the setting no longer exists",
    ),
    refused(
        "CELLD_TEST_OTEL_SWEEP_MS",
        "remove it; the setting no longer exists",
    ),
];

/// Variables removed in 0.6.0.
const REFUSED_0_6_0: &[Refusal] = &[
    refused(
        "CELLD_VARS_FILE",
        "deploy the values as the Worker's vars, in its wrangler config, or from a Secret with: kubectl celld deploy DIR --fleet FLEET --vars-from-secret NAME",
    ),
    refused(
        "CELLD_VAR_",
        "deploy the values as the Worker's vars, in its wrangler config, or from a Secret with: kubectl celld deploy DIR --fleet FLEET --vars-from-secret NAME",
    ),
    Refusal {
        name: "CELLD_WORKER_LOADER",
        instead: "remove it; the setting no longer exists",
        empty_tolerated: true,
    },
    refused(
        "CELLD_MAX_LOADED_WORKERS",
        "remove it; the setting no longer exists",
    ),
];

/// Every release the operator knows, oldest first.
pub const RELEASES: &[Release] = &[
    Release {
        version: (0, 2, 0),
        rolls_from_older: Rolling::No,
        ..NOTHING
    },
    Release {
        version: (0, 2, 1),
        ..NOTHING
    },
    Release {
        version: (0, 3, 0),
        ..NOTHING
    },
    Release {
        version: (0, 4, 0),
        gate: Some(Gate::FallsOpen { after_s: 120 }),
        shutdown: Some(Shutdown::Total),
        rolls_from_older: Rolling::No,
        ..NOTHING
    },
    Release {
        version: (0, 4, 1),
        adds: &[
            "CELLD_PLACEMENT_WEIGHT",
            "CELLD_REBALANCE_INTERVAL_MS",
            "CELLD_REBALANCE_BATCH_CELLS",
            "CELLD_RECOVERY_RETRY_MS",
            "CELLD_RECOVERY_RETRIES",
            "CELLD_LTX_PAGED",
        ],
        shutdown: Some(Shutdown::TokenWaitWithinThreeQuarters),
        no_return: true,
        ..NOTHING
    },
    // 0.4.1 cannot read 0.5.0's alarm discovery entries: every old node stops and its lease
    // expires before a 0.5.0 node starts, and no 0.4.x starts on the bucket afterwards.
    Release {
        version: (0, 5, 0),
        refuses: REFUSED_0_5_0,
        gate: Some(Gate::HeldUntilSettled),
        shutdown: Some(Shutdown::Derived),
        rolls_from_older: Rolling::No,
        no_return: true,
        ..NOTHING
    },
    Release {
        version: (0, 5, 1),
        ..NOTHING
    },
    Release {
        version: (0, 6, 0),
        refuses: REFUSED_0_6_0,
        features: &[FEATURE_CONTAINERS],
        rolls_from_older: Rolling::WithBucketDurability,
        // docs/RELEASE-0.6.0.md
        digest: Some("sha256:e188a7f2bb0b8cec9fb04ee4c3d1ed7cca0ea0419519ae2a9ba36e5b6fe5161b"),
        ..NOTHING
    },
    Release {
        version: (0, 6, 1),
        adds: &[
            "CELLD_LTX_RETENTION_SECS",
            "CELLD_MAX_ASSET_FILE_BYTES",
            "CELLD_MAX_DYNAMIC_WORKER_CODE_BYTES",
        ],
        held: HELD_0_6_1,
        // "must have the same value on the deployment builder, the managed deployment agent,
        // and the serving nodes"
        shared_with_deployer: &["CELLD_MAX_ASSET_FILE_BYTES"],
        ..NOTHING
    },
    Release {
        version: (0, 6, 2),
        ..NOTHING
    },
];

/// The oldest release whose contract the operator follows (its env, probes and shutdown).
pub const OLDEST_SUPPORTED: Triple = (0, 4, 0);

/// The version as a triple; a pre-release counts as its release (0.5.0-rc.1 is 0.5.0's line).
pub fn triple(v: &Version) -> Triple {
    (v.major, v.minor, v.patch)
}

/// The rules a celld version follows: every change of the releases up to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    /// The newest release in the table at or below the version.
    pub release: Triple,
    /// Variables it refuses at startup.
    pub refused: Vec<Refusal>,
    /// Its readiness gate.
    pub gate: Gate,
    /// Its shutdown bound.
    pub shutdown: Shutdown,
    /// Manifest features it serves, beyond those of 0.4.0.
    pub features: Vec<&'static str>,
}

impl Rules {
    /// The rules of `version`; a version newer than the table follows its newest release.
    pub fn of(version: &Version) -> Self {
        let mut rules = Self {
            release: OLDEST_SUPPORTED,
            refused: Vec::new(),
            gate: Gate::FallsOpen { after_s: 120 },
            shutdown: Shutdown::Total,
            features: Vec::new(),
        };
        for release in RELEASES.iter().take_while(|r| r.version <= triple(version)) {
            rules.release = release.version;
            rules.refused.extend_from_slice(release.refuses);
            rules.gate = release.gate.unwrap_or(rules.gate);
            rules.shutdown = release.shutdown.unwrap_or(rules.shutdown);
            rules.features.extend_from_slice(release.features);
        }
        rules
    }

    /// The refusal that `name` falls under, if any.
    pub fn refusal(&self, name: &str) -> Option<&Refusal> {
        self.refused.iter().find(|r| r.refuses(name))
    }
}

/// The release that first refused `name`, with its rule, if any release does.
pub fn first_refusal(name: &str) -> Option<(Triple, &'static Refusal)> {
    RELEASES.iter().find_map(|release| {
        release
            .refuses
            .iter()
            .find(|r| r.refuses(name))
            .map(|r| (release.version, r))
    })
}

/// `v0.5.0` for (0, 5, 0).
pub fn display((major, minor, patch): Triple) -> String {
    format!("v{major}.{minor}.{patch}")
}

#[cfg(test)]
mod tests;
