//! Names and text: label and annotation keys and values, DNS names, hostnames, URL paths.

use super::{Class, Gen};

impl Gen {
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
}
