//! Settings: quantities, endpoints, regions, bucket URLs, environment variable names.

use super::{Class, Gen};
use serde_json::{Value, json};

impl Gen {
    /// A Kubernetes quantity for CPU or memory.
    pub fn quantity(&mut self) -> (Value, Class) {
        match self.class() {
            Class::Valid => (
                json!(one_of!(self; "100m", "1", "128Mi", "1Gi", "500M")),
                Class::Valid,
            ),
            Class::Boundary => (
                one_of!(self; json!("0"), json!("1Ei"), json!(0), json!("1n")),
                Class::Boundary,
            ),
            Class::Hostile => {
                let v = one_of!(self;
                    json!("-1"),
                    json!("abc"),
                    json!("1.5.5"),
                    json!("1e999"),
                    json!("12 Gi"),
                    json!(""),
                    json!("9999999999999999999999999Ei"),
                    json!(-5),
                    json!(1.5e300),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// An endpoint URL; `live` is the test S3 server's.
    pub fn endpoint(&mut self, live: &str) -> (String, Class) {
        match self.class() {
            Class::Valid => (
                one_of!(self; live.to_string(), "https://s3.invalid".to_string()),
                Class::Valid,
            ),
            Class::Boundary => {
                let v = one_of!(self;
                    "http://127.0.0.1:65535".to_string(),
                    format!("https://{}", self.subdomain(200)),
                    format!("{live}/{}", "p".repeat(1800)),
                );
                (v, Class::Boundary)
            }
            Class::Hostile => {
                let v = one_of!(self;
                    "http://127.0.0.1:1".to_string(),
                    "ftp://s3.invalid".to_string(),
                    "http://user:password@s3.invalid".to_string(),
                    "https://s3.invalid/?x=1".to_string(),
                    "https://s3.invalid/#frag".to_string(),
                    "https://999.999.999.999".to_string(),
                    "https://s3.invalid:99999".to_string(),
                    "javascript:alert(1)".to_string(),
                    "s3.invalid".to_string(),
                    "https://s3.invalid/\n".to_string(),
                    format!("https://{}", "a".repeat(2050)),
                    "https://[::1]:9000".to_string(),
                    String::new(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A region.
    pub fn region(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => (
                one_of!(self; "us-east-1".to_string(), "auto".to_string(), "eu-west-3".to_string()),
                Class::Valid,
            ),
            Class::Boundary => (
                one_of!(self; self.word(64), "a".to_string()),
                Class::Boundary,
            ),
            Class::Hostile => {
                let v = one_of!(self;
                    self.word(65),
                    "US-EAST-1".to_string(),
                    "us east 1".to_string(),
                    String::new(),
                    "us-east-1\n".to_string(),
                    "../../".to_string(),
                    "us_east_1".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A bucket URL in `bucket` under `prefix` (the test S3 server's bucket and a fresh prefix).
    pub fn bucket(&mut self, bucket: &str, prefix: &str) -> (String, Class) {
        match self.class() {
            Class::Valid => {
                let v = one_of!(self;
                    format!("s3://{bucket}/{prefix}"),
                    format!("s3://{bucket}/{prefix}/{}", self.word(5)),
                    format!("s3://{bucket}/{prefix}/A_b.c-D"),
                );
                (v, Class::Valid)
            }
            Class::Boundary => {
                let v = one_of!(self;
                    format!("s3://{}", self.word(63)),
                    format!("s3://{}", self.word(3)),
                    format!("s3://{bucket}/{prefix}/{}", "p".repeat(900)),
                    format!("s3://{bucket}"),
                );
                (v, Class::Boundary)
            }
            Class::Hostile => {
                let v = one_of!(self;
                    format!("s3://{bucket}/{prefix}/../escape"),
                    format!("s3://{bucket}//{prefix}"),
                    format!("s3://{bucket}/{prefix}/"),
                    "s3://Upper-Bucket/x".to_string(),
                    "gs://bucket/x".to_string(),
                    "s3://ab".to_string(),
                    format!("s3://{}", self.word(64)),
                    format!("s3://{bucket}/{prefix}/with space"),
                    format!("s3://{bucket}/{prefix}?versionId=1"),
                    "s3://".to_string(),
                    format!("s3://{bucket}/{}", "p".repeat(1100)),
                    "s3://bucket/%2e%2e".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// An environment variable name.
    pub fn env_name(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => (
                one_of!(self; "RUST_LOG".to_string(), "CELLD_MAX_RSS_MB".to_string(), format!("X_{}", self.word(6).to_uppercase())),
                Class::Valid,
            ),
            Class::Boundary => (
                one_of!(self; "A".to_string(), "a".repeat(253)),
                Class::Boundary,
            ),
            Class::Hostile => {
                let v = one_of!(self;
                    "CELLD_BUCKET".to_string(),
                    "AWS_SECRET_ACCESS_KEY".to_string(),
                    "AWS_SESSION_TOKEN".to_string(),
                    "POD_NAME".to_string(),
                    "1BAD".to_string(),
                    "a=b".to_string(),
                    String::new(),
                    "has space".to_string(),
                    "a".repeat(300),
                    "ИМЯ".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }
}
