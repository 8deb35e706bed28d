//! A CelldFleet as the fleet cache keeps it: its metadata and spec parsed, its status as JSON
//! text ([`PackedText`], deflated). Lookups across every fleet (which fleets use a Secret, a
//! store or a Flux source; the capacity scan) read the spec and metadata only; the status, a
//! dozen conditions whose strings took about 2 KB of every cached fleet, is parsed back when
//! a reconcile or the status follower takes the whole fleet ([`CachedFleet::fleet`]).

use crate::cache::packed_text::PackedText;
use celld_api::{CelldFleet, conditions};
use kube::Resource;
use kube::api::ObjectMeta;
use kube::core::DeserializeGuard;
use kube::core::error_boundary::InvalidObject;
use serde::de::{Deserialize, Deserializer, Error as _};
use std::borrow::Cow;

/// A cached fleet; see the [module](self).
#[derive(Debug, Clone)]
pub struct CachedFleet {
    /// The fleet without its status, or why it does not match the schema.
    guard: DeserializeGuard<CelldFleet>,
    /// Its status as JSON, empty when it has none.
    status: PackedText,
    /// Its Ready condition: true or false, None when it has none or it is Unknown. Counted for
    /// the fleets-by-Ready gauge every few seconds, without parsing every status.
    ready: Option<bool>,
}

impl CachedFleet {
    /// The whole fleet, its status parsed back; the reason when it does not match the schema.
    pub fn fleet(&self) -> Result<CelldFleet, Box<InvalidObject>> {
        let mut fleet = self.guard.0.clone().map_err(Box::new)?;
        if !self.status.is_empty() {
            let status = self
                .status
                .text()
                .and_then(|text| serde_json::from_str(&text));
            fleet.status = Some(status.map_err(|e| {
                Box::new(InvalidObject {
                    error: format!("its cached status does not read back: {e}"),
                    metadata: fleet.metadata.clone(),
                })
            })?);
        }
        Ok(fleet)
    }

    /// The status of its Ready condition: None when it has none, or it is Unknown.
    pub fn ready(&self) -> Option<bool> {
        self.ready
    }

    /// The fleet with no status (`status` is None whatever the fleet's is), when it matches
    /// the schema: for what its metadata and spec tell.
    pub fn without_status(&self) -> Option<&CelldFleet> {
        self.guard.0.as_ref().ok()
    }
}

impl CachedFleet {
    /// `fleet` as the cache keeps it; an error when its status does not serialize.
    fn keep(mut fleet: CelldFleet) -> Result<Self, serde_json::Error> {
        let (status, ready) = match fleet.status.take() {
            Some(s) => {
                let ready =
                    conditions::find(&s.conditions, conditions::READY).and_then(|c| {
                        match c.status.as_str() {
                            "True" => Some(true),
                            "False" => Some(false),
                            _ => None,
                        }
                    });
                (PackedText::pack(serde_json::to_string(&s)?), ready)
            }
            None => (PackedText::default(), None),
        };
        Ok(Self {
            guard: DeserializeGuard(Ok(fleet)),
            status,
            ready,
        })
    }
}

impl<'de> Deserialize<'de> for CachedFleet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        match DeserializeGuard::<CelldFleet>::deserialize(deserializer)?.0 {
            Ok(fleet) => Self::keep(fleet).map_err(D::Error::custom),
            Err(invalid) => Ok(Self {
                guard: DeserializeGuard(Err(invalid)),
                status: PackedText::default(),
                ready: None,
            }),
        }
    }
}

impl Resource for CachedFleet {
    type DynamicType = ();
    type Scope = <CelldFleet as Resource>::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        CelldFleet::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        CelldFleet::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        CelldFleet::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        CelldFleet::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        self.guard.meta()
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        self.guard.meta_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object() -> serde_json::Value {
        json!({
            "apiVersion": "platform.celld.dev/v1alpha1", "kind": "CelldFleet",
            "metadata": {"name": "web", "namespace": "team", "uid": "u1", "resourceVersion": "9"},
            "spec": {"replicas": 2, "objectStorage": {"bucket": "s3://b/web"}},
            "status": {
                "observedGeneration": 1, "replicas": 2, "readyReplicas": 2,
                "conditions": [{"type": "Ready", "status": "True", "reason": "Serving",
                    "message": "2/2 nodes ready", "observedGeneration": 1,
                    "lastTransitionTime": "2026-12-03T10:00:00Z"}],
            },
        })
    }

    #[test]
    fn the_whole_fleet_reads_back_with_its_status() {
        let cached: CachedFleet = serde_json::from_value(object()).unwrap();
        let typed: CelldFleet = serde_json::from_value(object()).unwrap();
        let json = |f: &CelldFleet| serde_json::to_value(f).unwrap();
        assert_eq!(json(&cached.fleet().unwrap()), json(&typed));
        let without = cached.without_status().unwrap();
        assert_eq!(without.status, None);
        assert_eq!(
            (without.spec.replicas, cached.meta().uid.as_deref()),
            (2, Some("u1"))
        );
        assert_eq!(cached.ready(), Some(true));
    }

    #[test]
    fn a_fleet_without_a_status_reads_back_without_one() {
        let mut object = object();
        object.as_object_mut().unwrap().remove("status");
        let cached: CachedFleet = serde_json::from_value(object).unwrap();
        assert_eq!(cached.fleet().unwrap().status, None);
        assert_eq!(cached.ready(), None);
    }

    #[test]
    fn a_fleet_off_the_schema_keeps_its_metadata_and_the_reason() {
        let mut object = object();
        object["spec"]["replicas"] = json!("two");
        let cached: CachedFleet = serde_json::from_value(object).unwrap();
        assert_eq!(cached.meta().name.as_deref(), Some("web"));
        assert!(cached.without_status().is_none());
        let invalid = cached.fleet().unwrap_err();
        assert!(invalid.error.contains("\"two\""), "{}", invalid.error);
    }

    #[test]
    fn a_status_that_does_not_read_back_is_an_error_not_a_panic() {
        let mut cached: CachedFleet = serde_json::from_value(object()).unwrap();
        cached.status = PackedText::Plain(r#"{"replicas":"many"}"#.into());
        let invalid = cached.fleet().unwrap_err();
        assert!(invalid.error.contains("cached status"), "{}", invalid.error);
        assert_eq!(invalid.metadata.name.as_deref(), Some("web"));
    }
}
