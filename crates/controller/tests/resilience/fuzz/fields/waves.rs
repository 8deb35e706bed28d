//! A rollout's waves: how many there are, how far each goes (a count or a percentage), which
//! fleets by label, how long each bakes, how many fleets publish at once, and approval.

use super::rollout::{ROLLOUT_LABEL, own_label};
use super::{Field, Mutated, worst};
use crate::fuzz::families::Family;
use crate::fuzz::values::{Class, Gen};
use serde_json::{Value, json};

/// One of the rollout's waves, chosen by `g` (the base rollout has two).
fn wave<'a>(m: &'a mut Value, g: &mut Gen) -> &'a mut Value {
    let waves = &mut m["spec"]["waves"];
    if waves.as_array().is_none_or(Vec::is_empty) {
        *waves = json!([{}]);
    }
    let n = waves.as_array().map_or(1, Vec::len);
    &mut waves[g.below(n)]
}

/// How far a wave goes: a count from 1 to 1000 or a percentage from 1% to 100%, as the CRD
/// says; and hostile ones (zero, beyond, not a number, digits in a string, other notations).
fn fleets(g: &mut Gen) -> Mutated {
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g; json!(1), json!(2), json!("10%"), json!("50%"), json!("100%"), Value::Null),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g; json!(1000), json!("1%"), json!("100%"), json!(1)),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!(0),
                json!(1001),
                json!(-1),
                json!("0%"),
                json!("101%"),
                json!("150%"),
                json!("10 %"),
                json!("%"),
                json!("5"),
                json!("1000"),
                json!("05"),
                json!("1e3"),
                json!("0x10"),
                json!(1.5),
                json!("10%%"),
                json!("100.0%"),
                json!(""),
                json!("1000%"),
                json!(true),
                json!("\u{0663}%"),
                json!(2_147_483_648_i64),
            ),
        ),
    }
}

/// The whole list of waves: one, several, twenty (the most), none, twenty-one, not a list.
fn waves(g: &mut Gen) -> Mutated {
    let counted = |n: usize| -> Value {
        Value::Array(
            (1..=n)
                .map(|i| json!({"fleets": i, "bake": "0s"}))
                .collect(),
        )
    };
    match g.class() {
        Class::Valid => (
            Class::Valid,
            one_of!(g;
                json!([{}]),
                json!([{"fleets": 1, "bake": "0s"}, {"fleets": "50%"}, {}]),
                json!([{"selector": {"matchLabels": {"ring": "canary"}}}, {"fleets": "100%", "approval": "Manual"}]),
            ),
        ),
        Class::Boundary => (
            Class::Boundary,
            one_of!(g; counted(20), json!([{"fleets": 5}, {"fleets": 1}]), json!([{"fleets": "100%"}, {}])),
        ),
        Class::Hostile => (
            Class::Hostile,
            one_of!(g;
                json!([]),
                counted(21),
                Value::Null,
                json!("1,10%,100%"),
                json!([null]),
                json!([{"fleets": 1, "selector": {"matchLabels": {"ring": "canary"}}}]),
                json!([{"fleets": 1, "bake": "1h", "unknown": true}]),
            ),
        ),
    }
}

/// Every field of a rollout's waves the generator mutates.
pub fn wave_fields() -> Vec<Field> {
    vec![
        Field {
            family: Family::Waves,
            path: "spec.waves",
            mutate: |m, g, _| {
                let (c, v) = waves(g);
                m["spec"]["waves"] = v.clone();
                (c, v)
            },
        },
        Field {
            family: Family::Waves,
            path: "spec.waves[*].fleets",
            mutate: |m, g, _| {
                let (c, v) = fleets(g);
                let w = wave(m, g);
                w["fleets"] = v.clone();
                if let Some(w) = w.as_object_mut() {
                    w.remove("selector");
                }
                (c, v)
            },
        },
        Field {
            family: Family::LabelsAndSelectors,
            path: "spec.waves[*].selector",
            mutate: |m, g, ctx| {
                let (v, c) = g.selector(ROLLOUT_LABEL, &own_label(ctx.index));
                let both = g.chance(0.15);
                let w = wave(m, g);
                w["selector"] = v.clone();
                match w.as_object_mut() {
                    Some(w) if !both => {
                        w.remove("fleets");
                        (c, v)
                    }
                    _ => (worst(c, Class::Hostile), json!({"with fleets": v})),
                }
            },
        },
        Field {
            family: Family::Durations,
            path: "spec.waves[*].bake",
            mutate: |m, g, _| {
                let (v, c) = g.duration("0s", "24h");
                wave(m, g)["bake"] = v.clone();
                (c, v)
            },
        },
        Field {
            family: Family::Counts,
            path: "spec.waves[*].maxParallel",
            mutate: |m, g, _| {
                let (v, c) = g.count(1, 1000);
                wave(m, g)["maxParallel"] = v.clone();
                (c, v)
            },
        },
        Field {
            family: Family::Enums,
            path: "spec.waves[*].approval",
            mutate: |m, g, _| {
                let (c, v) = one_of!(g;
                    (Class::Valid, json!("Automatic")),
                    (Class::Valid, json!("Manual")),
                    (Class::Hostile, json!("manual")),
                    (Class::Hostile, json!("Auto")),
                    (Class::Hostile, json!("")),
                );
                wave(m, g)["approval"] = v.clone();
                (c, v)
            },
        },
    ]
}
