//! Children as the caches keep them: the metadata parsed, everything else as the JSON text the
//! API server sent. A typed Kubernetes object holds every optional field of every nested struct
//! inline, set or not: a fleet's StatefulSet takes about 20 KiB parsed and 4 KiB as text. The
//! caches are read by metadata (resourceVersion, owner) on every reconcile, and in full only
//! when a fleet's child is compared with its plan, so the full object is parsed then
//! ([`Compact::expand`]). Labels and annotations are kept as text too: parsed, they took more
//! than the rest of a child's text (a map node and two strings per entry). The text is kept
//! deflated where that is smaller ([`PackedText`]).

use crate::cache::packed_text::PackedText;
use kube::Resource;
use kube::api::ObjectMeta;
use serde::Deserialize;
use serde::de::{DeserializeOwned, Deserializer, Error as _, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// An object of kind `K`: its metadata, and the rest of it as JSON text (the object's other
/// members, `"name":value` separated by commas, without the braces).
pub struct Compact<K> {
    /// The metadata but its labels and annotations (set through [`Resource::meta_mut`], they
    /// are written over the ones kept as text).
    metadata: ObjectMeta,
    /// The metadata's labels and annotations as JSON members, like `rest`.
    metadata_text: PackedText,
    /// The object's other members, `"name":value` separated by commas.
    rest: PackedText,
    kind: PhantomData<fn() -> K>,
}

/// The members of an object's metadata a [`Compact`] keeps as text.
const METADATA_AS_TEXT: [&str; 2] = ["labels", "annotations"];

impl<K> Clone for Compact<K> {
    fn clone(&self) -> Self {
        Self {
            metadata: self.metadata.clone(),
            metadata_text: self.metadata_text.clone(),
            rest: self.rest.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> fmt::Debug for Compact<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Compact")
            .field("metadata", &self.metadata)
            .field("metadata_text", &self.metadata_text)
            .field("rest", &self.rest)
            .finish()
    }
}

impl<K: DeserializeOwned> Compact<K> {
    /// The whole object, parsed: the metadata written back into the text, then one parse.
    pub fn expand(&self) -> Result<K, serde_json::Error> {
        let metadata = self.metadata_json()?;
        let rest = self.rest.text()?;
        let mut text = String::with_capacity(metadata.len() + rest.len() + 16);
        text.push_str("{\"metadata\":");
        text.push_str(&metadata);
        if !rest.is_empty() {
            text.push(',');
            text.push_str(&rest);
        }
        text.push('}');
        serde_json::from_str(&text)
    }
}

impl<K> Compact<K> {
    /// The metadata as one JSON object: the parsed part and the members kept as text, but those
    /// the parsed part sets.
    fn metadata_json(&self) -> Result<String, serde_json::Error> {
        let parsed = serde_json::to_value(&self.metadata)?;
        let mut members: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(&format!("{{{}}}", self.metadata_text.text()?))?;
        if let serde_json::Value::Object(parsed) = parsed {
            members.extend(parsed);
        }
        serde_json::to_string(&members)
    }
}

/// An object's metadata, split: the members a [`Compact`] keeps as text apart.
struct SplitMetadata {
    parsed: ObjectMeta,
    text: String,
}

impl<'de> Deserialize<'de> for SplitMetadata {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MetadataFields)
    }
}

/// Reads an object's metadata: the members of [`METADATA_AS_TEXT`] kept as text, the others
/// parsed.
struct MetadataFields;

impl<'de> Visitor<'de> for MetadataFields {
    type Value = SplitMetadata;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object's metadata (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut parsed, mut text) = (String::new(), String::new());
        while let Some(key) = map.next_key::<String>()? {
            let value: Box<RawValue> = map.next_value()?;
            let to = if METADATA_AS_TEXT.contains(&key.as_str()) {
                &mut text
            } else {
                &mut parsed
            };
            push_member(to, &key, value.get()).map_err(A::Error::custom)?;
        }
        Ok(SplitMetadata {
            parsed: serde_json::from_str(&format!("{{{parsed}}}")).map_err(A::Error::custom)?,
            text,
        })
    }
}

/// Appends the member `key: value` (JSON text) to the members in `to`.
fn push_member(to: &mut String, key: &str, value: &str) -> Result<(), serde_json::Error> {
    if !to.is_empty() {
        to.push(',');
    }
    to.push_str(&serde_json::to_string(key)?);
    to.push(':');
    to.push_str(value);
    Ok(())
}

/// Reads an object's fields: `metadata` parsed, every other field kept as the text it came in.
struct Fields<K>(PhantomData<fn() -> K>);

impl<'de, K> Visitor<'de> for Fields<K> {
    type Value = Compact<K>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a Kubernetes object (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut metadata = None;
        let mut rest = String::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "metadata" {
                metadata = Some(map.next_value::<SplitMetadata>()?);
                continue;
            }
            let value: Box<RawValue> = map.next_value()?;
            push_member(&mut rest, &key, value.get()).map_err(A::Error::custom)?;
        }
        let (metadata, metadata_text) =
            metadata.map_or_else(Default::default, |m| (m.parsed, m.text));
        Ok(Compact {
            metadata,
            metadata_text: PackedText::pack(metadata_text),
            rest: PackedText::pack(rest),
            kind: PhantomData,
        })
    }
}

impl<'de, K> Deserialize<'de> for Compact<K> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(Fields(PhantomData))
    }
}

impl<K: Resource<DynamicType = ()>> Resource for Compact<K> {
    type DynamicType = ();
    type Scope = K::Scope;

    fn kind(dt: &()) -> Cow<'_, str> {
        K::kind(dt)
    }

    fn group(dt: &()) -> Cow<'_, str> {
        K::group(dt)
    }

    fn version(dt: &()) -> Cow<'_, str> {
        K::version(dt)
    }

    fn plural(dt: &()) -> Cow<'_, str> {
        K::plural(dt)
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::StatefulSet;
    use serde_json::json;

    fn statefulset() -> serde_json::Value {
        json!({
            "apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "team", "resourceVersion": "7",
                "labels": {"a": "b"}},
            "spec": {"replicas": 2, "serviceName": "web-peers",
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"containers": [{"name": "celld", "image": "celld:v0.4.0"}]}}},
            "status": {"replicas": 2, "readyReplicas": 1},
        })
    }

    #[test]
    fn expands_to_the_object_it_was_read_from() {
        let compact: Compact<StatefulSet> = serde_json::from_value(statefulset()).expect("compact");
        assert_eq!(compact.meta().resource_version.as_deref(), Some("7"));
        assert!(
            matches!(compact.rest, PackedText::Deflated(_)),
            "a StatefulSet's spec and status are kept deflated: {:?}",
            compact.rest
        );
        let typed: StatefulSet = serde_json::from_value(statefulset()).expect("typed");
        assert_eq!(compact.expand().expect("expanded"), typed);
    }

    #[test]
    fn expands_what_the_api_server_sent_as_text() {
        let mut object = statefulset();
        object["spec"]["template"]["spec"]["containers"][0]["args"] =
            json!(["--note", "quotes \" and \\ and \u{e9} survive", ""]);
        let text = serde_json::to_string(&object).expect("text");
        let compact: Compact<StatefulSet> = serde_json::from_str(&text).expect("compact");
        let typed: StatefulSet = serde_json::from_value(object).expect("typed");
        assert_eq!(compact.expand().expect("expanded"), typed);
    }

    #[test]
    fn an_object_of_metadata_only_expands() {
        let compact: Compact<k8s_openapi::api::core::v1::ConfigMap> =
            serde_json::from_str(r#"{"metadata":{"name":"a"}}"#).expect("compact");
        assert_eq!(
            compact.expand().expect("expanded").metadata.name.as_deref(),
            Some("a")
        );
    }

    #[test]
    fn metadata_changes_show_in_the_expanded_object() {
        let mut compact: Compact<StatefulSet> =
            serde_json::from_value(statefulset()).expect("compact");
        compact.meta_mut().resource_version = Some("8".into());
        let expanded = compact.expand().expect("expanded");
        assert_eq!(expanded.metadata.resource_version.as_deref(), Some("8"));
        assert_eq!(expanded.spec.expect("spec").replicas, Some(2));
    }

    #[test]
    fn keeps_labels_and_annotations_as_text_and_expands_them() {
        let mut object = statefulset();
        object["metadata"]["annotations"] = json!({"celld.dev/applied": "abc"});
        let mut compact: Compact<StatefulSet> =
            serde_json::from_value(object.clone()).expect("compact");
        assert_eq!(compact.meta().labels, None);
        assert_eq!(compact.meta().annotations, None);
        let typed: StatefulSet = serde_json::from_value(object).expect("typed");
        assert_eq!(compact.expand().expect("expanded"), typed);
        // Set through the parsed metadata, they replace the ones kept as text.
        compact.meta_mut().labels = Some([("c".to_string(), "d".to_string())].into());
        let expanded = compact.expand().expect("expanded");
        assert_eq!(
            expanded.metadata.labels,
            Some([("c".to_string(), "d".to_string())].into())
        );
        assert_eq!(expanded.metadata.annotations, typed.metadata.annotations);
    }

    #[test]
    fn names_the_kind_it_holds() {
        assert_eq!(Compact::<StatefulSet>::kind(&()), "StatefulSet");
        assert_eq!(Compact::<StatefulSet>::plural(&()), "statefulsets");
        assert_eq!(Compact::<StatefulSet>::api_version(&()), "apps/v1");
    }

    #[test]
    fn refuses_what_is_not_an_object() {
        assert!(serde_json::from_value::<Compact<StatefulSet>>(json!([1])).is_err());
    }
}
