//! A registry client that a hostile registry cannot make Warden spend on:
//! every answer has a size cap and a deadline, redirects are few and stay on
//! HTTPS, credentials never follow a redirect to another host, and plain
//! HTTP is spoken only to registries the operator names as insecure.
//!
//! Why not `oci-client`: version 0.18 reads manifests, token answers and
//! error bodies whole (`Response::bytes`, no cap) and follows reqwest's
//! default redirects (ten, to any scheme), so a registry could make Warden
//! hold gigabytes or send a token over plain HTTP. The pull and push
//! protocol is a handful of requests; this file speaks it with the HTTP and
//! TLS stack Warden already links.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;

use crate::credentials::Credentials;
use warden_runtime::secrets::SecretAddress;

/// How much of a registry's answer Warden reads, and for how long.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest component (`application/wasm` layer) pulled.
    pub max_component: u64,
    /// Connecting, sending and receiving the head of each answer; reading a
    /// small body (manifest, token, signature) in full.
    pub request_timeout: Duration,
}

/// A component's download may take `request_timeout` plus its size at this
/// rate, however it trickles: 256 MiB gets a little over four minutes.
pub const MIN_DOWNLOAD_RATE: u64 = 1024 * 1024;

/// Everything a pull asks before the component's bytes (manifest, up to 16
/// signatures, referrers and bundles, challenges, redirects) shares this
/// many request timeouts: a registry answering each request just in time
/// cannot stretch a pull past it.
pub const METADATA_REQUESTS: u32 = 10;

impl Limits {
    pub fn download_timeout(&self, size: u64) -> Duration {
        self.request_timeout + Duration::from_secs(size / MIN_DOWNLOAD_RATE)
    }

    pub fn metadata_deadline(&self) -> Duration {
        self.request_timeout * METADATA_REQUESTS
    }
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_component: 256 * 1024 * 1024,
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// Manifests: the distribution spec asks registries to accept 4 MiB.
pub const MAX_MANIFEST_BYTES: usize = 4 * 1024 * 1024;
/// Token answers, error bodies, configs, signature payloads and referrer
/// manifests.
pub const MAX_SMALL_BYTES: usize = 64 * 1024;
/// cosign's `.sig` manifest: one layer per signature, each carrying its
/// certificate and Rekor entry in annotations (a few KiB each).
pub const MAX_SIGNATURE_MANIFEST_BYTES: usize = 256 * 1024;
/// Blob downloads are commonly redirected once, to storage.
const MAX_REDIRECTS: usize = 3;
const USER_AGENT: &str = concat!("warden/", env!("CARGO_PKG_VERSION"));

/// One registry, for one repository's operations.
pub struct Registry {
    /// `host[:port]`, as the reference wrote it.
    host: String,
    /// Plain HTTP is allowed (the operator named this registry insecure).
    insecure: bool,
    credentials: Option<Credentials>,
    /// The Bearer token (or Basic header) the last challenge earned.
    authorization: Mutex<Option<HeaderValue>>,
    pub limits: Limits,
    /// `pull` or `pull,push`: what a Bearer token is asked for.
    actions: &'static str,
}

/// An answer whose body has not been read yet.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    body: Incoming,
    /// Where the answer came from: a storage redirect's query often holds
    /// a signature, so it is printed only redacted.
    url: SecretAddress,
    /// It came from another host than the registry (storage a redirect
    /// led to), whose error bodies quote the signed address they were given.
    elsewhere: bool,
}

impl Registry {
    pub fn new(host: &str, insecure: bool, credentials: Option<Credentials>, limits: Limits, push: bool) -> Self {
        Registry {
            host: host.to_string(),
            insecure,
            credentials,
            authorization: Mutex::new(None),
            limits,
            actions: if push { "pull,push" } else { "pull" },
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn is_insecure(&self) -> bool {
        self.insecure
    }

    fn base(&self) -> String {
        format!("{}://{}", if self.insecure { "http" } else { "https" }, self.host)
    }

    /// `method` `/v2/{repository}/{path}`, answering a registry's challenge
    /// (Basic or Bearer) once.
    pub async fn request(
        &self,
        method: Method,
        repository: &str,
        path: &str,
        headers: &[(header::HeaderName, &str)],
        body: Bytes,
    ) -> Result<Answer> {
        let url = if path.starts_with("http://") || path.starts_with("https://") {
            path.to_string()
        } else {
            format!("{}/v2/{repository}/{path}", self.base())
        };
        let authorization = self.authorization.lock().unwrap().clone();
        let answer = self
            .send(&method, &url, headers, body.clone(), authorization.as_ref())
            .await?;
        if answer.status != StatusCode::UNAUTHORIZED {
            return Ok(answer);
        }
        let challenge = answer
            .headers
            .get(header::WWW_AUTHENTICATE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let _ = answer.text().await;
        let Some(challenge) = challenge else {
            bail!("{} answered 401 without a challenge (`WWW-Authenticate`)", self.host);
        };
        let earned = self.answer_challenge(&challenge, repository).await?;
        *self.authorization.lock().unwrap() = Some(earned.clone());
        let answer = self.send(&method, &url, headers, body, Some(&earned)).await?;
        if answer.status == StatusCode::UNAUTHORIZED || answer.status == StatusCode::FORBIDDEN {
            let status = answer.status;
            let _ = answer.text().await;
            bail!(
                "{} refused the credentials for {repository} (HTTP {status}); check the entry for `{}` in the \
                 registry config",
                self.host,
                self.host
            );
        }
        Ok(answer)
    }

    async fn answer_challenge(&self, challenge: &str, repository: &str) -> Result<HeaderValue> {
        let (scheme, params) = parse_challenge(challenge);
        let no_credentials = || {
            anyhow!(
                "{} needs credentials for {repository} (HTTP 401): add an `auths` entry for `{}` to a Docker \
                 config.json (`--registry-config FILE`, or $DOCKER_CONFIG/config.json), or set \
                 WARDEN_REGISTRY_AUTH=\"{}=USER:PASSWORD\"",
                self.host,
                self.host,
                self.host
            )
        };
        match scheme.to_ascii_lowercase().as_str() {
            "basic" => {
                let credentials = self.credentials.as_ref().ok_or_else(no_credentials)?;
                Ok(credentials.basic_header())
            }
            "bearer" => {
                let realm = params
                    .iter()
                    .find(|(k, _)| k == "realm")
                    .map(|(_, v)| v.as_str())
                    .context("the registry's Bearer challenge names no realm")?;
                let service = params.iter().find(|(k, _)| k == "service").map(|(_, v)| v.as_str());
                let scope = format!("repository:{repository}:{}", self.actions);
                let mut url = format!(
                    "{realm}{}scope={}",
                    if realm.contains('?') { '&' } else { '?' },
                    encode(&scope)
                );
                if let Some(service) = service {
                    url.push_str(&format!("&service={}", encode(service)));
                }
                // Credentials go to the realm only over HTTPS (or to an
                // insecure registry's own host).
                let basic = self.credentials.as_ref().map(Credentials::basic_header);
                let answer = self.send(&Method::GET, &url, &[], Bytes::new(), basic.as_ref()).await?;
                let status = answer.status;
                let body = answer.read(MAX_SMALL_BYTES, self.limits.request_timeout).await?;
                if status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN {
                    return Err(if self.credentials.is_none() {
                        no_credentials()
                    } else {
                        anyhow!(
                            "the token service of {} refused the credentials for {repository} (HTTP {status}); \
                             check the entry for `{}` in the registry config",
                            self.host,
                            self.host
                        )
                    });
                }
                if !status.is_success() {
                    bail!("the token service of {} answered HTTP {status}", self.host);
                }
                #[derive(serde::Deserialize)]
                struct Token {
                    token: Option<String>,
                    access_token: Option<String>,
                }
                let token: Token =
                    serde_json::from_slice(&body).context("the token service did not answer with a token")?;
                let token = token
                    .token
                    .or(token.access_token)
                    .context("the token service's answer has no token")?;
                HeaderValue::from_str(&format!("Bearer {token}")).context("the token is not a valid header value")
            }
            other => bail!(
                "{} asks for `{other}` authentication, which Warden does not speak",
                self.host
            ),
        }
    }

    /// One request, following at most `MAX_REDIRECTS` redirects. Plain HTTP
    /// only to this registry when it is insecure; `authorization` is sent
    /// only to this registry's host (or a token realm over HTTPS).
    async fn send(
        &self,
        method: &Method,
        url: &str,
        headers: &[(header::HeaderName, &str)],
        body: Bytes,
        authorization: Option<&HeaderValue>,
    ) -> Result<Answer> {
        let mut url = url.to_string();
        let mut authorization = authorization.cloned();
        for _ in 0..=MAX_REDIRECTS {
            let shown = SecretAddress::new(url.clone());
            let uri: Uri = url.parse().with_context(|| format!("`{shown}` is not a URL"))?;
            let authority = uri
                .authority()
                .with_context(|| format!("`{shown}` has no host"))?
                .as_str()
                .to_string();
            if authority.contains('@') {
                bail!(
                    "{} sent Warden to `{shown}`, which carries credentials in the URL; refused",
                    self.host
                );
            }
            let https = match uri.scheme_str() {
                Some("https") => true,
                Some("http") if self.insecure && authority == self.host => false,
                Some("http") => bail!(
                    "{} sent Warden to plain-HTTP `{shown}`; only registries named with --insecure-registry \
                     are spoken to without TLS",
                    self.host
                ),
                _ => bail!("`{shown}` is not an http(s) URL"),
            };
            let started = Instant::now();
            let answer = tokio::time::timeout(
                self.limits.request_timeout,
                exchange(&uri, https, method, headers, body.clone(), authorization.as_ref()),
            )
            .await
            .map_err(|_| anyhow!("no answer from {shown} within {:?}", self.limits.request_timeout))?
            .with_context(|| format!("cannot reach {shown}"))?;
            tracing::debug!(url = %shown, status = %answer.status(), elapsed = ?started.elapsed(), "registry");
            let status = answer.status();
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                let location = answer
                    .headers()
                    .get(header::LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .with_context(|| format!("{shown} redirected (HTTP {status}) without a `Location`"))?;
                let next = resolve(&uri, location)?;
                let next_authority = next
                    .parse::<Uri>()
                    .ok()
                    .and_then(|u| u.authority().map(|a| a.to_string()));
                if next_authority.as_deref() != Some(authority.as_str()) {
                    // Storage URLs carry their own signature; the registry's
                    // credentials stay with the registry.
                    authorization = None;
                }
                url = next;
                continue;
            }
            let (parts, body) = answer.into_parts();
            return Ok(Answer {
                status,
                headers: parts.headers,
                body,
                url: shown,
                elsewhere: authority != self.host,
            });
        }
        bail!("{} redirected more than {MAX_REDIRECTS} times", self.host)
    }
}

impl Answer {
    /// The whole body, at most `max` bytes, within `deadline`.
    pub async fn read(self, max: usize, deadline: Duration) -> Result<Bytes> {
        let url = self.url.clone();
        let collect = async move {
            let mut body = self.body;
            let mut out = Vec::new();
            while let Some(frame) = body.frame().await {
                let frame = frame.with_context(|| format!("reading the answer from {url}"))?;
                if let Ok(data) = frame.into_data() {
                    if out.len() + data.len() > max {
                        bail!("the answer from {url} is larger than {max} bytes; refused");
                    }
                    out.extend_from_slice(&data);
                }
            }
            Ok(Bytes::from(out))
        };
        tokio::time::timeout(deadline, collect)
            .await
            .map_err(|_| anyhow!("the answer from {} did not arrive within {deadline:?}", self.url))?
    }

    /// A short text of an error answer, for messages; not the text of
    /// storage a redirect led to (S3's `SignatureDoesNotMatch` quotes the
    /// signature it was given).
    pub async fn text(self) -> String {
        if self.elsewhere {
            let url = self.url.clone();
            let _ = self.read(MAX_SMALL_BYTES, Duration::from_secs(5)).await;
            return format!("(the answer of {url} is not shown: it may quote the signed address)");
        }
        let deadline = Duration::from_secs(5);
        match self.read(MAX_SMALL_BYTES, deadline).await {
            Ok(bytes) => String::from_utf8_lossy(&bytes).chars().take(300).collect(),
            Err(_) => String::new(),
        }
    }

    /// The next piece of the body; `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>> {
        loop {
            match self.body.frame().await {
                None => return Ok(None),
                Some(frame) => {
                    if let Ok(data) = frame.with_context(|| format!("reading {}", self.url))?.into_data() {
                        return Ok(Some(data));
                    }
                }
            }
        }
    }

    pub fn url(&self) -> &SecretAddress {
        &self.url
    }
}

async fn exchange(
    uri: &Uri,
    https: bool,
    method: &Method,
    headers: &[(header::HeaderName, &str)],
    body: Bytes,
    authorization: Option<&HeaderValue>,
) -> Result<http::Response<Incoming>> {
    let host = uri
        .host()
        .context("no host")?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
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
    // The connection lives as long as its one answer's body is read.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    let path = uri.path_and_query().map_or("/", |p| p.as_str());
    let mut request = http::Request::builder()
        .method(method.clone())
        .uri(path)
        .header(header::HOST, uri.authority().context("no authority")?.as_str())
        .header(header::USER_AGENT, USER_AGENT)
        .header(header::CONTENT_LENGTH, body.len());
    for (name, value) in headers {
        request = request.header(name, *value);
    }
    if let Some(authorization) = authorization {
        request = request.header(header::AUTHORIZATION, authorization);
    }
    Ok(sender.send_request(request.body(Full::new(body))?).await?)
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Io for T {}

/// `location` against `base`: absolute, or a path on the same origin.
fn resolve(base: &Uri, location: &str) -> Result<String> {
    if location.starts_with("http://") || location.starts_with("https://") {
        return Ok(location.to_string());
    }
    if location.starts_with('/') && !location.starts_with("//") {
        let scheme = base.scheme_str().unwrap_or("https");
        let authority = base.authority().context("no authority")?;
        return Ok(format!("{scheme}://{authority}{location}"));
    }
    bail!(
        "the registry redirected to `{}`, which is neither a URL nor an absolute path",
        SecretAddress::new(location)
    )
}

/// `Bearer realm="…",service="…"` → (`Bearer`, [(realm, …), (service, …)]).
pub fn parse_challenge(challenge: &str) -> (String, Vec<(String, String)>) {
    let challenge = challenge.trim();
    let (scheme, rest) = challenge.split_once(' ').unwrap_or((challenge, ""));
    let mut params = Vec::new();
    let mut rest = rest.trim();
    while !rest.is_empty() {
        let Some((key, after)) = rest.split_once('=') else {
            break;
        };
        let key = key.trim().trim_start_matches(',').trim().to_ascii_lowercase();
        let after = after.trim_start();
        let (value, remaining) = if let Some(quoted) = after.strip_prefix('"') {
            let end = quoted.find('"').unwrap_or(quoted.len());
            (quoted[..end].to_string(), quoted.get(end + 1..).unwrap_or(""))
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (after[..end].trim().to_string(), &after[end..])
        };
        params.push((key, value));
        rest = remaining.trim_start().trim_start_matches(',').trim_start();
    }
    (scheme.to_string(), params)
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_read_with_quoted_commas() {
        let (scheme, params) = parse_challenge(
            r#"Bearer realm="https://auth.example/token",service="reg,istry",scope="repository:a:pull""#,
        );
        assert_eq!(scheme, "Bearer");
        assert_eq!(
            params,
            [
                ("realm".to_string(), "https://auth.example/token".to_string()),
                ("service".to_string(), "reg,istry".to_string()),
                ("scope".to_string(), "repository:a:pull".to_string()),
            ]
        );
        assert_eq!(parse_challenge(r#"Basic realm="Registry""#).0, "Basic");
    }

    #[test]
    fn redirects_resolve_to_urls_or_same_origin_paths() {
        let base: Uri = "https://r.example:5000/v2/a/blobs/x".parse().unwrap();
        assert_eq!(resolve(&base, "/b").unwrap(), "https://r.example:5000/b");
        assert_eq!(
            resolve(&base, "https://s3.example/x?sig=1").unwrap(),
            "https://s3.example/x?sig=1"
        );
        assert!(resolve(&base, "//evil.example/x").is_err());
        assert!(resolve(&base, "relative").is_err());
    }
}
