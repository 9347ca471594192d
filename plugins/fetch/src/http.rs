//! One GET over wasi:http/outgoing-handler.

use crate::url::Url;
use wasi::http::outgoing_handler;
use wasi::http::types::{ErrorCode, Fields, IncomingResponse, Method, OutgoingRequest, Scheme, http_error_code};
use wasi::io::streams::StreamError;

/// Sent with every request: some servers refuse requests without one.
const USER_AGENT: &str = concat!("warden-fetch-plugin/", env!("CARGO_PKG_VERSION"));

/// Bytes asked of the body stream at a time.
const CHUNK: usize = 64 << 10;

pub struct Response {
    pub status: u16,
    pub content_type: Option<String>,
    pub location: Option<String>,
    /// At most `max_bytes` of the body.
    pub body: Vec<u8>,
    /// True when the body went on past `max_bytes`.
    pub truncated: bool,
}

/// The error's text, including any explanation the host put in it.
fn describe(code: &ErrorCode) -> String {
    format!("{code:?}")
}

/// Sends the GET and reads at most `max_bytes` of the body. The error is the host's
/// or the network's, as text.
pub fn get(url: &Url, max_bytes: usize) -> Result<Response, String> {
    let headers = Fields::new();
    headers
        .append("user-agent", USER_AGENT.as_bytes())
        .map_err(|e| format!("the host refused the user-agent header: {e:?}"))?;
    let request = OutgoingRequest::new(headers);
    let scheme = if url.https { Scheme::Https } else { Scheme::Http };
    let refused = |part: &str| format!("the host refused the request's {part}");
    request.set_method(&Method::Get).map_err(|()| refused("method"))?;
    request.set_scheme(Some(&scheme)).map_err(|()| refused("scheme"))?;
    request
        .set_authority(Some(url.authority))
        .map_err(|()| refused("authority"))?;
    request
        .set_path_with_query(Some(&url.path_with_query))
        .map_err(|()| refused("path"))?;
    // The body is never taken, so the request goes out with an empty one.
    let future = outgoing_handler::handle(request, None).map_err(|code| describe(&code))?;
    let pollable = future.subscribe();
    pollable.block();
    drop(pollable);
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(code))) => return Err(describe(&code)),
        Some(Err(())) | None => return Err("the host gave no response".into()),
    };
    read(&response, max_bytes)
}

fn header(response: &IncomingResponse, name: &str) -> Option<String> {
    let headers = response.headers();
    let values = headers.get(name);
    values.first().map(|value| String::from_utf8_lossy(value).into_owned())
}

fn read(response: &IncomingResponse, max_bytes: usize) -> Result<Response, String> {
    let status = response.status();
    let content_type = header(response, "content-type");
    let location = header(response, "location");
    let body = response
        .consume()
        .map_err(|()| "the response body was already taken".to_string())?;
    let stream = body
        .stream()
        .map_err(|()| "the body stream was already taken".to_string())?;
    let mut bytes = Vec::new();
    let mut truncated = false;
    let outcome = loop {
        // One byte past the limit tells whether the body goes on.
        let want = CHUNK.min(max_bytes + 1 - bytes.len());
        match stream.blocking_read(want as u64) {
            Ok(chunk) => {
                bytes.extend_from_slice(&chunk);
                if bytes.len() > max_bytes {
                    bytes.truncate(max_bytes);
                    truncated = true;
                    break Ok(());
                }
            }
            Err(StreamError::Closed) => break Ok(()),
            Err(StreamError::LastOperationFailed(error)) => {
                break Err(match http_error_code(&error) {
                    Some(code) => describe(&code),
                    None => error.to_debug_string(),
                });
            }
        }
    };
    // Child resources go before their parents.
    drop(stream);
    drop(body);
    outcome.map_err(|e| format!("the connection failed while reading the body: {e}"))?;
    Ok(Response {
        status,
        content_type,
        location,
        body: bytes,
        truncated,
    })
}
