//! What a plugin may reach, and the rules that decide each attempt.
//!
//! A grant exists only when the operator wrote it in the plugin's manifest;
//! the default is nothing at all. Every access decision Warden makes itself
//! (outgoing HTTP, sockets) is a function in this file, so the rules can be
//! read — and tested — in one place. Filesystem confinement is enforced by
//! wasmtime-wasi's capability-based directory handles (cap-std): a guest
//! sees only the mounts listed here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;

use anyhow::{Result, bail};

/// Everything a plugin has been granted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grants {
    pub mounts: Vec<Mount>,
    pub http: HttpGrant,
    pub sockets: SocketGrant,
    /// Variables the guest sees: copied from the host (`pass`) or set.
    pub env: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

impl Access {
    pub fn as_str(self) -> &'static str {
        match self {
            Access::ReadOnly => "read-only",
            Access::ReadWrite => "read-write",
        }
    }
}

/// A host directory visible to the guest at `guest`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub host: PathBuf,
    pub guest: String,
    pub access: Access,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    Https,
}

impl Scheme {
    fn default_port(self) -> u16 {
        match self {
            Scheme::Http => 80,
            Scheme::Https => 443,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum HostPattern {
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
    scheme: Option<Scheme>,
    host: HostPattern,
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

/// Raw sockets: exact addresses, resolved when the plugin loads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SocketGrant {
    pub tcp: Vec<SocketAddr>,
    pub udp: Vec<SocketAddr>,
    pub dns: bool,
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

    fn matches(&self, scheme: Scheme, host: &str, port: u16) -> bool {
        if self.scheme.is_some_and(|s| s != scheme) {
            return false;
        }
        // Without a port, a rule allows the scheme's default port only.
        let wanted_port = self.port.unwrap_or(scheme.default_port());
        if port != wanted_port {
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
    Address { host: String, ip: IpAddr },
}

impl HttpDenial {
    /// A message for the guest and the log: what was refused and which
    /// manifest key would allow it.
    pub fn describe(&self, manifest: &str) -> String {
        match self {
            HttpDenial::Scheme(scheme) => format!("network access over `{scheme}` is not supported; use http or https"),
            HttpDenial::NotListed { host, port } => format!(
                "network access to {host}:{port} is not granted; add \"{host}\" (or \"{host}:{port}\") to \
                 [network] allow in {manifest}"
            ),
            HttpDenial::Address { host, ip } => format!(
                "network access to {host} is refused: it resolves to {ip}, a loopback, private or link-local \
                 address; only an exact IP entry (\"{}\") in [network] allow in {manifest} opens it",
                SocketAddr::new(*ip, 0).to_string().trim_end_matches(":0")
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

    /// May a connection go to this resolved address? Public addresses may;
    /// others only when listed as an exact IP — checked on the address the
    /// host actually connects to, so DNS cannot smuggle in a private one.
    pub fn check_address(&self, host: &str, ip: IpAddr) -> Result<(), HttpDenial> {
        let listed = self
            .rules
            .iter()
            .any(|rule| matches!(rule.host, HostPattern::Ip(listed) if canonical(listed) == canonical(ip)));
        if is_public(ip) || listed {
            Ok(())
        } else {
            Err(HttpDenial::Address {
                host: host.to_string(),
                ip,
            })
        }
    }
}

impl SocketGrant {
    /// The `socket_addr_check` rule: connecting or sending needs the exact
    /// address. Binding is allowed only as the implicit any-address,
    /// any-port bind that every connection makes (it opens nothing by
    /// itself), so the refusal — and its log line — comes at the connect
    /// and names the address. Listening is never granted.
    pub fn allows(&self, addr: SocketAddr, use_: SocketUse) -> bool {
        let wildcard = addr.ip().is_unspecified() && addr.port() == 0;
        match use_ {
            SocketUse::TcpConnect => self.tcp.contains(&addr),
            SocketUse::TcpBind | SocketUse::UdpBind => wildcard,
            SocketUse::UdpSend | SocketUse::UdpReceive => self.udp.contains(&addr),
            SocketUse::Listen => false,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tcp.is_empty() && self.udp.is_empty() && !self.dns
    }
}

/// The socket operations the sandbox asks about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketUse {
    TcpConnect,
    TcpBind,
    Listen,
    UdpBind,
    UdpSend,
    UdpReceive,
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// Globally routable unicast: not loopback, private, link-local (which holds
/// the cloud metadata endpoints), shared, documentation, multicast or unspecified.
pub fn is_public(ip: IpAddr) -> bool {
    match canonical(ip) {
        IpAddr::V4(v4) => is_public_v4(v4),
        IpAddr::V6(v6) => is_public_v6(v6),
    }
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b))
        || (a == 192 && b == 0 && c == 0)
        || (a == 198 && (18..20).contains(&b))
        || a >= 240)
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    !(ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || (first & 0xfe00) == 0xfc00
        || (first & 0xffc0) == 0xfe80
        || (first & 0xffc0) == 0xfec0
        || first == 0x2001 && ip.segments()[1] == 0x0db8
        || first == 0x0064 && ip.segments()[1] == 0xff9b)
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

    #[test]
    fn private_addresses_need_an_exact_ip_entry() {
        let g = grant(&["localhost:8080", "127.0.0.1:9000", "[::1]:9000"]);
        assert!(
            g.check_address("localhost", "127.0.0.1".parse().unwrap()).is_ok(),
            "listed as an IP"
        );
        assert!(g.check_address("x", "127.0.0.2".parse().unwrap()).is_err());
        assert!(
            g.check_address("x", "::ffff:127.0.0.1".parse().unwrap()).is_ok(),
            "v4-mapped is the same"
        );
        assert!(g.check_address("x", "::1".parse().unwrap()).is_ok());
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
            assert!(g.check_address("x", ip.parse().unwrap()).is_err(), "{ip}");
        }
        assert!(g.check_address("x", "93.184.216.34".parse().unwrap()).is_ok());
        assert!(g.check_address("x", "2606:4700::1111".parse().unwrap()).is_ok());
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

    #[test]
    fn sockets_need_exact_addresses_and_never_listen() {
        let grant = SocketGrant {
            tcp: vec!["127.0.0.1:5432".parse().unwrap()],
            udp: vec![],
            dns: false,
        };
        assert!(grant.allows("127.0.0.1:5432".parse().unwrap(), SocketUse::TcpConnect));
        assert!(!grant.allows("127.0.0.1:5433".parse().unwrap(), SocketUse::TcpConnect));
        assert!(grant.allows("0.0.0.0:0".parse().unwrap(), SocketUse::TcpBind));
        assert!(!grant.allows("0.0.0.0:8080".parse().unwrap(), SocketUse::TcpBind));
        assert!(!grant.allows("127.0.0.1:0".parse().unwrap(), SocketUse::UdpBind));
        assert!(!grant.allows("0.0.0.0:0".parse().unwrap(), SocketUse::Listen));
        assert!(!grant.allows("127.0.0.1:9".parse().unwrap(), SocketUse::UdpSend));
        assert!(!SocketGrant::default().allows("127.0.0.1:5432".parse().unwrap(), SocketUse::TcpConnect));
    }
}
