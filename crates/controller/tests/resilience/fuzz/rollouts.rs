//! Rollout cases: a valid CelldRollout with one to three fields mutated, and the fleet made for
//! it. The base rollout ships an image to the fleets labelled for it (the case's own fleet,
//! applied first) in two waves, with the fuzz's [gate](super::gate) as its webhook: so an
//! admitted rollout really starts its first wave (the fleet's deploy Job is created), and one
//! that selects every fleet of the namespace (`{}`) or none, or whose fleet is pinned, has its
//! own source or is taken away, says so. Cases are drawn from a stream of their own and spread
//! evenly among the fleet and store cases, so every batch has some.

use super::cases::{Case, DEPLOYED_SHARE, Mutation, how_many, mutate, pick_fields};
use super::families::Family;
use super::fields::{Ctx, Field, ROLLOUT_LABEL, own_label, rollout_fields};
use super::values::{Class, Gen};
use celld_api::{GROUP, VERSION};
use celld_fixtures::manifests::{fleet_manifest, inline_spec, store_spec};
use celld_testkit::S3Settings;
use serde_json::{Value, json};

/// Rollout cases per 100 fleet and store cases.
const PER_100: usize = 15;

/// Mixed into the seed for the rollout cases' stream.
const STREAM: u64 = 0x0000_7011_0000_0000;

/// Share of rollout cases whose fleet is pinned, has a source of its own, or is not made.
const TARGET_SHARE: f64 = 0.1;

/// The image every base rollout ships.
const IMAGE: &str = "registry.invalid/fuzz/web-worker:1@sha256:ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff";

/// How many rollout cases go with `count` fleet and store cases.
pub fn count(count: usize) -> usize {
    count * PER_100 / 100
}

/// The base rollout `name`: the fleets labelled [`ROLLOUT_LABEL`]=`label` in two waves (one
/// fleet, then the rest), the webhook `gate` asked after each.
pub fn base(name: &str, label: &str, gate: &str) -> Value {
    json!({
        "apiVersion": format!("{GROUP}/{VERSION}"), "kind": "CelldRollout",
        "metadata": {"name": name},
        "spec": {
            "source": {"image": {"reference": IMAGE}},
            "selector": {"matchLabels": {ROLLOUT_LABEL: label}},
            "waves": [{"fleets": 1, "bake": "1m"}, {"fleets": "100%"}],
            "gates": {
                "progressDeadline": "15m",
                "webhooks": [{"name": "smoke", "url": gate, "timeout": "5s", "retries": 0}],
            },
        },
    })
}

/// The rollout cases of a run of `fleet_cases` fleet and store cases from `seed`, numbered
/// after them.
pub fn generate(
    seed: u64,
    fleet_cases: usize,
    s3: &S3Settings,
    run: &str,
    gate: &str,
) -> Vec<Case> {
    let mut g = Gen::new(seed ^ STREAM);
    let fields = rollout_fields();
    (fleet_cases..fleet_cases + count(fleet_cases))
        .map(|index| rollout_case(&mut g, index, &fields, s3, run, gate))
        .collect()
}

/// The part of a field's path that names it (`spec.source` of `spec.source (neither ...)`).
fn named(field: &Field) -> &str {
    field.path.split(' ').next().unwrap_or(field.path)
}

/// Whether two rollout fields may not be mutated together: one within the other (the waves and
/// a wave's bake), which would overwrite it.
fn nested(a: &Field, b: &Field) -> bool {
    let (a, b) = (named(a), named(b));
    let within = |inner: &str, outer: &str| {
        inner
            .strip_prefix(outer)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['.', '[']))
    };
    within(a, b) || within(b, a)
}

/// Takes the case's fleet out of the rollout's way: pinned, with a source of its own, or not made.
fn target(g: &mut Gen, fleet: &mut Option<Value>) -> Mutation {
    let (class, what) = match (g.below(3), fleet.as_mut()) {
        (0, Some(f)) => {
            f["metadata"]["labels"][celld_api::labels::ROLLOUT_PIN] = json!("1.4.1");
            (Class::Valid, "pinned (platform.celld.dev/rollout-pin)")
        }
        (1, Some(f)) => {
            f["spec"]["source"] = json!({"image": {"reference": IMAGE}});
            (Class::Valid, "a spec.source of its own")
        }
        _ => {
            *fleet = None;
            (Class::Boundary, "not made: the selector matches no fleet")
        }
    };
    Mutation {
        family: Family::Targets,
        path: "the fleet it selects",
        class,
        value: json!(what),
    }
}

fn rollout_case(
    g: &mut Gen,
    index: usize,
    fields: &[Field],
    s3: &S3Settings,
    run: &str,
    gate: &str,
) -> Case {
    let name = format!("r{index:05}");
    let fleet_name = format!("c{index:05}");
    let prefix = format!("{run}/{fleet_name}");
    let spec = if g.chance(0.5) {
        inline_spec(s3, &prefix, "creds", 1)
    } else {
        store_spec(s3, &prefix, "store", 1)
    };
    let mut fleet = fleet_manifest(&fleet_name, spec);
    fleet["metadata"]["labels"] = json!({ ROLLOUT_LABEL: own_label(index) });
    let mut manifest = base(&name, &own_label(index), gate);
    let n = how_many(g);
    let chosen = pick_fields(g, fields, n, nested);
    let ctx = Ctx {
        index,
        fleet: &fleet_name,
        endpoint: &s3.endpoint,
        region: &s3.region,
        bucket: &s3.bucket,
        prefix: &prefix,
    };
    let mut mutations = mutate(g, &mut manifest, &chosen, &ctx);
    let mut companion = Some(fleet);
    if g.chance(TARGET_SHARE) {
        mutations.push(target(g, &mut companion));
    }
    let deployed = companion.is_some() && g.chance(DEPLOYED_SHARE);
    Case {
        index,
        manifest,
        companion,
        mutations,
        deployed,
        prefix,
    }
}

/// The fleet and store cases with the rollout cases spread evenly among them.
pub fn interleave(cases: Vec<Case>, rollouts: Vec<Case>) -> Vec<Case> {
    let (n, r) = (cases.len().max(1), rollouts.len());
    let mut rollouts = rollouts.into_iter().enumerate().peekable();
    let mut all = Vec::with_capacity(n + r);
    for (i, case) in cases.into_iter().enumerate() {
        all.push(case);
        while let Some((_, rollout)) = rollouts.next_if(|(j, _)| j * n / r.max(1) <= i) {
            all.push(rollout);
        }
    }
    all.extend(rollouts.map(|(_, rollout)| rollout));
    all
}
