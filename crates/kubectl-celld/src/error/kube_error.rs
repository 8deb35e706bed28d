//! Failed Kubernetes requests in words: the API server's message and reason, or why the server
//! could not be reached, and what to do about it. Never a Rust debug dump.

use std::error::Error as StdError;

/// Whether the request never got an HTTP answer (connection refused, DNS, TLS, timeout).
pub fn is_transport(err: &kube::Error) -> bool {
    matches!(
        err,
        kube::Error::HyperError(_) | kube::Error::Service(_) | kube::Error::RustlsTls(_)
    )
}

/// Whether a transport error is a refused TCP connection.
pub fn is_refused(err: &kube::Error) -> bool {
    chain(err).any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
    })
}

fn chain<'a>(err: &'a kube::Error) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    let first: &(dyn StdError + 'static) = err;
    std::iter::successors(Some(first), |e: &&'a (dyn StdError + 'static)| {
        (*e).source()
    })
}

/// The causes of a transport error, outermost first, without kube's variant prefix:
/// `client error (Connect): tcp connect error: Connection refused (os error 111)`.
pub fn transport_detail(err: &kube::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    for e in chain(err).skip(1) {
        let text = e.to_string();
        if parts.last().is_none_or(|last| !last.contains(&text)) {
            parts.push(text);
        }
    }
    if parts.is_empty() {
        parts.push(err.to_string());
    }
    parts.join(": ")
}

/// One line for a failed request: `namespaces "x" not found (NotFound, HTTP 404)` for an API
/// answer, the chain of causes otherwise.
pub fn describe(err: &kube::Error) -> String {
    match err {
        kube::Error::Api(status) => {
            let message = status.message.trim();
            let message = if message.is_empty() {
                "no message"
            } else {
                message
            };
            match status.reason.trim() {
                "" => format!("{message} (HTTP {})", status.code),
                reason => format!("{message} ({reason}, HTTP {})", status.code),
            }
        }
        kube::Error::UpgradeConnection(e) => format!("cannot open a streaming connection: {e}"),
        other if is_transport(other) => transport_detail(other),
        other => {
            let mut parts: Vec<String> = Vec::new();
            for e in chain(other) {
                let text = e.to_string();
                if parts.last().is_none_or(|last| !last.contains(&text)) {
                    parts.push(text);
                }
            }
            parts.join(": ")
        }
    }
}

/// What to do about an API error, when the status says it; `namespace` is the namespace the
/// request was made in.
pub fn hint(err: &kube::Error, namespace: Option<&str>) -> Option<String> {
    let kube::Error::Api(status) = err else {
        return None;
    };
    let kind = status
        .details
        .as_ref()
        .map(|d| d.kind.as_str())
        .unwrap_or_default();
    Some(match status.code {
        404 if kind == "namespaces" => format!(
            "create the namespace with: kubectl create namespace {} (or pick another with -n)",
            status
                .details
                .as_ref()
                .map(|d| d.name.as_str())
                .filter(|n| !n.is_empty())
                .or(namespace)
                .unwrap_or("NAME")
        ),
        404 => "check the name and the namespace (-n)".to_string(),
        401 => "the API server did not accept your credentials: log in again, or check the user of the kubeconfig context (kubectl config view --minify)".to_string(),
        409 => "the object changed meanwhile: run the command again".to_string(),
        400 | 422 => "the API server refused the request as invalid: fix what the message names".to_string(),
        429 | 500..=599 => "the API server is overloaded or failing: try again shortly (kubectl get --raw /readyz?verbose shows its health)".to_string(),
        _ => return None,
    })
}

/// `host:port` of a server URL, as kubectl names the server in connection errors.
pub fn host_port(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("https", url));
    let authority = rest.split('/').next().unwrap_or(rest);
    let authority = authority.rsplit('@').next().unwrap_or(authority);
    let has_port = match authority.rfind(':') {
        Some(i) => !authority[i..].contains(']'),
        None => false,
    };
    if has_port {
        authority.to_string()
    } else {
        let port = if scheme == "http" { 80 } else { 443 };
        format!("{authority}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::core::Status;
    use kube::core::response::StatusDetails;

    #[test]
    fn missing_namespace_is_said_with_its_fix() {
        let mut s =
            Status::failure("namespaces \"no-such-ns\" not found", "NotFound").with_code(404);
        s.details = Some(StatusDetails {
            name: "no-such-ns".into(),
            group: String::new(),
            kind: "namespaces".into(),
            uid: String::new(),
            causes: Vec::new(),
            retry_after_seconds: 0,
        });
        let e = kube::Error::Api(s.boxed());
        insta::assert_snapshot!(describe(&e), @r#"namespaces "no-such-ns" not found (NotFound, HTTP 404)"#);
        insta::assert_snapshot!(hint(&e, Some("x")).unwrap(), @"create the namespace with: kubectl create namespace no-such-ns (or pick another with -n)");
    }

    #[test]
    fn host_port_adds_the_scheme_default() {
        assert_eq!(host_port("https://127.0.0.1:1"), "127.0.0.1:1");
        assert_eq!(host_port("https://k8s.example.com"), "k8s.example.com:443");
        assert_eq!(host_port("http://[::1]:8080/"), "[::1]:8080");
    }
}
