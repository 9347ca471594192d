//! `[interaction]`: what a plugin may ask of the client — the user
//! (elicitation), the client's model (sampling), the client's roots — and
//! what one call may ask for.

use std::net::IpAddr;

use super::addresses::canonical;
use super::network::{HostPattern, HttpRule, Scheme};
use crate::contract::Interaction;

/// `[interaction]`: whether a plugin may ask the user (elicitation), the
/// client's model (sampling) or the client's roots, and how much. Nothing by
/// default: a request that is not granted reaches the plugin as `refused`.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionGrant {
    pub elicit: bool,
    pub sample: bool,
    pub roots: bool,
    /// The most tokens one sampling request may ask for; larger requests are capped.
    pub max_tokens: u32,
    /// The most times one call may answer `input-required`.
    pub max_rounds: u32,
    /// `url-allow`: where a URL-mode elicitation may send the user, as
    /// `[network] allow` entries are written and matched.
    pub url_allow: Vec<HttpRule>,
}

/// `[interaction] max-tokens` when not set.
pub const DEFAULT_MAX_TOKENS: u32 = 1024;
/// `[interaction] max-rounds` when not set.
pub const DEFAULT_MAX_ROUNDS: u32 = 4;

impl Default for InteractionGrant {
    fn default() -> Self {
        Self {
            elicit: false,
            sample: false,
            roots: false,
            max_tokens: DEFAULT_MAX_TOKENS,
            max_rounds: DEFAULT_MAX_ROUNDS,
            url_allow: Vec::new(),
        }
    }
}

/// Why a URL-mode elicitation was not put to the client.
#[derive(Debug, Clone, PartialEq)]
pub enum UrlDenial {
    /// Not an absolute `https:` (or `http:` to loopback) URL with a host.
    Scheme(String),
    /// `http:` to a host that is not loopback.
    PlainHttp(String),
    /// A user name or password before the host (`https://trusted@evil/`).
    UserInfo,
    /// No `[interaction] url-allow` entry covers the host and port.
    NotListed { host: String, port: u16 },
}

impl UrlDenial {
    /// A message for the plugin and the log: what was refused and which
    /// manifest key would allow it.
    pub fn describe(&self, manifest: &str) -> String {
        match self {
            UrlDenial::Scheme(scheme) => format!(
                "a URL elicitation may only send the user to an https URL (or http to loopback), not `{scheme}`"
            ),
            UrlDenial::PlainHttp(host) => {
                format!("a URL elicitation may use http only to loopback; `{host}` needs https")
            }
            UrlDenial::UserInfo => {
                "a URL elicitation's URL may not carry a user name or password before its host".to_string()
            }
            UrlDenial::NotListed { host, port } => format!(
                "a URL elicitation to {host}:{port} is not granted; add \"{host}\" (or \"{host}:{port}\") to \
                 [interaction] url-allow in {manifest}"
            ),
        }
    }

    /// The audit record's `denied` entry: the scheme or host, never the whole URL.
    pub fn audit_entry(&self) -> String {
        let what = match self {
            UrlDenial::Scheme(scheme) => format!("{scheme}:"),
            UrlDenial::PlainHttp(host) => format!("http://{host}"),
            UrlDenial::UserInfo => "a URL with user info".to_string(),
            UrlDenial::NotListed { host, port } => format!("{host}:{port}"),
        };
        format!("interaction.url-allow ({what})")
    }
}

/// The most of a refused URL's scheme a denial repeats.
const MAX_SCHEME_SHOWN: usize = 32;

impl InteractionGrant {
    /// May a URL-mode elicitation send the user to `url`? Only an absolute
    /// `https:` URL — or `http:` to a loopback address or `localhost` — whose
    /// host and port a `url-allow` entry covers, matched exactly as `[network]
    /// allow` entries are. The URL is read by `http`'s strict parser: spaces,
    /// backslashes, non-ASCII and anything else it does not accept are refused,
    /// so what is checked is what the client gets.
    pub fn check_url(&self, url: &str) -> Result<(), UrlDenial> {
        let scheme_of = |text: &str| -> String {
            let scheme = text.split_once(':').map_or(text, |(scheme, _)| scheme);
            scheme
                .chars()
                .take(MAX_SCHEME_SHOWN)
                .collect::<String>()
                .to_ascii_lowercase()
        };
        let uri: http::Uri = url.parse().map_err(|_| UrlDenial::Scheme(scheme_of(url)))?;
        let scheme = match uri.scheme_str() {
            Some("https") => Scheme::Https,
            Some("http") => Scheme::Http,
            _ => return Err(UrlDenial::Scheme(scheme_of(url))),
        };
        let Some(authority) = uri.authority() else {
            return Err(UrlDenial::Scheme(scheme_of(url)));
        };
        if authority.as_str().contains('@') {
            return Err(UrlDenial::UserInfo);
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if host.is_empty() {
            return Err(UrlDenial::Scheme(scheme_of(url)));
        }
        if scheme == Scheme::Http && !is_loopback_host(&host) {
            return Err(UrlDenial::PlainHttp(host));
        }
        let port = authority.port_u16().unwrap_or(scheme.default_port());
        if self.url_allow.iter().any(|rule| rule.matches(scheme, &host, port)) {
            Ok(())
        } else {
            Err(UrlDenial::NotListed { host, port })
        }
    }
}

/// `localhost` or a loopback address: the only hosts plain http may name.
fn is_loopback_host(host: &str) -> bool {
    host == "localhost" || host.parse::<IpAddr>().is_ok_and(|ip| canonical(ip).is_loopback())
}

impl HttpRule {
    /// Whether the rule can only ever cover plain http to a host that is not
    /// loopback — a `url-allow` entry no URL elicitation could use.
    pub fn is_plain_http_to_remote(&self) -> bool {
        let host_is_loopback = match &self.host {
            HostPattern::Name(name) => name == "localhost",
            HostPattern::Subdomains(_) => false,
            HostPattern::Ip(ip) => canonical(*ip).is_loopback(),
        };
        self.scheme == Some(Scheme::Http) && !host_is_loopback
    }
}

/// The interactions a call may ask for: the client declared them and the
/// plugin's manifest grants them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asks {
    pub elicit_form: bool,
    pub elicit_url: bool,
    pub sample: bool,
    pub sample_with_tools: bool,
    pub list_roots: bool,
}

impl Asks {
    pub fn allows(&self, what: Interaction) -> bool {
        match what {
            Interaction::ElicitForm => self.elicit_form,
            Interaction::ElicitUrl => self.elicit_url,
            Interaction::Sample => self.sample,
            Interaction::SampleWithTools => self.sample_with_tools,
            Interaction::ListRoots => self.list_roots,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_elicitation_goes_only_to_allowlisted_https_or_loopback_http() {
        let grant = InteractionGrant {
            url_allow: [
                "login.example.com",
                "*.auth.example.org:8443",
                "http://127.0.0.1:9000",
                "localhost:8080",
            ]
            .iter()
            .map(|r| HttpRule::parse(r).unwrap())
            .collect(),
            ..InteractionGrant::default()
        };
        for ok in [
            "https://login.example.com/authorize?state=x",
            "https://LOGIN.example.com:443/",
            "https://eu.auth.example.org:8443/x",
            "http://127.0.0.1:9000/callback",
            "http://localhost:8080/",
        ] {
            assert_eq!(grant.check_url(ok), Ok(()), "{ok}");
        }
        let refused = |url: &str| grant.check_url(url).unwrap_err();
        assert_eq!(refused("javascript:alert(1)"), UrlDenial::Scheme("javascript".into()));
        assert_eq!(refused("data:text/html,<b>x</b>"), UrlDenial::Scheme("data".into()));
        assert_eq!(refused("file:///etc/passwd"), UrlDenial::Scheme("file".into()));
        assert_eq!(refused("ftp://login.example.com/"), UrlDenial::Scheme("ftp".into()));
        assert_eq!(refused("/relative/path"), UrlDenial::Scheme("/relative/path".into()));
        assert_eq!(
            refused("http://169.254.169.254/latest/meta-data/"),
            UrlDenial::PlainHttp("169.254.169.254".into())
        );
        assert_eq!(
            refused("https://169.254.169.254/"),
            UrlDenial::NotListed {
                host: "169.254.169.254".into(),
                port: 443
            }
        );
        assert_eq!(
            refused("http://login.example.com/"),
            UrlDenial::PlainHttp("login.example.com".into())
        );
        assert_eq!(refused("https://login.example.com@evil.example/"), UrlDenial::UserInfo);
        assert!(matches!(refused("https://evil.example/"), UrlDenial::NotListed { .. }));
        assert!(matches!(
            refused("https://login.example.com:8443/"),
            UrlDenial::NotListed { .. }
        ));
        assert!(matches!(
            refused("https://auth.example.org:8443/"),
            UrlDenial::NotListed { .. }
        ));
        assert!(matches!(
            refused("https://login.example.com\\@evil.example/"),
            UrlDenial::Scheme(_)
        ));
        assert!(matches!(
            refused("https://l\u{f6}gin.example.com/"),
            UrlDenial::Scheme(_)
        ));
        let message = refused("https://evil.example/x").describe("notes.toml");
        assert!(
            message.contains("add \"evil.example\" (or \"evil.example:443\") to [interaction] url-allow in notes.toml"),
            "{message}"
        );
        assert_eq!(
            refused("https://evil.example/x").audit_entry(),
            "interaction.url-allow (evil.example:443)"
        );
        let long = format!("{}:x", "a".repeat(10_000));
        assert_eq!(
            refused(&long).audit_entry().len(),
            "interaction.url-allow (:)".len() + MAX_SCHEME_SHOWN
        );
        assert!(HttpRule::parse("http://x.example").unwrap().is_plain_http_to_remote());
        assert!(!HttpRule::parse("http://[::1]:80").unwrap().is_plain_http_to_remote());
        assert!(!HttpRule::parse("x.example").unwrap().is_plain_http_to_remote());
    }
}
