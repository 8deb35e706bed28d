//! The test double writes only to an S3 server on this machine: it refuses any other endpoint,
//! so it can never touch a real bucket.

use super::error::DeployError;

/// Hosts accepted in `--endpoint`.
const LOCAL_HOSTS: &[&str] = &["127.0.0.1", "localhost", "[::1]"];

/// Checks that `endpoint` is `http(s)://<loopback host>[:port][/]`; returns it without a
/// trailing `/`.
pub fn local(endpoint: Option<&str>) -> Result<String, DeployError> {
    let Some(value) = endpoint.filter(|e| !e.is_empty()) else {
        return Err(DeployError::Endpoint {
            value: String::new(),
            problem: "missing: the test double writes only to the local control plane's S3 server; pass --endpoint http://127.0.0.1:PORT (or set S3_ENDPOINT)".into(),
        });
    };
    let problem = |problem: &str| DeployError::Endpoint {
        value: value.to_string(),
        problem: problem.to_string(),
    };
    let rest = value
        .strip_prefix("http://")
        .or_else(|| value.strip_prefix("https://"))
        .ok_or_else(|| problem("use an http:// or https:// URL"))?;
    let authority = rest.trim_end_matches('/');
    if authority.contains('/') {
        return Err(problem("give the server's URL without a path"));
    }
    let host = if authority.starts_with('[') {
        authority
            .find(']')
            .map(|end| &authority[..=end])
            .unwrap_or(authority)
    } else {
        authority.split(':').next().unwrap_or(authority)
    };
    if !LOCAL_HOSTS.contains(&host) {
        return Err(problem(
            "the test double writes only to an S3 server on this machine (127.0.0.1, localhost or [::1]), never to a real bucket; deploy with the real celld instead",
        ));
    }
    Ok(value.trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_only_loopback() {
        assert_eq!(
            local(Some("http://127.0.0.1:9000/")).unwrap(),
            "http://127.0.0.1:9000"
        );
        assert!(local(Some("http://localhost:9000")).is_ok());
        assert!(local(Some("http://[::1]:9000")).is_ok());
        for (value, want) in [
            (None, "missing"),
            (Some("https://s3.amazonaws.com"), "never to a real bucket"),
            (
                Some("http://127.0.0.1.example.com:80"),
                "never to a real bucket",
            ),
            (Some("127.0.0.1:9000"), "http://"),
            (Some("http://127.0.0.1:9000/bucket"), "without a path"),
        ] {
            let err = local(value).unwrap_err().to_string();
            assert!(err.contains(want), "{value:?}: {err}");
        }
    }
}
