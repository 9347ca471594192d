//! The TLS client configuration Warden connects with: Web PKI roots, no
//! client certificate. Shared by plugins' outgoing HTTPS (`egress`) and
//! Warden's own fetches of OAuth metadata (the transport's `auth::fetch`).

use std::sync::{Arc, OnceLock};

/// Built once: the root store is the same for every connection.
pub fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.into(),
            };
            Arc::new(
                rustls::ClientConfig::builder()
                    .with_root_certificates(roots)
                    .with_no_client_auth(),
            )
        })
        .clone()
}
