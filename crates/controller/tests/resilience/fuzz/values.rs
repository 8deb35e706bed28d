//! Values for the generated manifests, per kind of value: valid ones, boundary ones (at a
//! length or range limit, either side) and hostile ones. Drawn from a seeded generator, so a
//! seed gives the same values every run.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

/// Evaluates one of the expressions, chosen by the generator `$g`: only the chosen one runs.
macro_rules! one_of {
    ($g:expr; $($e:expr),+ $(,)?) => {{
        let count = [$(stringify!($e)),+].len();
        let index = $g.below(count);
        one_of!(@arm (index); $($e),+)
    }};
    (@arm ($i:expr); $last:expr) => { $last };
    (@arm ($i:expr); $head:expr, $($tail:expr),+) => {
        if $i == 0 { $head } else { one_of!(@arm ($i - 1); $($tail),+) }
    };
}

/// What a generated value is meant to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Valid,
    Boundary,
    Hostile,
}

impl Class {
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Valid => "valid",
            Class::Boundary => "boundary",
            Class::Hostile => "hostile",
        }
    }
}

/// The seeded source of every generated value.
pub struct Gen {
    rng: StdRng,
}

const LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

impl Gen {
    pub fn new(seed: u64) -> Self {
        Gen {
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// A number in `range`.
    pub fn below(&mut self, n: usize) -> usize {
        self.rng.random_range(0..n)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// Valid most of the time, boundary or hostile otherwise.
    pub fn class(&mut self) -> Class {
        match self.below(10) {
            0..=3 => Class::Valid,
            4..=5 => Class::Boundary,
            _ => Class::Hostile,
        }
    }

    /// `len` lowercase letters and digits, starting with a letter.
    pub fn word(&mut self, len: usize) -> String {
        (0..len)
            .map(|i| {
                let set = if i == 0 { &LOWER[..26] } else { LOWER };
                char::from(set[self.rng.random_range(0..set.len())])
            })
            .collect()
    }

    /// A DNS label of exactly `len` characters (letters, digits, inner dashes).
    pub fn label(&mut self, len: usize) -> String {
        let mut s = self.word(len);
        if len > 2 && self.chance(0.5) {
            s.replace_range(len / 2..len / 2 + 1, "-");
        }
        s
    }

    /// A DNS subdomain of about `len` characters: labels of up to 63 joined by dots.
    pub fn subdomain(&mut self, len: usize) -> String {
        let mut parts = Vec::new();
        let mut left = len;
        while left > 0 {
            let take = left.min(self.rng.random_range(1..=63));
            let take = if left - take == 1 { take + 1 } else { take };
            let take = take.min(left);
            parts.push(self.word(take));
            left -= take;
            if left > 0 {
                left -= 1;
            }
        }
        parts.join(".")
    }

    /// `count` random bytes of printable ASCII.
    pub fn printable(&mut self, count: usize) -> String {
        (0..count)
            .map(|_| char::from(self.rng.random_range(0x20u8..0x7f)))
            .collect()
    }

    /// A label or annotation key.
    pub fn key(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => {
                let k = if self.chance(0.5) {
                    self.word(6)
                } else {
                    format!("example.com/{}", self.word(8))
                };
                (k, Class::Valid)
            }
            Class::Boundary => {
                let k = if self.chance(0.5) {
                    self.label(63)
                } else {
                    format!("{}/{}", self.subdomain(253), self.label(63))
                };
                (k, Class::Boundary)
            }
            Class::Hostile => {
                let k = one_of!(self;
                    self.label(64),
                    format!("{}/x", self.subdomain(254)),
                    "platform.celld.dev/fleet".to_string(),
                    "platform.celld.dev/config-hash".to_string(),
                    "bad key".to_string(),
                    "-leading-dash".to_string(),
                    "a/b/c".to_string(),
                    String::new(),
                    "example.com/".to_string(),
                    "ключ".to_string(),
                    "new\nline".to_string(),
                    "app.kubernetes.io/managed-by".to_string(),
                );
                (k, Class::Hostile)
            }
        }
    }

    /// A label value.
    pub fn label_value(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => (self.word(5), Class::Valid),
            Class::Boundary => (
                one_of!(self; self.label(63), String::new()),
                Class::Boundary,
            ),
            Class::Hostile => {
                let v = one_of!(self;
                    self.label(64),
                    "has space".to_string(),
                    "-dash-".to_string(),
                    "a/b".to_string(),
                    "значение".to_string(),
                    "line\nbreak".to_string(),
                    "x".repeat(300),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// An annotation value (annotations of one object may total 256 KiB).
    pub fn annotation_value(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => (format!("note {}", self.word(12)), Class::Valid),
            Class::Boundary => (self.printable(64 * 1024), Class::Boundary),
            Class::Hostile => {
                let v = one_of!(self;
                    self.printable(300 * 1024),
                    "\u{0}nul and \u{7f} control".to_string(),
                    "{{ .Values.injected }}".to_string(),
                    "$(POD_NAME)".to_string(),
                    "line\nbreak\r\nand tab\t".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A DNS-1123 subdomain name (object names, class names, Secret names...).
    pub fn dns_name(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => (
                one_of!(self; self.label(8), self.subdomain(20)),
                Class::Valid,
            ),
            Class::Boundary => (
                one_of!(self; self.subdomain(253), self.word(1)),
                Class::Boundary,
            ),
            Class::Hostile => {
                let v = one_of!(self;
                    self.subdomain(254),
                    "Upper-Case".to_string(),
                    "under_score".to_string(),
                    "..".to_string(),
                    "../../etc/passwd".to_string(),
                    "-leading".to_string(),
                    "trailing-".to_string(),
                    "a..b".to_string(),
                    "*".to_string(),
                    " ".to_string(),
                    "name with spaces".to_string(),
                    "ünïcode".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A host name for a route: DNS names, wildcards, IPs and things that are not host names.
    pub fn hostname(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => {
                let v = one_of!(self;
                    format!("{}.example.com", self.label(6)),
                    "*.example.com".to_string(),
                    "xn--80ak6aa92e.example.com".to_string(),
                );
                (v, Class::Valid)
            }
            Class::Boundary => {
                let v = one_of!(self;
                    self.subdomain(253),
                    format!("{}.example.com", self.label(63)),
                    "a.b".to_string(),
                );
                (v, Class::Boundary)
            }
            Class::Hostile => {
                let v = one_of!(self;
                    "10.0.0.1".to_string(),
                    "[::1]".to_string(),
                    "::1".to_string(),
                    "app.example.com:8080".to_string(),
                    "https://app.example.com".to_string(),
                    "APP.example.com".to_string(),
                    "app..example.com".to_string(),
                    "*.*.example.com".to_string(),
                    "app.example.com.".to_string(),
                    format!("{}.example.com", self.label(64)),
                    self.subdomain(254),
                    "app.example.com/path".to_string(),
                    "localhost".to_string(),
                    "999.999.999.999".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A URL path.
    pub fn path(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => {
                let v = one_of!(self; "/".to_string(), "/api".to_string(), format!("/{}/v1", self.word(4)));
                (v, Class::Valid)
            }
            Class::Boundary => (format!("/{}", "a".repeat(1023)), Class::Boundary),
            Class::Hostile => {
                let v = one_of!(self;
                    "/..".to_string(),
                    "/a/../b".to_string(),
                    "/../../etc/passwd".to_string(),
                    "/%2e%2e/admin".to_string(),
                    "//double".to_string(),
                    "/trailing/".to_string(),
                    "relative".to_string(),
                    "/with space".to_string(),
                    "/(.*)".to_string(),
                    "/$1".to_string(),
                    "/a?query=1".to_string(),
                    "/a#fragment".to_string(),
                    format!("/{}", "a".repeat(1024)),
                    "/a\nb".to_string(),
                    String::new(),
                );
                (v, Class::Hostile)
            }
        }
    }

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
