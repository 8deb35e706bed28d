//! The TLS identity `/metrics` is served with: a certificate the operator signs itself at each
//! start (no Secret to create or rotate), so scrapers skip its verification
//! (`insecure_skip_verify`) and rely on the bearer token for who may read. What TLS buys is
//! that the token and the metrics do not cross the network in clear.

use rustls::ServerConfig;
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use std::sync::Arc;

/// The names the certificate holds.
pub const NAMES: &[&str] = &["localhost", "celld-operator-metrics"];

/// Why the TLS identity could not be made.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// The key or certificate could not be generated.
    #[error(
        "generating the self-signed certificate for /metrics failed: {0}; run without --metrics-secure to serve /metrics over plain HTTP"
    )]
    Generate(#[from] rcgen::Error),
    /// rustls refused the certificate or its protocol versions.
    #[error(
        "setting up TLS for /metrics failed: {0}; run without --metrics-secure to serve /metrics over plain HTTP"
    )]
    Tls(#[from] rustls::Error),
}

/// A TLS server configuration with a fresh self-signed certificate for [`NAMES`], speaking
/// HTTP/1.1.
pub fn self_signed() -> Result<Arc<ServerConfig>, CertificateError> {
    let names: Vec<String> = NAMES.iter().map(|n| n.to_string()).collect();
    let certified = rcgen::generate_simple_self_signed(names)?;
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        certified.signing_key.serialize_der(),
    ));
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(vec![certified.cert.der().clone()], key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_self_signed_identity_is_made() {
        assert!(self_signed().is_ok());
    }
}
