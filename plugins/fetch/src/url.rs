//! Just enough URL handling to fill in a wasi:http request.

/// An absolute `http` or `https` URL, split into the request's parts.
#[derive(Debug, PartialEq)]
pub struct Url<'a> {
    pub https: bool,
    /// `host` or `host:port`.
    pub authority: &'a str,
    /// The path and query, starting with `/`; the fragment is dropped.
    pub path_with_query: String,
}

/// Splits `url`; the error says what is wrong, for the model.
pub fn split(url: &str) -> Result<Url<'_>, String> {
    let Some((scheme, rest)) = url.split_once("://") else {
        return Err(format!("{url:?} is not an absolute URL: write it as https://host/path"));
    };
    let https = match scheme.to_ascii_lowercase().as_str() {
        "https" => true,
        "http" => false,
        _ => return Err(format!("{url:?} is not an http or https URL")),
    };
    if url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "{url:?} contains spaces or control characters; percent-encode them"
        ));
    }
    let rest = rest.split('#').next().unwrap_or_default();
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.is_empty() {
        return Err(format!("{url:?} has no host"));
    }
    if authority.contains('@') {
        return Err(format!(
            "{url:?} carries credentials (user@host), which this plugin does not send"
        ));
    }
    // `http://host` and `http://host?q` mean `/` and `/?q`.
    let path_with_query = if path.starts_with('/') {
        path.to_string()
    } else {
        format!("/{path}")
    };
    Ok(Url {
        https,
        authority,
        path_with_query,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(url: &str) -> (bool, String, String) {
        let url = split(url).unwrap();
        (url.https, url.authority.to_string(), url.path_with_query)
    }

    #[test]
    fn splits() {
        let p = |https, a: &str, p: &str| (https, a.to_string(), p.to_string());
        assert_eq!(parts("https://example.com"), p(true, "example.com", "/"));
        assert_eq!(
            parts("HTTP://example.com:8080/a/b?x=1#top"),
            p(false, "example.com:8080", "/a/b?x=1")
        );
        assert_eq!(parts("https://example.com?q=1"), p(true, "example.com", "/?q=1"));
        assert_eq!(parts("http://[::1]:80/"), p(false, "[::1]:80", "/"));
    }

    #[test]
    fn refuses() {
        for bad in [
            "example.com",
            "ftp://example.com/",
            "https:///path",
            "https://user:pw@example.com/",
            "https://example.com/a b",
        ] {
            assert!(split(bad).is_err(), "{bad}");
        }
    }
}
