//! Fetching the authorization server's metadata and keys: one bounded
//! `GET` of a JSON document over HTTPS (plain HTTP only to a loopback
//! address, for tests and sidecars), with a deadline and a size cap, so a
//! slow or hostile authorization server costs Warden a few kilobytes and
//! seconds, never a stuck task.

use std::time::Duration;

use anyhow::{Context, Result, bail};
use http_body_util::{BodyExt, Empty, Limited};
use hyper::Uri;
use warden_runtime::secrets::SecretAddress;
use wasmtime_wasi_http::io::TokioIo;

/// The most a metadata document or key set may weigh.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;
/// For connecting, sending and reading the whole answer.
const DEADLINE: Duration = Duration::from_secs(10);

/// Whether `uri` may be fetched: `https`, or `http` to a loopback host,
/// and never with credentials in it (an issuer identifier or key set URL
/// has none; one typed with them would print them in every message).
pub fn check_url(url: &str) -> Result<Uri> {
    let shown = SecretAddress::new(url);
    let uri: Uri = url.parse().with_context(|| format!("`{shown}` is not a URL"))?;
    let host = uri.host().with_context(|| format!("`{shown}` has no host"))?;
    if uri.authority().is_some_and(|a| a.as_str().contains('@')) {
        bail!("`{shown}` carries credentials in the URL; an authorization server's URLs never do — remove them");
    }
    match uri.scheme_str() {
        Some("https") => Ok(uri),
        Some("http") if is_loopback(host) => Ok(uri),
        Some("http") => {
            bail!("`{shown}` is plain HTTP; use https (plain http is allowed only to 127.0.0.1, ::1 or localhost)")
        }
        _ => bail!("`{shown}` is not an http(s) URL"),
    }
}

pub fn is_loopback(host: &str) -> bool {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost" || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// `GET url` and parse the answer as JSON; anything but a `200` with a
/// JSON body within the limits is an error that names the URL.
pub async fn json(url: &str) -> Result<serde_json::Value> {
    let uri = check_url(url)?;
    // A key set's URL comes from the server's metadata: its query may hold
    // a token, so it is printed redacted like the operator's addresses.
    let shown = SecretAddress::new(url);
    let body = tokio::time::timeout(DEADLINE, get(&uri))
        .await
        .map_err(|_| anyhow::anyhow!("no answer from {shown} within {DEADLINE:?}"))?
        .with_context(|| format!("cannot fetch {shown}"))?;
    serde_json::from_slice(&body).with_context(|| format!("{shown} did not answer with JSON"))
}

async fn get(uri: &Uri) -> Result<bytes::Bytes> {
    let host = uri
        .host()
        .context("no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let https = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
    let stream = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
    let io: Box<dyn Io> = if https {
        let name = rustls::pki_types::ServerName::try_from(host.clone())
            .with_context(|| format!("`{host}` is not a valid TLS server name"))?;
        Box::new(
            tokio_rustls::TlsConnector::from(warden_runtime::tls::client_config())
                .connect(name, stream)
                .await?,
        )
    } else {
        Box::new(stream)
    };
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io)).await?;
    // Ends with the request: the deadline around `get` drops both.
    let connection = tokio::spawn(connection);
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let authority = uri.authority().context("no authority")?.as_str();
    let request = hyper::Request::get(path)
        .header(hyper::header::HOST, authority)
        .header(hyper::header::ACCEPT, "application/json")
        .header(hyper::header::USER_AGENT, concat!("warden/", env!("CARGO_PKG_VERSION")))
        .body(Empty::<bytes::Bytes>::new())?;
    let response = sender.send_request(request).await?;
    let status = response.status();
    let body = Limited::new(response.into_body(), MAX_DOCUMENT_BYTES)
        .collect()
        .await
        .map_err(|error| anyhow::anyhow!("reading the answer: {error} (at most {MAX_DOCUMENT_BYTES} bytes are read)"))?
        .to_bytes();
    connection.abort();
    if !status.is_success() {
        bail!("the answer was HTTP {status}");
    }
    Ok(body)
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Io for T {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_or_loopback_http_only() {
        assert!(check_url("https://auth.example.com/realms/x").is_ok());
        assert!(check_url("http://127.0.0.1:9000").is_ok());
        assert!(check_url("http://[::1]:9000/").is_ok());
        assert!(check_url("http://localhost/").is_ok());
        let refused = check_url("http://auth.example.com").unwrap_err().to_string();
        assert!(refused.contains("plain HTTP; use https"), "{refused}");
        assert!(check_url("ftp://auth.example.com").is_err());
        let refused = check_url("https://admin:hunter2@auth.example.com/realms/x")
            .unwrap_err()
            .to_string();
        assert!(refused.contains("carries credentials"), "{refused}");
        assert!(!refused.contains("hunter2") && !refused.contains("admin"), "{refused}");
    }
}
