//! Outgoing HTTP (`wasi:http`) from a plugin, sent by Warden itself.
//!
//! wasmtime-wasi-http's default sender resolves the host name on its own and
//! waits up to 600 s; here every request is first checked against the
//! plugin's `[network] allow` rules, then the name is resolved once and the
//! *resolved address* is checked (so DNS cannot point a listed name at a
//! private address), and the connection goes to exactly that address —
//! with connect, first-byte and between-bytes timeouts and a cap on the
//! response body.

use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame};
use http_body_util::BodyExt;
use wasmtime_wasi_http::io::TokioIo;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use super::denials::Denials;
use crate::grants::{Grants, HttpDenial, Scheme};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(30);
const BETWEEN_BYTES_TIMEOUT: Duration = Duration::from_secs(30);

/// The `wasi:http` hooks of one call's sandbox.
pub struct Egress {
    pub plugin: Arc<str>,
    pub manifest: Arc<str>,
    pub grants: Arc<Grants>,
    pub denials: Denials,
}

type Sent = (
    http::Response<WasiBody>,
    Box<dyn Future<Output = Result<(), Error>> + Send>,
);

impl WasiHttpHooks for Egress {
    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _response_errors: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Result<Sent, Error>> + Send> {
        let uri = request.uri();
        let host = uri.host().unwrap_or_default().to_string();
        let decision = self
            .grants
            .http
            .check_target(uri.scheme_str().unwrap_or("https"), &host, uri.port_u16());
        let scheme = match decision {
            Ok(scheme) => scheme,
            Err(denial) => return Box::new(std::future::ready(Err(self.deny(&denial)))),
        };
        let port = uri.port_u16().unwrap_or(match scheme {
            Scheme::Http => 80,
            Scheme::Https => 443,
        });
        let this = Egress {
            plugin: self.plugin.clone(),
            manifest: self.manifest.clone(),
            grants: self.grants.clone(),
            denials: self.denials.clone(),
        };
        Box::new(async move { this.send(scheme, host, port, request, options).await })
    }
}

impl Egress {
    /// Records a denial; the guest gets an ordinary error carrying the
    /// explanation.
    fn deny(&self, denial: &HttpDenial) -> Error {
        let message = denial.describe(&self.manifest);
        self.denials
            .record(&self.plugin, crate::metrics::DenialKind::Http, message.clone());
        Error::InternalError(Some(message))
    }

    async fn send(
        self,
        scheme: Scheme,
        host: String,
        port: u16,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
    ) -> Result<Sent, Error> {
        let options = options.unwrap_or_default();
        let connect_timeout = options.connect_timeout.unwrap_or(CONNECT_TIMEOUT).min(CONNECT_TIMEOUT);
        let first_byte_timeout = options
            .first_byte_timeout
            .unwrap_or(FIRST_BYTE_TIMEOUT)
            .min(FIRST_BYTE_TIMEOUT);
        let between_bytes = options
            .between_bytes_timeout
            .unwrap_or(BETWEEN_BYTES_TIMEOUT)
            .clamp(Duration::from_millis(1), BETWEEN_BYTES_TIMEOUT);

        let address = self.resolve(scheme, &host, port, connect_timeout).await?;
        let stream = match tokio::time::timeout(connect_timeout, tokio::net::TcpStream::connect(address)).await {
            Ok(Ok(stream)) => stream,
            Ok(Err(error)) if error.kind() == std::io::ErrorKind::ConnectionRefused => {
                return Err(Error::ConnectionRefused);
            }
            Ok(Err(error)) => return Err(Error::Connect(error)),
            Err(_) => return Err(Error::ConnectionTimeout),
        };
        let io: Box<dyn Io> = match scheme {
            Scheme::Http => Box::new(stream),
            Scheme::Https => {
                let name = rustls::pki_types::ServerName::try_from(host.clone())
                    .map_err(|_| Error::InternalError(Some(format!("`{host}` is not a valid TLS server name"))))?;
                let tls = tokio_rustls::TlsConnector::from(crate::tls::client_config())
                    .connect(name, stream)
                    .await
                    .map_err(Error::Tls)?;
                Box::new(tls)
            }
        };
        let (mut sender, connection) =
            tokio::time::timeout(connect_timeout, hyper::client::conn::http1::handshake(TokioIo::new(io)))
                .await
                .map_err(|_| Error::ConnectionTimeout)?
                .map_err(Error::from)?;
        // The connection lives until its body is consumed or dropped, and
        // never longer than a generous bound.
        tokio::spawn(async move {
            let _ = tokio::time::timeout(Duration::from_secs(600), connection).await;
        });
        // Origin-form on the wire: the path, not the absolute URI.
        let path = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
        *request.uri_mut() = path.parse().map_err(|_| Error::HttpRequestUriInvalid)?;
        let response = tokio::time::timeout(first_byte_timeout, sender.send_request(request))
            .await
            .map_err(|_| Error::ConnectionReadTimeout)?
            .map_err(Error::from)?;
        let limit = self.grants.http.max_response;
        let response = response.map(|incoming| {
            LimitedBody {
                inner: incoming,
                remaining: limit,
                limit,
                between_bytes,
                idle: Box::pin(tokio::time::sleep(between_bytes)),
            }
            .boxed_unsync()
        });
        Ok((response, Box::new(std::future::ready(Ok(())))))
    }

    /// Resolves `host` once and picks the first address the grant allows
    /// for this scheme and port.
    async fn resolve(&self, scheme: Scheme, host: &str, port: u16, timeout: Duration) -> Result<SocketAddr, Error> {
        let addresses: Vec<SocketAddr> =
            match tokio::time::timeout(timeout, tokio::net::lookup_host((host, port))).await {
                Ok(Ok(found)) => found.collect(),
                Ok(Err(_)) => {
                    return Err(Error::DnsError {
                        rcode: Some("name not resolved".into()),
                        info_code: None,
                    });
                }
                Err(_) => return Err(Error::DnsTimeout),
            };
        let mut refused = None;
        for address in &addresses {
            match self.grants.http.check_address(scheme, host, *address) {
                Ok(()) => return Ok(*address),
                Err(denial) => refused = refused.or(Some(denial)),
            }
        }
        match refused {
            Some(denial) => Err(self.deny(&denial)),
            None => Err(Error::DestinationNotFound),
        }
    }
}

trait Io: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin> Io for T {}

/// A response body with a size cap and an idle timeout.
struct LimitedBody {
    inner: hyper::body::Incoming,
    remaining: u64,
    limit: u64,
    between_bytes: Duration,
    idle: Pin<Box<tokio::time::Sleep>>,
}

impl Body for LimitedBody {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                let size = frame.data_ref().map_or(0, |d| d.len() as u64);
                if size > self.remaining {
                    self.remaining = 0;
                    return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(self.limit)))));
                }
                self.remaining -= size;
                let deadline = tokio::time::Instant::now() + self.between_bytes;
                self.idle.as_mut().reset(deadline);
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(error))) => Poll::Ready(Some(Err(Error::from(error)))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match self.idle.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(Error::ConnectionReadTimeout))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }
}
