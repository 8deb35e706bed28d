//! Credentials Secrets holding sentinels: unique values that may appear nowhere but in their
//! Secret. Every Secret the suite creates comes from here, so [`Sentinels::values`] is every
//! credential value the leak check looks for.

use celld_testkit::S3Settings;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::{Api, Client};
use rand::Rng;
use serde_json::json;

/// The suite's field manager for the objects it creates.
pub const MANAGER: &str = "resilience-tests";

/// The credential values of every Secret a test created.
#[derive(Debug, Default)]
pub struct Sentinels {
    values: Vec<String>,
}

impl Sentinels {
    /// `SENTINEL-<WHAT>-<16 random characters>`, remembered.
    fn fresh(&mut self, what: &str) -> String {
        const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        let mut rng = rand::rng();
        let suffix: String = (0..16)
            .map(|_| char::from(ALPHABET[rng.random_range(0..ALPHABET.len())]))
            .collect();
        let value = format!("SENTINEL-{what}-{suffix}");
        self.values.push(value.clone());
        value
    }

    fn remember(&mut self, value: &str) {
        if !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_string());
        }
    }

    /// A Secret the test S3 server accepts: its key pair and a sentinel session token (the
    /// server ignores session tokens, the operator passes them on).
    pub async fn working_secret(
        &mut self,
        client: &Client,
        ns: &str,
        name: &str,
        s3: &S3Settings,
    ) -> Secret {
        self.remember(&s3.access_key_id);
        self.remember(&s3.secret_access_key);
        let token = self.fresh("SESSION-TOKEN");
        let data = [
            ("AWS_ACCESS_KEY_ID", s3.access_key_id.clone()),
            ("AWS_SECRET_ACCESS_KEY", s3.secret_access_key.clone()),
            ("AWS_SESSION_TOKEN", token),
        ];
        apply(client, ns, name, &data).await
    }

    /// A Secret of three sentinels, which the test S3 server refuses.
    pub async fn sentinel_secret(&mut self, client: &Client, ns: &str, name: &str) -> Secret {
        let data = [
            ("AWS_ACCESS_KEY_ID", self.fresh("ACCESS-KEY")),
            ("AWS_SECRET_ACCESS_KEY", self.fresh("SECRET-KEY")),
            ("AWS_SESSION_TOKEN", self.fresh("SESSION-TOKEN")),
        ];
        apply(client, ns, name, &data).await
    }

    /// A Secret that lacks the secret key: a sentinel access key only.
    pub async fn partial_secret(&mut self, client: &Client, ns: &str, name: &str) -> Secret {
        let data = [("AWS_ACCESS_KEY_ID", self.fresh("ACCESS-KEY"))];
        apply(client, ns, name, &data).await
    }

    /// Every credential value of the Secrets made so far.
    pub fn values(&self) -> &[String] {
        &self.values
    }
}

async fn apply(client: &Client, ns: &str, name: &str, data: &[(&str, String)]) -> Secret {
    let string_data: serde_json::Map<String, serde_json::Value> = data
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    let secret: Secret = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": name},
        "stringData": string_data,
    }))
    .expect("a Secret");
    Api::<Secret>::namespaced(client.clone(), ns)
        .patch(
            name,
            &PatchParams::apply(MANAGER).force(),
            &Patch::Apply(&secret),
        )
        .await
        .unwrap_or_else(|e| panic!("Secret {ns}/{name} applied: {e}"))
}
