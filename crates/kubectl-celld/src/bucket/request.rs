//! One S3 request, made by `curl --aws-sigv4` in the fleet's deploy pod with the credentials of
//! its environment (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, optional
//! `AWS_SESSION_TOKEN`): the URL it goes to, the script, and the parsing of its answer.

use celld_api::ResolvedStorage;

/// The script run with `sh -c SCRIPT celld-s3 METHOD URL REGION BODY [HEADER...]`. It prints
/// `@@curl rc=<curl's exit code> http=<status>`, the response headers, `@@body` and the body.
/// The body goes as an argument: exec streams end no input, and pointers are small.
pub const SCRIPT: &str = r#"m=$1 u=$2 r=$3 b=$4; shift 4
n=$#; i=0
while [ "$i" -lt "$n" ]; do set -- "$@" -H "$1"; shift; i=$((i+1)); done
if [ -n "${AWS_SESSION_TOKEN:-}" ]; then set -- "$@" -H "x-amz-security-token: $AWS_SESSION_TOKEN"; fi
if [ "$m" = PUT ]; then set -- "$@" -H 'Content-Type: application/json' --data-binary "$b"; fi
h=".s3-$$.headers" o=".s3-$$.body"
code=$(curl -sS -X "$m" --connect-timeout 10 --max-time 60 --aws-sigv4 "aws:amz:$r:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@" -D "$h" -o "$o" -w '%{http_code}' "$u")
rc=$?
printf '@@curl rc=%s http=%s\n' "$rc" "$code"
cat "$h" 2>/dev/null
printf '@@body\n'
cat "$o" 2>/dev/null
rm -f "$h" "$o"
"#;

/// Characters S3 keeps unencoded (RFC 3986 unreserved).
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~')
}

/// Percent-encodes `s`; `/` too unless `keep_slash`.
pub fn encode(s: &str, keep_slash: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if unreserved(b) || (keep_slash && b == b'/') {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The URL of `key` (a full key, prefix included) with `query` pairs: path-style under the
/// endpoint when the storage has one (as celld does), else AWS S3's virtual-hosted style (path
/// style for bucket names with dots, which TLS would not match).
pub fn url(storage: &ResolvedStorage, key: &str, query: &[(&str, &str)]) -> String {
    let bucket = &storage.bucket.name;
    let path = encode(key, true);
    let mut url = match &storage.endpoint {
        Some(endpoint) => format!("{}/{bucket}/{path}", endpoint.trim_end_matches('/')),
        None if bucket.contains('.') => {
            format!(
                "https://s3.{}.amazonaws.com/{bucket}/{path}",
                storage.region
            )
        }
        None => format!(
            "https://{bucket}.s3.{}.amazonaws.com/{path}",
            storage.region
        ),
    };
    if !query.is_empty() {
        let mut pairs: Vec<(&str, &str)> = query.to_vec();
        pairs.sort();
        let q: Vec<String> = pairs
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k, false), encode(v, false)))
            .collect();
        url.push('?');
        url.push_str(&q.join("&"));
    }
    url
}

/// The exec command of one request.
pub fn command(
    method: &str,
    url: &str,
    region: &str,
    body: &str,
    headers: &[String],
) -> Vec<String> {
    let mut cmd = vec![
        "sh".to_string(),
        "-c".to_string(),
        SCRIPT.to_string(),
        "celld-s3".to_string(),
        method.to_string(),
        url.to_string(),
        region.to_string(),
        body.to_string(),
    ];
    cmd.extend(headers.iter().cloned());
    cmd
}

/// What came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// curl could not complete the request (its exit code and message).
    Failed(i32, String),
    /// An HTTP answer.
    Http(Response),
}

/// An HTTP answer.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `ETag` header, quotes kept (it goes back as `If-Match` as it came).
    pub etag: Option<String>,
    /// The `Last-Modified` header.
    pub last_modified: Option<String>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The S3 error code of an error body (`<Code>...</Code>`), or the start of the body.
    pub fn error_text(&self) -> String {
        let text = String::from_utf8_lossy(&self.body);
        let tag = |name: &str| {
            let open = format!("<{name}>");
            let start = text.find(&open)? + open.len();
            let end = text[start..].find(&format!("</{name}>"))? + start;
            Some(text[start..end].to_string())
        };
        match (tag("Code"), tag("Message")) {
            (Some(code), Some(message)) => format!("{code}: {message}"),
            (Some(code), None) => code,
            _ => text
                .chars()
                .take(200)
                .collect::<String>()
                .trim()
                .to_string(),
        }
    }
}

/// Parses the script's output and stderr.
pub fn parse(stdout: &[u8], stderr: &[u8]) -> Answer {
    let failed = |why: &str| {
        let err = String::from_utf8_lossy(stderr).trim().to_string();
        Answer::Failed(-1, if err.is_empty() { why.to_string() } else { err })
    };
    let Some(first_end) = stdout.iter().position(|&b| b == b'\n') else {
        return failed("the request script printed nothing");
    };
    let first = String::from_utf8_lossy(&stdout[..first_end]);
    let Some(rest) = first.strip_prefix("@@curl ") else {
        return failed("the request script printed no result line");
    };
    let mut rc = -1;
    let mut status = 0u16;
    for part in rest.split(' ') {
        if let Some(v) = part.strip_prefix("rc=") {
            rc = v.parse().unwrap_or(-1);
        } else if let Some(v) = part.strip_prefix("http=") {
            status = v.parse().unwrap_or(0);
        }
    }
    if rc != 0 {
        let err = String::from_utf8_lossy(stderr).trim().to_string();
        return Answer::Failed(
            rc,
            if err.is_empty() {
                format!("curl exit code {rc}")
            } else {
                err
            },
        );
    }
    let after = &stdout[first_end + 1..];
    let marker = b"@@body\n";
    let split = after
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap_or(after.len());
    let headers = String::from_utf8_lossy(&after[..split]);
    let body = after
        .get(split + marker.len()..)
        .unwrap_or_default()
        .to_vec();
    let mut response = Response {
        status,
        body,
        ..Response::default()
    };
    // curl writes every response's headers (a 100 Continue first, say): the last ones count.
    for line in headers.lines() {
        let line = line.trim_end_matches('\r');
        if line.starts_with("HTTP/") {
            response.etag = None;
            response.last_modified = None;
        } else if let Some((name, value)) = line.split_once(':') {
            let value = value.trim().to_string();
            if name.eq_ignore_ascii_case("etag") {
                response.etag = Some(value);
            } else if name.eq_ignore_ascii_case("last-modified") {
                response.last_modified = Some(value);
            }
        }
    }
    Answer::Http(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use celld_api::BucketUrl;

    fn storage(endpoint: Option<&str>, bucket: &str) -> ResolvedStorage {
        ResolvedStorage {
            store: None,
            bucket: BucketUrl::parse(bucket).unwrap(),
            endpoint: endpoint.map(Into::into),
            region: "eu-west-1".into(),
            allow_http: false,
            azure_storage_account: None,
            credentials_secret: Some("creds".into()),
        }
    }

    #[test]
    fn urls_follow_celld_s_addressing() {
        let s = storage(Some("http://minio:9000/"), "s3://celld/web");
        assert_eq!(
            url(&s, "web/deploy/current.json", &[]),
            "http://minio:9000/celld/web/deploy/current.json"
        );
        assert_eq!(
            url(&s, "", &[("prefix", "web/deploy/"), ("list-type", "2")]),
            "http://minio:9000/celld/?list-type=2&prefix=web%2Fdeploy%2F"
        );
        let aws = storage(None, "s3://company-celld/api");
        assert_eq!(
            url(&aws, "api/deploy/current.json", &[]),
            "https://company-celld.s3.eu-west-1.amazonaws.com/api/deploy/current.json"
        );
        let dotted = storage(None, "s3://celld.example.com/api");
        assert_eq!(
            url(&dotted, "k", &[]),
            "https://s3.eu-west-1.amazonaws.com/celld.example.com/k"
        );
        assert_eq!(encode("a b+c/d", true), "a%20b%2Bc/d");
    }

    #[test]
    fn parses_answers() {
        let out = b"@@curl rc=0 http=200\nHTTP/1.1 200 OK\r\nETag: \"abc\"\r\nLast-Modified: Mon, 30 Nov 2026 15:19:28 GMT\r\n\r\n@@body\n{\"a\":1}";
        assert_eq!(
            parse(out, b""),
            Answer::Http(Response {
                status: 200,
                etag: Some("\"abc\"".into()),
                last_modified: Some("Mon, 30 Nov 2026 15:19:28 GMT".into()),
                body: b"{\"a\":1}".to_vec(),
            })
        );
        assert_eq!(
            parse(
                b"@@curl rc=7 http=000\n@@body\n",
                b"curl: (7) Failed to connect\n"
            ),
            Answer::Failed(7, "curl: (7) Failed to connect".into())
        );
        let Answer::Http(r) = parse(
            b"@@curl rc=0 http=412\nHTTP/1.1 412 Precondition Failed\n\n@@body\n<Error><Code>PreconditionFailed</Code><Message>ETag does not match</Message></Error>",
            b"",
        ) else {
            panic!("an HTTP answer")
        };
        assert_eq!(r.error_text(), "PreconditionFailed: ETag does not match");
        assert!(
            matches!(parse(b"", b"sh: curl: not found"), Answer::Failed(_, m) if m.contains("not found"))
        );
    }

    /// The real script, with sh and a fake curl that prints its arguments as the body.
    #[test]
    fn script_passes_method_headers_and_body() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let curl = dir.path().join("curl");
        std::fs::write(
            &curl,
            "#!/bin/sh\nh= o=\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >>args; done\nwhile [ $# -gt 0 ]; do case \"$1\" in -D) h=$2; shift ;; -o) o=$2; shift ;; esac; shift; done\nprintf 'HTTP/1.1 200 OK\\r\\nETag: \"e1\"\\r\\n\\r\\n' >\"$h\"; cat args >\"$o\"; printf 200\n",
        )
        .unwrap();
        std::fs::set_permissions(&curl, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cmd = command(
            "PUT",
            "http://s3/b/k",
            "us-east-1",
            "{\"v\":1}",
            &["If-Match: \"e0\"".to_string()],
        );
        let out = std::process::Command::new(&cmd[0])
            .args(&cmd[1..])
            .current_dir(dir.path())
            .env("PATH", format!("{}:/usr/bin:/bin", dir.path().display()))
            .env("AWS_ACCESS_KEY_ID", "id")
            .env("AWS_SECRET_ACCESS_KEY", "secret")
            .env("AWS_SESSION_TOKEN", "tok")
            .output()
            .unwrap();
        let Answer::Http(r) = parse(&out.stdout, &out.stderr) else {
            panic!("{out:?}")
        };
        assert_eq!(r.etag.as_deref(), Some("\"e1\""));
        let args = String::from_utf8(r.body).unwrap();
        for want in [
            "PUT",
            "aws:amz:us-east-1:s3",
            "id:secret",
            "If-Match: \"e0\"",
            "x-amz-security-token: tok",
            "{\"v\":1}",
            "http://s3/b/k",
        ] {
            assert!(args.lines().any(|l| l == want), "{want} in {args}");
        }
        // No temporary file is left behind.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(".s3-"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
