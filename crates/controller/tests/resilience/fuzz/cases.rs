//! Generated cases: a valid fleet, store or rollout manifest with one to three fields mutated
//! (rollout cases in [`rollouts`](super::rollouts)). The same seed always gives the same cases.

use super::families::Family;
use super::fields::{Ctx, Field, fleet_fields, store_fields};
use super::rollouts;
use super::values::{Class, Gen};
use celld_fixtures::manifests::{fleet_manifest, inline_spec, store_manifest, store_spec};
use celld_testkit::S3Settings;
use serde_json::Value;

/// One mutated field of a case.
#[derive(Debug, Clone)]
pub struct Mutation {
    pub family: Family,
    pub path: &'static str,
    pub class: Class,
    pub value: Value,
}

impl Mutation {
    /// `spec.replicas = 1001 (hostile)`, the value cut to a readable length.
    pub fn describe(&self) -> String {
        let mut value = self.value.to_string();
        if value.len() > 120 {
            let mut end = 120;
            while !value.is_char_boundary(end) {
                end -= 1;
            }
            value = format!("{}... ({} bytes)", &value[..end], value.len());
        }
        format!("{} = {value} ({})", self.path, self.class.as_str())
    }
}

/// What a case applies: a fleet, a store and a fleet that uses it, or a rollout and (unless
/// the case takes it away) the fleet made for it.
#[derive(Debug, Clone)]
pub struct Case {
    pub index: usize,
    /// The manifest under test.
    pub manifest: Value,
    /// For a store case, a valid fleet that references the store; for a rollout case, the
    /// valid fleet its base selects (applied first).
    pub companion: Option<Value>,
    pub mutations: Vec<Mutation>,
    /// Whether a Worker is deployed under the fleet's prefix (so its nodes start).
    pub deployed: bool,
    /// The fleet's bucket prefix in the test bucket.
    pub prefix: String,
}

impl Case {
    pub fn kind(&self) -> &str {
        self.manifest["kind"].as_str().unwrap_or("?")
    }

    /// The kind the case mutates, for the report.
    pub fn kind_label(&self) -> &'static str {
        match self.kind() {
            "CelldObjectStore" => "CelldObjectStore",
            "CelldRollout" => "CelldRollout",
            _ => "CelldFleet",
        }
    }

    pub fn name(&self) -> &str {
        self.manifest["metadata"]["name"].as_str().unwrap_or("")
    }

    /// The fleet whose status tells whether the case was reconciled: the case's own, or its
    /// companion.
    pub fn fleet(&self) -> Option<&Value> {
        match self.kind_label() {
            "CelldFleet" => Some(&self.manifest),
            _ => self.companion.as_ref(),
        }
    }

    pub fn describe(&self) -> String {
        let mutations: Vec<String> = self.mutations.iter().map(Mutation::describe).collect();
        format!(
            "case {} ({} {}): {}",
            self.index,
            self.kind(),
            self.name(),
            mutations.join("; ")
        )
    }
}

/// Share of cases that mutate a store rather than a fleet.
const STORE_SHARE: f64 = 0.15;

/// Share of fleets with a deployed Worker (their nodes start; the rest are held at 0 nodes).
pub const DEPLOYED_SHARE: f64 = 0.1;

/// `count` fleet and store cases from `seed`, and [`rollouts::count`] rollout cases among them
/// (from a stream of their own, so the fleet and store cases are the same with or without
/// them); `run_prefix` is the bucket prefix of this run, `gate` the URL of the fuzz's webhook.
pub fn generate(
    seed: u64,
    count: usize,
    s3: &S3Settings,
    run_prefix: &str,
    gate: &str,
) -> Vec<Case> {
    let mut g = Gen::new(seed);
    let fleet_fields = fleet_fields();
    let store_fields = store_fields();
    let cases = (0..count)
        .map(|index| {
            if g.chance(STORE_SHARE) {
                store_case(&mut g, index, &store_fields, s3, run_prefix)
            } else {
                fleet_case(&mut g, index, &fleet_fields, s3, run_prefix)
            }
        })
        .collect();
    let rollouts = rollouts::generate(seed, count, s3, run_prefix, gate);
    rollouts::interleave(cases, rollouts)
}

/// How many fields a case mutates: one (70%), two (20%) or three.
pub fn how_many(g: &mut Gen) -> usize {
    match g.below(10) {
        0..=6 => 1,
        7..=8 => 2,
        _ => 3,
    }
}

/// Whether two fleet or store fields may not be mutated together: the same field, or replicas
/// with a field that decides whether the bucket is readable.
fn fleet_clash(a: &Field, b: &Field) -> bool {
    a.path == b.path
        || (a.family == Family::Replicas && b.family.touches_connection())
        || (b.family == Family::Replicas && a.family.touches_connection())
}

/// Picks `n` different fields, none two that `clash`.
pub fn pick_fields<'a>(
    g: &mut Gen,
    fields: &'a [Field],
    n: usize,
    clash: fn(&Field, &Field) -> bool,
) -> Vec<&'a Field> {
    let mut picked: Vec<&Field> = Vec::new();
    while picked.len() < n {
        let field = &fields[g.below(fields.len())];
        if !picked.iter().any(|p| clash(p, field)) {
            picked.push(field);
        }
    }
    picked
}

/// Applies the mutators of `fields` to `manifest`, in order.
pub fn mutate(g: &mut Gen, manifest: &mut Value, fields: &[&Field], ctx: &Ctx) -> Vec<Mutation> {
    fields
        .iter()
        .map(|field| {
            let (class, value) = (field.mutate)(manifest, g, ctx);
            Mutation {
                family: field.family,
                path: field.path,
                class,
                value,
            }
        })
        .collect()
}

fn fleet_case(g: &mut Gen, index: usize, fields: &[Field], s3: &S3Settings, run: &str) -> Case {
    let name = format!("c{index:05}");
    let prefix = format!("{run}/{name}");
    let spec = if g.chance(0.5) {
        inline_spec(s3, &prefix, "creds", 1)
    } else {
        store_spec(s3, &prefix, "store", 1)
    };
    let mut manifest = fleet_manifest(&name, spec);
    let n = how_many(g);
    let chosen = pick_fields(g, fields, n, fleet_clash);
    let ctx = Ctx {
        index,
        fleet: &name,
        endpoint: &s3.endpoint,
        region: &s3.region,
        bucket: &s3.bucket,
        prefix: &prefix,
    };
    let mutations = mutate(g, &mut manifest, &chosen, &ctx);
    let deployed =
        !mutations.iter().any(|m| m.family == Family::Replicas) && g.chance(DEPLOYED_SHARE);
    Case {
        index,
        manifest,
        companion: None,
        mutations,
        deployed,
        prefix,
    }
}

fn store_case(g: &mut Gen, index: usize, fields: &[Field], s3: &S3Settings, run: &str) -> Case {
    let name = format!("s{index:05}");
    let fleet_name = format!("c{index:05}");
    let prefix = format!("{run}/{fleet_name}");
    let mut manifest = store_manifest(&name, s3, "creds");
    let n = how_many(g).min(2);
    let chosen = pick_fields(g, fields, n, fleet_clash);
    let ctx = Ctx {
        index,
        fleet: &fleet_name,
        endpoint: &s3.endpoint,
        region: &s3.region,
        bucket: &s3.bucket,
        prefix: &prefix,
    };
    let mutations = mutate(g, &mut manifest, &chosen, &ctx);
    let store_name = manifest["metadata"]["name"]
        .as_str()
        .unwrap_or(&name)
        .to_string();
    let companion = fleet_manifest(&fleet_name, store_spec(s3, &prefix, &store_name, 1));
    Case {
        index,
        manifest,
        companion: Some(companion),
        mutations,
        deployed: g.chance(DEPLOYED_SHARE),
        prefix,
    }
}
