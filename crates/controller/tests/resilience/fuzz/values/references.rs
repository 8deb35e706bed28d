//! References a rollout ships from and calls: image references, directories inside a source,
//! and webhook URLs (link-local and cloud metadata addresses among them, written the ways a
//! resolver also reads them).

use super::{Class, Gen};

/// A sha256 digest of `c` repeated.
fn digest(c: char) -> String {
    std::iter::repeat_n(c, 64).collect()
}

/// Webhook URLs admission promises to refuse: link-local addresses and cloud metadata
/// endpoints, as written plainly...
const METADATA: &[&str] = &[
    "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
    "http://169.254.170.2/v2/credentials",
    "http://[fe80::1]:8080/check",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://metadata.google.internal/computeMetadata/v1/",
    "HTTP://METADATA.GOOGLE.INTERNAL:80/",
];

/// ...and as a resolver also reads them (one number, hexadecimal, octal, mixed parts, an
/// IPv4-mapped IPv6 address, the rest of fe80::/10, a fully qualified name).
const METADATA_WRITTEN_OTHERWISE: &[&str] = &[
    "http://2852039166/latest/meta-data/",
    "http://0xa9fea9fe/latest/meta-data/",
    "http://0251.0376.0251.0376/latest/meta-data/",
    "http://169.0xfe.169.254/latest/meta-data/",
    "http://[::ffff:169.254.169.254]/latest/meta-data/",
    "http://[::ffff:a9fe:a9fe]/latest/meta-data/",
    "http://[fe90::1]/check",
    "http://[febf::1]/check",
    "http://metadata.google.internal./computeMetadata/v1/",
];

impl Gen {
    /// An image reference (`spec.source.image.reference`, at most 512 characters).
    pub fn image_reference(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => {
                let v = one_of!(self;
                    format!("registry.invalid/fuzz/web-worker:1.4.2@sha256:{}", digest('a')),
                    format!("registry.invalid/fuzz/web@sha256:{}", digest('0')),
                    "registry.invalid:5000/team/web:2".to_string(),
                    format!("web:{}", self.word(6)),
                );
                (v, Class::Valid)
            }
            Class::Boundary => {
                let v = one_of!(self;
                    format!("registry.invalid/{}:1", "a".repeat(512 - 19)),
                    "a".to_string(),
                );
                (v, Class::Boundary)
            }
            Class::Hostile => {
                let v = one_of!(self;
                    format!("registry.invalid/{}:1", "a".repeat(513 - 19)),
                    String::new(),
                    "Registry.invalid/web:1".to_string(),
                    "registry.invalid/web:has space".to_string(),
                    "registry.invalid/web@sha256:short".to_string(),
                    format!("registry.invalid/web@sha256:{}", "a".repeat(63)),
                    format!("registry.invalid/web@sha256:{}", digest('A')),
                    format!("registry.invalid/web@sha256:{0}@sha256:{0}", digest('b')),
                    "-web:1".to_string(),
                    "/web:1".to_string(),
                    "registry.invalid/web@md5:abc".to_string(),
                    "registry.invalid/web:1\n".to_string(),
                    "https://registry.invalid/web:1".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A directory inside a source (`spec.source.path`: relative, at most 256 characters).
    pub fn source_path(&mut self) -> (String, Class) {
        match self.class() {
            Class::Valid => {
                let v = one_of!(self;
                    "./".to_string(),
                    ".".to_string(),
                    format!("workers/{}", self.word(5)),
                    "a/b_c.d-E".to_string(),
                    "...".to_string(),
                );
                (v, Class::Valid)
            }
            Class::Boundary => (
                one_of!(self; "a/".repeat(128), "a".to_string()),
                Class::Boundary,
            ),
            Class::Hostile => {
                let v = one_of!(self;
                    format!("{}a", "a/".repeat(128)),
                    "/etc".to_string(),
                    "../up".to_string(),
                    "..".to_string(),
                    "a/../../b".to_string(),
                    "a/..".to_string(),
                    "./../x".to_string(),
                    "with space".to_string(),
                    String::new(),
                    "a\nb".to_string(),
                    "a\\b".to_string(),
                    "~/x".to_string(),
                    "$HOME".to_string(),
                    "wörker".to_string(),
                );
                (v, Class::Hostile)
            }
        }
    }

    /// A webhook URL (`spec.gates.webhooks[*].url`, 8 to 2048 characters); `gate` is the fuzz's
    /// own, which answers 200 (and never answers at `/hang`). Hosts and paths also come from
    /// the hostname and URL path families.
    pub fn webhook_url(&mut self, gate: &str) -> (String, Class) {
        if self.chance(0.25) {
            let (host, hc) = self.hostname();
            let (path, pc) = self.path();
            return (format!("https://{host}{path}"), hc.max(pc));
        }
        match self.class() {
            Class::Valid => {
                let v = one_of!(self;
                    gate.to_string(),
                    gate.replace("/check", "/hang"),
                    "http://gate.fuzz.invalid:8080/check".to_string(),
                    "https://slo.example.com/celld?window=5m#wave".to_string(),
                    "http://127.0.0.1:9/check".to_string(),
                );
                (v, Class::Valid)
            }
            Class::Boundary => {
                let v = one_of!(self;
                    "http://a".to_string(),
                    format!("http://127.0.0.1:9/{}", "p".repeat(2048 - 19)),
                    "http://127.0.0.1:65535/".to_string(),
                    "http://[::1]:9/check".to_string(),
                );
                (v, Class::Boundary)
            }
            Class::Hostile => {
                let v = match self.below(3) {
                    0 => METADATA[self.below(METADATA.len())].to_string(),
                    1 => METADATA_WRITTEN_OTHERWISE[self.below(METADATA_WRITTEN_OTHERWISE.len())]
                        .to_string(),
                    _ => one_of!(self;
                        format!("http://127.0.0.1:9/{}", "p".repeat(2049 - 19)),
                        "http://user:secret@gate.fuzz.invalid/check".to_string(),
                        "ftp://gate.fuzz.invalid/check".to_string(),
                        "gate.fuzz.invalid/check".to_string(),
                        String::new(),
                        "http://gate.fuzz.invalid/with space".to_string(),
                        "http://gate.fuzz.invalid/\n".to_string(),
                        "javascript:alert(1)".to_string(),
                        "http://".to_string(),
                        "https://?x=1".to_string(),
                        "http://[::1/check".to_string(),
                        "http://gate.fuzz.invalid:99999/".to_string(),
                    ),
                };
                (v, Class::Hostile)
            }
        }
    }
}
