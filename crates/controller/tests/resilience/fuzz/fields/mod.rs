//! One mutator per field: each writes a generated value (valid, boundary or hostile) into a
//! manifest, adding what the field needs around it (an ingress for its hostname, an inline
//! connection for an endpoint, a webhook for its URL...). Fleet, store and rollout fields.

mod fleet;
mod gates;
mod meta;
mod pods;
mod rollout;
mod rollout_source;
mod routing;
mod storage;
mod store;
mod waves;

pub use fleet::fleet_fields;
pub use rollout::{ROLLOUT_LABEL, own_label, rollout_fields};
pub use store::store_fields;

use super::families::Family;
use super::values::{Class, Gen};
use serde_json::{Map, Value};

/// What a mutator knows about the case it mutates.
pub struct Ctx<'a> {
    pub index: usize,
    pub fleet: &'a str,
    pub endpoint: &'a str,
    pub region: &'a str,
    pub bucket: &'a str,
    pub prefix: &'a str,
}

/// A mutator's result: the class of the value it wrote and the value, for messages.
pub type Mutated = (Class, Value);

/// One field the generator mutates.
pub struct Field {
    pub family: Family,
    pub path: &'static str,
    pub mutate: fn(&mut Value, &mut Gen, &Ctx) -> Mutated,
}

/// Sets `path` (dot-separated object keys) to `value`, creating objects on the way.
pub fn set(manifest: &mut Value, path: &str, value: Value) {
    let mut at = manifest;
    let mut keys = path.split('.').peekable();
    while let Some(key) = keys.next() {
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let object = at.as_object_mut().expect("an object");
        if keys.peek().is_none() {
            object.insert(key.to_string(), value);
            return;
        }
        at = object
            .entry(key)
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// Removes `key` from the object at `parent`, if both exist.
pub fn remove(manifest: &mut Value, parent: &str, key: &str) {
    let mut at = manifest;
    for k in parent.split('.') {
        match at.get_mut(k) {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(object) = at.as_object_mut() {
        object.remove(key);
    }
}

/// The more hostile of two classes.
pub fn worst(a: Class, b: Class) -> Class {
    a.max(b)
}
