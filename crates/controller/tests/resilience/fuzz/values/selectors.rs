//! Label selectors: the one that selects a case's own fleet, others that select every fleet of
//! the namespace or none, selectors at the bounds of their lists, and malformed ones, their
//! keys and values also drawn from the label families.

use super::{Class, Gen};
use serde_json::{Map, Value, json};

/// `n` requirements on keys of their own that no fleet carries (`NotIn` selects every fleet).
fn not_in(g: &mut Gen, n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| json!({"key": format!("example.com/k{i}-{}", g.word(4)), "operator": "NotIn", "values": ["x"]}))
        .collect()
}

/// `n` label values, `first` among them.
fn values(g: &mut Gen, first: &str, n: usize) -> Value {
    let mut all = vec![json!(first)];
    all.extend((1..n).map(|_| json!(g.word(6))));
    Value::Array(all)
}

/// A `matchLabels` map of `key: value` and `more` entries no fleet carries.
fn labels(g: &mut Gen, key: &str, value: &str, more: usize) -> Value {
    let mut map = Map::new();
    map.insert(key.into(), json!(value));
    for _ in 0..more {
        map.insert(format!("example.com/{}", g.word(8)), json!(g.word(4)));
    }
    Value::Object(map)
}

impl Gen {
    /// A selector where a valid one selects the fleets labelled `key: value`: as is, through an
    /// expression, with a key or value of the label families, at the bounds of its lists (16
    /// requirements, 16 values, 32 labels), every fleet of the namespace (`{}`), none, or
    /// malformed.
    pub fn selector(&mut self, key: &str, value: &str) -> (Value, Class) {
        let own = json!({ key: value });
        if self.chance(0.3) {
            let (k, kc) = self.key();
            let (v, vc) = self.label_value();
            let class = kc.max(vc);
            let selector = one_of!(self;
                json!({"matchLabels": {key: value, k.clone(): v.clone()}}),
                json!({"matchLabels": own.clone(), "matchExpressions": [{"key": k.clone(), "operator": "NotIn", "values": [v.clone()]}]}),
                json!({"matchExpressions": [{"key": k.clone(), "operator": "DoesNotExist"}]}),
            );
            return (selector, class);
        }
        match self.class() {
            Class::Valid => {
                let other = self.word(5);
                let v = one_of!(self;
                    json!({"matchLabels": own.clone()}),
                    json!({"matchExpressions": [{"key": key, "operator": "In", "values": [value, other]}]}),
                    json!({"matchLabels": own.clone(), "matchExpressions": [{"key": format!("example.com/{}", self.word(6)), "operator": "DoesNotExist"}]}),
                    json!({}),
                    json!({"matchExpressions": [{"key": key, "operator": "Exists"}]}),
                    json!({"matchLabels": {self.word(6): self.word(5)}}),
                );
                (v, Class::Valid)
            }
            Class::Boundary => {
                let v = one_of!(self;
                    {
                        let mut all = vec![json!({"key": key, "operator": "In", "values": [value]})];
                        all.extend(not_in(self, 15));
                        json!({"matchExpressions": all})
                    },
                    json!({"matchExpressions": [{"key": key, "operator": "In", "values": values(self, value, 16)}]}),
                    json!({"matchLabels": labels(self, key, value, 31)}),
                    json!({"matchLabels": own.clone(), "matchExpressions": [{"key": format!("{}/{}", self.subdomain(253), self.label(63)), "operator": "DoesNotExist"}]}),
                    json!({"matchLabels": own.clone(), "matchExpressions": [{"key": key, "operator": "NotIn", "values": [self.label(63)]}]}),
                );
                (v, Class::Boundary)
            }
            Class::Hostile => {
                let v = one_of!(self;
                    {
                        let mut all = vec![json!({"key": key, "operator": "In", "values": [value]})];
                        all.extend(not_in(self, 16));
                        json!({"matchExpressions": all})
                    },
                    json!({"matchExpressions": [{"key": key, "operator": "In", "values": values(self, value, 17)}]}),
                    json!({"matchLabels": labels(self, key, value, 32)}),
                    json!({"matchExpressions": [{"key": key, "operator": "Equals", "values": [value]}]}),
                    json!({"matchExpressions": [{"key": key, "operator": "in", "values": [value]}]}),
                    json!({"matchExpressions": [{"key": key, "operator": "Gt", "values": ["1"]}]}),
                    json!({"matchExpressions": [{"key": key, "operator": "In"}]}),
                    json!({"matchExpressions": [{"key": key, "operator": "In", "values": []}]}),
                    json!({"matchExpressions": [{"key": key, "operator": "Exists", "values": [value]}]}),
                    json!({"matchExpressions": [{"operator": "Exists"}]}),
                    json!({"matchExpressions": [null]}),
                    json!({"matchLabels": {"": value}}),
                    json!({"matchLabels": {key: 5}}),
                    json!(format!("{key}={value}")),
                    Value::Null,
                );
                (v, Class::Hostile)
            }
        }
    }
}
