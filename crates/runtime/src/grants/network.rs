//! `[network]`: which outgoing `wasi:http` requests a plugin may send, by
//! host name and port, and which resolved addresses they may reach.

use std::net::{IpAddr, SocketAddr};

use anyhow::{Result, bail};

use super::addresses::{canonical, is_public};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    pub(super) fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum HostPattern {
    /// `api.github.com`
    Name(String),
    /// `*.wikipedia.org`: any subdomain, not the domain itself.
    Subdomains(String),
    /// `127.0.0.1`, `[::1]`: the only way to reach a non-public address.
    Ip(IpAddr),
}

/// One `[network] allow` entry: `[scheme://]host[:port]`.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpRule {
    pub(super) scheme: Option<Scheme>,
    pub(super) host: HostPattern,
    port: Option<u16>,
    text: String,
}

/// Outgoing `wasi:http` requests.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpGrant {
    pub rules: Vec<HttpRule>,
    /// The most response-body bytes one request may read.
    pub max_response: u64,
}

/// The largest response body an outgoing request may read, by default.
pub const DEFAULT_MAX_RESPONSE: u64 = 16 << 20;

impl Default for HttpGrant {
    fn default() -> Self {
        Self {
            rules: Vec::new(),
            max_response: DEFAULT_MAX_RESPONSE,
        }
    }
}

impl HttpRule {
    /// Parses `[scheme://]host[:port]`, where host may be `*.domain`.
    pub fn parse(text: &str) -> Result<Self> {
        let original = text.trim();
        let (scheme, rest) = match original.split_once("://") {
            Some(("http", rest)) => (Some(Scheme::Http), rest),
            Some(("https", rest)) => (Some(Scheme::Https), rest),
            Some((other, _)) => bail!("scheme `{other}` is not supported; use http or https"),
            None => (None, original),
        };
        if rest.contains('/') || rest.contains('@') || rest.contains('?') {
            bail!("write a host, optionally with a port (e.g. `api.example.com:443`), not a URL path");
        }
        let (host, port) = split_host_port(rest)?;
        let host = if let Ok(ip) = host.parse::<IpAddr>() {
            HostPattern::Ip(ip)
        } else if let Some(domain) = host.strip_prefix("*.") {
            check_hostname(domain)?;
            HostPattern::Subdomains(domain.to_ascii_lowercase())
        } else {
            check_hostname(host)?;
            HostPattern::Name(host.to_ascii_lowercase())
        };
        Ok(Self {
            scheme,
            host,
            port,
            text: original.to_string(),
        })
    }

    /// Does the rule cover this scheme and port? Without a scheme it covers
    /// both; without a port, the scheme's default port only.
    fn covers(&self, scheme: Scheme, port: u16) -> bool {
        self.scheme.is_none_or(|s| s == scheme) && port == self.port.unwrap_or(scheme.default_port())
    }

    pub(super) fn matches(&self, scheme: Scheme, host: &str, port: u16) -> bool {
        if !self.covers(scheme, port) {
            return false;
        }
        match &self.host {
            HostPattern::Name(name) => host == name,
            HostPattern::Subdomains(domain) => host
                .strip_suffix(domain.as_str())
                .is_some_and(|prefix| prefix.len() > 1 && prefix.ends_with('.')),
            HostPattern::Ip(ip) => host.parse::<IpAddr>().is_ok_and(|h| h == *ip),
        }
    }
}

impl std::fmt::Display for HttpRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

fn split_host_port(text: &str) -> Result<(&str, Option<u16>)> {
    let parse_port = |p: &str| -> Result<u16> {
        match p.parse::<u16>() {
            Ok(0) | Err(_) => bail!("`{p}` is not a port number (1-65535)"),
            Ok(port) => Ok(port),
        }
    };
    if let Some(rest) = text.strip_prefix('[') {
        let Some((host, after)) = rest.split_once(']') else {
            bail!("unclosed `[` in an IPv6 address");
        };
        return match after.strip_prefix(':') {
            Some(port) => Ok((host, Some(parse_port(port)?))),
            None if after.is_empty() => Ok((host, None)),
            None => bail!("unexpected `{after}` after the address"),
        };
    }
    match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') => Ok((host, Some(parse_port(port)?))),
        _ => Ok((text, None)),
    }
}

fn check_hostname(host: &str) -> Result<()> {
    let valid = !host.is_empty()
        && host.len() <= 253
        && host
            .split('.')
            .all(|label| !label.is_empty() && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'));
    if !valid {
        bail!("`{host}` is not a host name");
    }
    Ok(())
}

/// Why an outgoing request was refused.
#[derive(Debug, Clone, PartialEq)]
pub enum HttpDenial {
    Scheme(String),
    NotListed { host: String, port: u16 },
    Address { host: String, address: SocketAddr },
}

impl HttpDenial {
    /// A message for the guest and the log: what was refused and which
    /// manifest key would allow it.
    pub fn describe(&self, manifest: &str) -> String {
        match self {
            HttpDenial::Scheme(scheme) => format!("network access over `{scheme}` is not supported; use http or https"),
            // `localhost` needs its address granted too (below): say both at once.
            HttpDenial::NotListed { host, port } if host.eq_ignore_ascii_case("localhost") => format!(
                "network access to {host}:{port} is not granted; add \"{host}:{port}\" and, as it is a loopback, \
                 the exact address it resolves to (\"127.0.0.1:{port}\") to [network] allow in {manifest}"
            ),
            HttpDenial::NotListed { host, port } => format!(
                "network access to {host}:{port} is not granted; add \"{host}\" (or \"{host}:{port}\") to \
                 [network] allow in {manifest}"
            ),
            // The name is granted already (else this would be `NotListed`):
            // the address must be granted beside it, not instead of it.
            HttpDenial::Address { host, address } if host.parse::<std::net::IpAddr>().is_err() => format!(
                "network access to {host} is refused: it resolves to {}, a loopback, private or link-local \
                 address; only an exact IP entry for that address and port (\"{address}\"), beside \"{host}\", \
                 in [network] allow in {manifest} opens it",
                address.ip()
            ),
            HttpDenial::Address { host, address } => format!(
                "network access to {host} is refused: it resolves to {}, a loopback, private or link-local \
                 address; only an exact IP entry for that address and port (\"{address}\") in [network] allow \
                 in {manifest} opens it",
                address.ip()
            ),
        }
    }
}

impl HttpGrant {
    /// May the guest send a request to `scheme://host:port` at all?
    pub fn check_target(&self, scheme: &str, host: &str, port: Option<u16>) -> Result<Scheme, HttpDenial> {
        let scheme = match scheme {
            "http" => Scheme::Http,
            "https" => Scheme::Https,
            other => return Err(HttpDenial::Scheme(other.to_string())),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']').to_ascii_lowercase();
        let port = port.unwrap_or(scheme.default_port());
        if self.rules.iter().any(|rule| rule.matches(scheme, &host, port)) {
            Ok(scheme)
        } else {
            Err(HttpDenial::NotListed { host, port })
        }
    }

    /// May a `scheme` connection go to this resolved address? Public
    /// addresses may; others only when an exact-IP entry covers that
    /// address *with* this scheme and port (`127.0.0.1:8080` opens port 8080
    /// of 127.0.0.1, nothing else) — checked on the address the host
    /// actually connects to, so DNS cannot smuggle in a private one.
    pub fn check_address(&self, scheme: Scheme, host: &str, address: SocketAddr) -> Result<(), HttpDenial> {
        let ip = address.ip();
        let listed = self.rules.iter().any(|rule| {
            matches!(rule.host, HostPattern::Ip(listed) if canonical(listed) == canonical(ip))
                && rule.covers(scheme, address.port())
        });
        if is_public(ip) || listed {
            Ok(())
        } else {
            Err(HttpDenial::Address {
                host: host.to_string(),
                address,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(rules: &[&str]) -> HttpGrant {
        HttpGrant {
            rules: rules.iter().map(|r| HttpRule::parse(r).unwrap()).collect(),
            max_response: 1 << 20,
        }
    }

    #[test]
    fn rules_match_host_port_and_scheme() {
        let g = grant(&[
            "api.github.com",
            "*.wikipedia.org:8443",
            "http://plain.example",
            "127.0.0.1:8080",
        ]);
        assert!(g.check_target("https", "api.github.com", None).is_ok());
        assert!(g.check_target("http", "API.GitHub.com", Some(80)).is_ok());
        assert!(
            g.check_target("https", "api.github.com", Some(8443)).is_err(),
            "port not listed"
        );
        assert!(g.check_target("https", "evil-api.github.com", None).is_err());
        assert!(g.check_target("https", "en.wikipedia.org", Some(8443)).is_ok());
        assert!(
            g.check_target("https", "wikipedia.org", Some(8443)).is_err(),
            "the wildcard is subdomains only"
        );
        assert!(g.check_target("https", "xwikipedia.org", Some(8443)).is_err());
        assert!(g.check_target("http", "plain.example", None).is_ok());
        assert!(
            g.check_target("https", "plain.example", None).is_err(),
            "scheme restricted"
        );
        assert!(g.check_target("http", "127.0.0.1", Some(8080)).is_ok());
        assert!(g.check_target("ftp", "api.github.com", None).is_err());
        assert_eq!(
            g.check_target("https", "example.com", None),
            Err(HttpDenial::NotListed {
                host: "example.com".into(),
                port: 443
            })
        );
    }

    fn at(address: &str) -> SocketAddr {
        address.parse().unwrap()
    }

    #[test]
    fn private_addresses_need_an_exact_ip_entry() {
        let g = grant(&["localhost:8080", "127.0.0.1:9000", "[::1]:9000"]);
        assert!(
            g.check_address(Scheme::Http, "localhost", at("127.0.0.1:9000")).is_ok(),
            "listed as an IP with this port"
        );
        assert!(g.check_address(Scheme::Http, "x", at("127.0.0.2:9000")).is_err());
        assert!(
            g.check_address(Scheme::Http, "x", at("[::ffff:127.0.0.1]:9000"))
                .is_ok(),
            "v4-mapped is the same"
        );
        assert!(g.check_address(Scheme::Https, "x", at("[::1]:9000")).is_ok());
        for ip in [
            "169.254.169.254",
            "10.1.2.3",
            "192.168.0.1",
            "172.16.5.4",
            "100.64.0.1",
            "0.0.0.0",
            "fd00::1",
            "fe80::1",
        ] {
            let address = SocketAddr::new(ip.parse().unwrap(), 80);
            assert!(g.check_address(Scheme::Http, "x", address).is_err(), "{ip}");
        }
        assert!(g.check_address(Scheme::Https, "x", at("93.184.216.34:443")).is_ok());
        assert!(g.check_address(Scheme::Http, "x", at("[2606:4700::1111]:8080")).is_ok());
    }

    #[test]
    fn an_exact_ip_entry_opens_only_its_own_port_and_scheme() {
        // `localhost:8080` passes the name check; the address 127.0.0.1 is
        // opened only for port 9000 by the exact-IP entry.
        let g = grant(&[
            "localhost:8080",
            "127.0.0.1:9000",
            "http://10.0.0.5",
            "https://[fd00::1]:8443",
        ]);
        assert_eq!(
            g.check_address(Scheme::Http, "localhost", at("127.0.0.1:8080")),
            Err(HttpDenial::Address {
                host: "localhost".into(),
                address: at("127.0.0.1:8080")
            })
        );
        assert!(g.check_address(Scheme::Http, "localhost", at("127.0.0.1:9000")).is_ok());
        assert!(
            g.check_address(Scheme::Https, "localhost", at("127.0.0.1:9000"))
                .is_ok()
        );
        assert!(g.check_address(Scheme::Http, "x", at("10.0.0.5:80")).is_ok());
        assert!(
            g.check_address(Scheme::Http, "x", at("10.0.0.5:8080")).is_err(),
            "default port only"
        );
        assert!(
            g.check_address(Scheme::Https, "x", at("10.0.0.5:443")).is_err(),
            "http only"
        );
        assert!(g.check_address(Scheme::Https, "x", at("[fd00::1]:8443")).is_ok());
        assert!(
            g.check_address(Scheme::Http, "x", at("[fd00::1]:8443")).is_err(),
            "https only"
        );
        let message = HttpDenial::Address {
            host: "localhost".into(),
            address: at("127.0.0.1:8080"),
        }
        .describe("fetch.toml");
        // A granted name: the address goes beside it.
        assert!(
            message.contains("resolves to 127.0.0.1,")
                && message.contains("(\"127.0.0.1:8080\"), beside \"localhost\", in [network] allow in fetch.toml"),
            "{message}"
        );
        let literal = HttpDenial::Address {
            host: "127.0.0.1".into(),
            address: at("127.0.0.1:8080"),
        }
        .describe("fetch.toml");
        assert!(
            literal.contains("(\"127.0.0.1:8080\") in [network] allow in fetch.toml") && !literal.contains("beside"),
            "{literal}"
        );
        let not_listed = HttpDenial::NotListed {
            host: "localhost".into(),
            port: 8080,
        }
        .describe("fetch.toml");
        assert!(
            not_listed.contains(
                "add \"localhost:8080\" and, as it is a loopback, the exact address it resolves to \
                 (\"127.0.0.1:8080\") to [network] allow in fetch.toml"
            ),
            "{not_listed}"
        );
    }

    #[test]
    fn malformed_rules_are_explained() {
        for (bad, why) in [
            ("https://api.example.com/path", "not a URL path"),
            ("ftp://x.example", "scheme `ftp`"),
            ("host:0", "not a port"),
            ("host:99999", "not a port"),
            ("bad host", "not a host name"),
            ("[::1", "unclosed"),
        ] {
            let err = HttpRule::parse(bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }
}
