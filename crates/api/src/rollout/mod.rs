//! The `CelldRollout` resource: one Worker shipped to many fleets of a namespace in waves, each
//! wave gated on what the fleets and their nodes report (and on webhooks), halted and rolled
//! back when a gate fails.

pub mod reasons;
pub mod selection;
mod source;
mod status;
pub mod waves;

use crate::rules::durations;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::{CustomResource, KubeSchema};
use serde::{Deserialize, Serialize};

pub use source::RolloutSource;
pub use status::{
    CelldRolloutStatus, FleetPhase, GateResult, RolloutFleet, RolloutPhase, RolloutTarget,
    SkipReason, SkippedFleet, WavePhase, WaveStatus,
};

/// The most waves a rollout has.
pub const MAX_WAVES: usize = 20;

/// The most fleets one rollout moves: its status lists each.
pub const MAX_FLEETS: usize = 1000;

/// A Worker shipped to many CelldFleets of this namespace in waves: the operator publishes
/// spec.source into each selected fleet's bucket prefix (with its deploy Jobs, as a fleet's own
/// spec.source), one wave after the other, and starts the next wave only when every fleet of
/// the last one is Ready, every node adopted the new version, nothing new is Degraded and no
/// node restarted during the bake, and the webhooks agree. A failed gate halts the rollout and,
/// unless spec.onFailure is Halt, points the fleets already moved back at the version each had.
// printcolumn attributes repeat keys by design.
#[allow(clippy::duplicated_attributes)]
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[kube(
    group = "platform.celld.dev",
    version = "v1alpha1",
    kind = "CelldRollout",
    namespaced,
    status = "CelldRolloutStatus",
    shortname = "crl",
    category = "celld",
    doc = "A Worker shipped to many CelldFleets of the namespace in waves, each gated on the fleets' readiness, their nodes' adoption and webhooks; halted and rolled back when a gate fails.",
    cel,
    printcolumn(
        name = "Revision",
        type_ = "string",
        json_path = ".status.target.revision",
        description = "The revision being shipped"
    ),
    printcolumn(
        name = "Phase",
        type_ = "string",
        json_path = ".status.phase",
        description = "Progressing, Paused, WaitingForPromotion, Succeeded, Halted, RolledBack or Aborted"
    ),
    printcolumn(
        name = "Wave",
        type_ = "string",
        json_path = ".status.wave",
        description = "The current wave, as N/M"
    ),
    printcolumn(
        name = "Fleets",
        type_ = "string",
        json_path = ".status.moved",
        description = "Fleets on the new version out of the fleets the rollout moves, as N/M"
    ),
    printcolumn(
        name = "Age",
        type_ = "date",
        json_path = ".metadata.creationTimestamp"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct CelldRolloutSpec {
    /// The Worker to ship, as a fleet's spec.source: an OCI image holding the project, or a
    /// Flux source in this namespace. Each new revision (a new image reference, a new artifact
    /// of the Flux source, a new path) starts the rollout again from the first wave; fleets
    /// already moved keep the version they serve until their wave comes.
    pub source: RolloutSource,

    /// The CelldFleets of this namespace the rollout ships to ({} selects every one). Fleets
    /// with a spec.source of their own, fleets carrying the label
    /// platform.celld.dev/rollout-pin, previews, and fleets an older rollout already ships to
    /// are left alone and listed in status.skipped with the reason.
    #[schemars(transform = selector_schema)]
    pub selector: LabelSelector,

    /// The waves, in order: each moves some of the selected fleets (ordered by name) and must
    /// pass its gates before the next starts. A fleet no wave reaches is listed as skipped.
    #[schemars(length(min = 1, max = 20))]
    #[x_kube(validation = Rule::new("size(self) >= 1").message("spec.waves needs at least one wave, for example [{fleets: 1}, {fleets: '100%'}]"))]
    pub waves: Vec<Wave>,

    /// Gates beyond the built-in ones: how long a wave may take, and webhooks.
    #[serde(default)]
    pub gates: Gates,

    /// What a failed gate does: Rollback (default) halts the rollout and points every fleet it
    /// moved back at the version it served before; Halt only stops before the next wave.
    #[serde(default)]
    pub on_failure: FailurePolicy,

    /// Start no fleet and pass no wave while true (fleets already publishing finish). For a
    /// pause made outside git, `kubectl celld rollout pause` sets the annotation
    /// platform.celld.dev/rollout-paused, which GitOps tools leave alone.
    #[serde(default)]
    pub paused: bool,
}

/// One wave: which fleets it moves, how many at once, how long they bake.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(rename_all = "camelCase")]
#[x_kube(validation = Rule::new("!(has(self.fleets) && has(self.selector))").message("spec.waves[*]: a wave takes its fleets either by count (fleets) or by label (selector), not both"))]
pub struct Wave {
    /// How far this wave goes, counted over the selected fleets in their order: a number of
    /// fleets (3) or a percentage ('10%'), the fleets of earlier waves included (so 1, '10%',
    /// '100%' moves one fleet, then up to a tenth, then the rest). A percentage rounds up. With
    /// neither fleets nor selector the wave takes every fleet left.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = wave_fleets_schema)]
    #[x_kube(validation = Rule::new("string(self).matches('^([1-9][0-9]{0,2}|1000|(100|[1-9][0-9]?)%)$')").message("spec.waves[*].fleets must be a number of fleets from 1 to 1000, or a percentage from 1% to 100% such as '10%'"))]
    pub fleets: Option<IntOrString>,

    /// The wave's fleets by label, among the selected fleets no earlier wave took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(transform = wave_selector_schema)]
    pub selector: Option<LabelSelector>,

    /// How long the wave's fleets must stay healthy once every one serves the new version,
    /// before the next wave: a duration such as 10m, from 0s to 24h. Default 5m.
    #[serde(default = "default_bake")]
    #[schemars(length(min = 2, max = 16))]
    #[x_kube(validation = durations::rule("spec.waves[*].bake", "0s", "24h"))]
    pub bake: String,

    /// Fleets of the wave published at once: the others start as these serve the new version.
    /// Default: all of the wave's fleets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub max_parallel: Option<i32>,

    /// Automatic (default) starts the wave as soon as the one before passes; Manual waits for
    /// `kubectl celld rollout promote` (the annotation platform.celld.dev/promote-wave).
    #[serde(default)]
    pub approval: Approval,
}

/// Whether a wave starts by itself.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum Approval {
    /// It starts when the wave before passes.
    #[default]
    Automatic,
    /// It waits for a promotion.
    Manual,
}

/// Gates beyond the built-in ones (every fleet Ready, every node on the new version, no new
/// Degraded reason, no node restart or self-fence during the bake).
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Gates {
    /// How long a wave's fleets may take to publish the revision and have every node serve it,
    /// from the wave's start, before the wave fails: from 1m to 24h. Default 15m.
    #[serde(default = "default_progress_deadline")]
    #[schemars(length(min = 2, max = 16))]
    #[x_kube(validation = durations::rule("spec.gates.progressDeadline", "1m", "24h"))]
    pub progress_deadline: String,

    /// HTTP endpoints asked at the end of each wave's bake: each gets a POST with the rollout,
    /// the wave and its fleets as JSON, and passes the wave by answering 2xx (the Flagger
    /// convention). Names are unique.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 8))]
    #[x_kube(validation = Rule::new("self.all(w, self.exists_one(o, o.name == w.name))").message("spec.gates.webhooks: each webhook needs a name of its own"))]
    pub webhooks: Vec<WebhookGate>,
}

impl Default for Gates {
    fn default() -> Self {
        Self {
            progress_deadline: default_progress_deadline(),
            webhooks: Vec::new(),
        }
    }
}

/// A webhook a wave must pass.
#[derive(KubeSchema, Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WebhookGate {
    /// Its name, shown in the status: a DNS label.
    #[schemars(length(min = 1, max = 63))]
    #[x_kube(validation = crate::rules::names::dns_label_rule("spec.gates.webhooks[*].name", "a webhook gate", "smoke-tests"))]
    pub name: String,

    /// Where the POST goes: an http or https URL. Link-local addresses and cloud metadata
    /// endpoints are refused, here and, whatever the host is written as, when the operator
    /// resolves it.
    #[schemars(length(min = 8, max = 2048))]
    #[x_kube(validation = Rule::new("self.matches('^https?://[^\\\\s/?#@]+(/[^\\\\s]*)?$')").message("spec.gates.webhooks[*].url must be an http:// or https:// URL without credentials, such as http://gate.tests.svc:8080/check"))]
    #[x_kube(validation = Rule::new("!self.matches('(?i)^https?://(169[.]254[.]|\\\\[(fe[89ab][0-9a-f]:|fd00:ec2::254|::ffff:)|metadata[.]google[.]internal[.]?([:/]|$))')").message("spec.gates.webhooks[*].url must not name a link-local address or a cloud metadata endpoint (the operator also refuses a host that resolves to one)"))]
    #[x_kube(validation = Rule::new("!self.matches('^https?://(0[xX][0-9a-fA-F]*|[0-9]+)([.](0[xX][0-9a-fA-F]*|[0-9]+))*([:/?#]|$)') || self.matches('^https?://(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])([.](25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}([:/?#]|$)')").message("spec.gates.webhooks[*].url: a host written as an IPv4 address must be four decimal numbers from 0 to 255 without leading zeros, such as 10.0.0.7"))]
    pub url: String,

    /// How long one call may take, from 1s to 5m. Default 10s.
    #[serde(default = "default_webhook_timeout")]
    #[schemars(length(min = 2, max = 16))]
    #[x_kube(validation = durations::rule("spec.gates.webhooks[*].timeout", "1s", "5m"))]
    pub timeout: String,

    /// Calls after the first that fail (no answer, or not 2xx) before the gate fails, 10s
    /// apart. Default 2.
    #[serde(default = "default_webhook_retries")]
    #[schemars(range(min = 0, max = 10))]
    pub retries: i32,
}

/// What a failed gate does.
#[derive(
    Serialize, Deserialize, schemars::JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq,
)]
pub enum FailurePolicy {
    /// Halt, and point every fleet the rollout moved back at the version it had.
    #[default]
    Rollback,
    /// Halt; the fleets moved keep the new version.
    Halt,
}

fn default_bake() -> String {
    "5m".to_string()
}

fn default_progress_deadline() -> String {
    "15m".to_string()
}

fn default_webhook_timeout() -> String {
    "10s".to_string()
}

fn default_webhook_retries() -> i32 {
    2
}

/// Bounds on a label selector's lists, strings and maps (which keep the cost of its rules
/// within the API server's budget), and its rules, `at` naming it in messages.
fn bounded_selector(schema: &mut schemars::Schema, at: &str) {
    if let Some(root) = schema.pointer_mut("") {
        crate::rules::bounds::bound(
            root,
            crate::rules::bounds::Bounds {
                items: 16,
                length: 317,
                properties: 32,
            },
            &[],
        );
        crate::rules::label_selector::add(root, &[], at);
    }
}

fn selector_schema(schema: &mut schemars::Schema) {
    bounded_selector(schema, "spec.selector");
}

fn wave_selector_schema(schema: &mut schemars::Schema) {
    bounded_selector(schema, "spec.waves[*].selector");
}

/// spec.waves[*].fleets: a count or a percentage, at most 5 characters written out.
fn wave_fleets_schema(schema: &mut schemars::Schema) {
    if let Some(root) = schema
        .pointer_mut("")
        .and_then(serde_json::Value::as_object_mut)
    {
        root.insert("maxLength".into(), serde_json::json!(5));
    }
}

impl Wave {
    /// spec.waves[*].bake as a duration; None when it is not of the admitted form.
    pub fn bake(&self) -> Option<std::time::Duration> {
        crate::fleet::parse_duration(&self.bake)
    }
}

impl CelldRollout {
    /// The revision this rollout hands the fleet `fleet` (of its namespace): its status' target,
    /// while the fleet is in one of its waves in a phase that follows the rollout
    /// ([`FleetPhase::follows`]); None otherwise, and once the fleet is being rolled back.
    pub fn target_for(&self, fleet: &str) -> Option<&RolloutTarget> {
        let status = self.status.as_ref()?;
        let follows = status
            .waves
            .iter()
            .flat_map(|w| &w.fleets)
            .any(|f| f.name == fleet && f.phase.follows());
        follows.then_some(status.target.as_ref()).flatten()
    }
}
