//! Fleet updates: changes the rules allow or refuse given the object before.

/// An update: the object before and after, and, for a refused change, the expected message.
pub struct UpdateCase {
    pub name: &'static str,
    pub old: &'static str,
    pub new: &'static str,
    pub refused_with: Option<&'static str>,
}

const PERSISTENT: &str = r#"
metadata: {name: storage}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Persistent, size: 10Gi}
"#;

const EPHEMERAL: &str = r#"
metadata: {name: storage}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Ephemeral, size: 1Gi}
"#;

const EPHEMERAL_10GI: &str = r#"
metadata: {name: storage}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Ephemeral, size: 10Gi}
"#;

/// The update of a fleet that never used Persistent storage to Persistent storage (the storage
/// message must not claim it did). Only the client-side tests read every message.
#[allow(dead_code)]
pub const EPHEMERAL_TO_PERSISTENT: (&str, &str) = (EPHEMERAL, PERSISTENT);

pub const FLEET_UPDATES: &[UpdateCase] = &[
    UpdateCase {
        name: "ephemeral-size-may-change",
        old: EPHEMERAL,
        new: r#"
metadata: {name: storage}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Ephemeral, size: 2Gi}
"#,
        refused_with: None,
    },
    UpdateCase {
        name: "persistent-retention-may-change",
        old: PERSISTENT,
        new: r#"
metadata: {name: storage}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Persistent, size: 10Gi, whenDeleted: Delete}
  replicas: 3
"#,
        refused_with: None,
    },
    UpdateCase {
        name: "persistent-size-is-immutable",
        old: PERSISTENT,
        new: r#"
metadata: {name: storage}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Persistent, size: 20Gi}
"#,
        refused_with: Some("cannot change while a fleet uses Persistent storage"),
    },
    UpdateCase {
        name: "persistent-class-is-immutable",
        old: PERSISTENT,
        new: r#"
metadata: {name: storage}
spec:
  objectStorage: {bucket: "s3://celld/app", credentialsSecretRef: {name: creds}}
  localStorage: {type: Persistent, size: 10Gi, storageClassName: other}
"#,
        refused_with: Some("cannot change while a fleet uses Persistent storage"),
    },
    UpdateCase {
        name: "ephemeral-to-persistent-is-refused",
        old: EPHEMERAL,
        new: PERSISTENT,
        refused_with: Some("spec.localStorage.type cannot change from Ephemeral to Persistent"),
    },
    UpdateCase {
        name: "ephemeral-to-persistent-of-the-same-size-is-refused",
        old: EPHEMERAL_10GI,
        new: PERSISTENT,
        refused_with: Some("spec.localStorage.type cannot change from Ephemeral to Persistent"),
    },
    UpdateCase {
        name: "persistent-to-ephemeral-is-refused",
        old: PERSISTENT,
        new: EPHEMERAL,
        refused_with: Some(
            "spec.localStorage.type cannot change from Ephemeral to Persistent or back",
        ),
    },
];
