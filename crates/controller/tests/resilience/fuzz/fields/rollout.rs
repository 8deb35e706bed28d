//! The rollout fields the generator mutates: its metadata (the annotations that pause, promote
//! and abort it among them), its selector, pause and failure policy here, its source, waves and
//! gates in files of their own.

use super::gates::gate_fields;
use super::meta::{map_entry, object_name};
use super::rollout_source::source_fields;
use super::waves::wave_fields;
use super::{Ctx, Field, Mutated, set};
use crate::fuzz::families::Family;
use crate::fuzz::values::{Class, Gen};
use celld_api::labels;
use serde_json::{Value, json};

/// The label a rollout case's own fleet carries, and the base rollout selects.
pub const ROLLOUT_LABEL: &str = "fuzz.celld.dev/rollout";

/// The value of [`ROLLOUT_LABEL`] on the fleet of case `index`.
pub fn own_label(index: usize) -> String {
    format!("r{index:05}")
}

/// Sets `spec.selector` to a generated selector (a valid one may select the case's own fleet).
fn selector(m: &mut Value, g: &mut Gen, ctx: &Ctx) -> Mutated {
    let (v, c) = g.selector(ROLLOUT_LABEL, &own_label(ctx.index));
    set(m, "spec.selector", v.clone());
    (c, v)
}

/// One of the annotations that pause, promote, abort or restart a rollout, with a value.
fn control_annotation(m: &mut Value, g: &mut Gen) -> Mutated {
    let key = one_of!(g;
        labels::ROLLOUT_PAUSED,
        labels::PROMOTE_WAVE,
        labels::ROLLOUT_ABORT,
        labels::RECONCILE_REQUESTED_AT,
    );
    let (class, value) = match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g; json!("release freeze"), json!("2"), json!(""), json!("2 at 2026-12-07T10:00:00Z")),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g; json!("2147483647"), json!("0"), json!(g.printable(64 * 1024))),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!("-1"),
                json!("99999999999"),
                json!("two"),
                json!(g.printable(300 * 1024)),
                json!(5),
                Value::Null,
            ),
        ),
    };
    let entry = json!({ key: value });
    set(m, "metadata.annotations", entry.clone());
    (class, entry)
}

/// Every field of a rollout the generator mutates.
pub fn rollout_fields() -> Vec<Field> {
    let mut fields = vec![
        Field {
            family: Family::ObjectNames,
            path: "metadata.name",
            mutate: |m, g, ctx| {
                let (c, v) = object_name(g, ctx, 'r');
                set(m, "metadata.name", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::LabelsAndSelectors,
            path: "metadata.labels",
            mutate: |m, g, _| map_entry(m, "metadata.labels", g, false),
        },
        Field {
            family: Family::Annotations,
            path: "metadata.annotations",
            mutate: |m, g, _| map_entry(m, "metadata.annotations", g, true),
        },
        Field {
            family: Family::Controls,
            path: "metadata.annotations (pause, promote, abort, reconcile-requested-at)",
            mutate: |m, g, _| control_annotation(m, g),
        },
        Field {
            family: Family::LabelsAndSelectors,
            path: "spec.selector",
            mutate: selector,
        },
        Field {
            family: Family::Controls,
            path: "spec.paused",
            mutate: |m, g, _| {
                let (c, v) = one_of!(g;
                    (Class::Valid, json!(true)),
                    (Class::Valid, json!(false)),
                    (Class::Hostile, json!("true")),
                    (Class::Hostile, json!("yes")),
                    (Class::Hostile, json!(1)),
                    (Class::Hostile, Value::Null),
                );
                set(m, "spec.paused", v.clone());
                (c, v)
            },
        },
        Field {
            family: Family::Enums,
            path: "spec.onFailure",
            mutate: |m, g, _| {
                let (c, v) = one_of!(g;
                    (Class::Valid, json!("Rollback")),
                    (Class::Valid, json!("Halt")),
                    (Class::Hostile, json!("rollback")),
                    (Class::Hostile, json!("Abort")),
                    (Class::Hostile, json!("")),
                    (Class::Hostile, json!(0)),
                );
                set(m, "spec.onFailure", v.clone());
                (c, v)
            },
        },
    ];
    fields.extend(source_fields());
    fields.extend(wave_fields());
    fields.extend(gate_fields());
    fields
}
