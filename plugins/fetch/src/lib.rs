//! `fetch`: fetches a web page for the model, over the host's wasi:http.
//!
//! The plugin has no network of its own: every request goes through the host, which
//! decides which hosts it may reach (the operator's grant) and may refuse with an
//! explanation; that explanation is passed on to the model word for word.

mod http;
mod url;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use warden_plugin::{Content, Error, Structured, tool};

const DEFAULT_MAX_BYTES: usize = 100_000;
const MAX_MAX_BYTES: usize = 1_000_000;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FetchArgs {
    /// The absolute http:// or https:// URL to fetch.
    #[schemars(regex(pattern = "^[Hh][Tt][Tt][Pp][Ss]?://"))]
    url: String,
    /// The most body bytes to return (default 100000).
    #[schemars(range(min = 1, max = MAX_MAX_BYTES), extend("default" = DEFAULT_MAX_BYTES))]
    max_bytes: Option<usize>,
}

#[derive(Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct Fetched {
    /// The HTTP status code.
    #[schemars(range(min = 100, max = 999))]
    status: u16,
    /// The Content-Type header, if any.
    content_type: Option<String>,
    /// Body bytes returned (after any cut).
    bytes: usize,
    /// True when the body was cut at max_bytes.
    truncated: bool,
}

/// Fetches an http or https URL with GET and returns the response body as text (invalid
/// UTF-8 is replaced). The body is cut after `max_bytes` (default 100000), with a note
/// saying so. Redirects are not followed: a 3xx answer names its target. An HTTP error
/// status (400 and up) comes back as an error result with the body. Only hosts the operator
/// allowed can be reached.
#[tool(
    title = "Fetch a URL",
    read_only,
    destructive = false,
    idempotent,
    open_world,
    task = "optional"
)]
fn fetch_url(args: FetchArgs) -> Result<Structured<Fetched>, Error> {
    let max_bytes = match args.max_bytes {
        None => DEFAULT_MAX_BYTES,
        Some(n @ 1..=MAX_MAX_BYTES) => n,
        Some(_) => {
            return Err(Error::InvalidArguments(format!(
                "`max_bytes` must be between 1 and {MAX_MAX_BYTES}"
            )));
        }
    };
    let url = url::split(&args.url).map_err(Error::InvalidArguments)?;
    let response =
        http::get(&url, max_bytes).map_err(|e| Error::Failed(format!("could not fetch {}: {e}", args.url)))?;
    Ok(answer(&args.url, max_bytes, response))
}

warden_plugin::export! { tools: [fetch_url] }

/// The body as text; a cut that split a UTF-8 character drops the partial character.
fn body_text(body: &[u8], truncated: bool) -> String {
    let body = match std::str::from_utf8(body) {
        Err(e) if truncated && e.error_len().is_none() => &body[..e.valid_up_to()],
        _ => body,
    };
    String::from_utf8_lossy(body).into_owned()
}

fn answer(url: &str, max_bytes: usize, response: http::Response) -> Structured<Fetched> {
    let status = response.status;
    let is_error = status >= 400;
    let mut content = Vec::new();
    if is_error {
        content.push(Content::Text(format!(
            "HTTP {status}: the server answered {url} with an error"
        )));
    }
    if response.body.is_empty() {
        if !is_error {
            content.push(Content::Text(format!("(HTTP {status}, empty body)")));
        }
    } else {
        content.push(Content::Text(body_text(&response.body, response.truncated)));
    }
    if response.truncated {
        content.push(Content::Text(format!(
            "[cut after {max_bytes} bytes: the body is longer; pass a larger max_bytes (at most {MAX_MAX_BYTES}) to see more]"
        )));
    }
    if (300..400).contains(&status)
        && let Some(location) = &response.location
    {
        content.push(Content::Text(format!(
            "[HTTP {status}: redirects to {location}, which was not followed]"
        )));
    }
    let fetched = Fetched {
        status,
        content_type: response.content_type,
        bytes: response.body.len(),
        truncated: response.truncated,
    };
    Structured::with_content(content, fetched).error_if(is_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_characters_are_dropped() {
        let text = "héllo".as_bytes();
        assert_eq!(body_text(&text[..2], true), "h");
        assert_eq!(body_text(&text[..2], false), "h\u{fffd}");
        assert_eq!(body_text(b"ok\xff", true), "ok\u{fffd}");
    }
}
