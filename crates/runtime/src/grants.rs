//! What a plugin may reach, and the rules that decide each attempt.
//!
//! A grant exists only when the operator wrote it in the plugin's manifest;
//! the default is nothing at all. Every access decision Warden makes itself
//! (outgoing HTTP, sockets) is a function in this file, so the rules can be
//! read — and tested — in one place. Filesystem confinement is enforced by
//! wasmtime-wasi's capability-based directory handles (cap-std): a guest
//! sees only the mounts listed here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

/// Everything a plugin has been granted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Grants {
    pub mounts: Vec<Mount>,
    pub http: HttpGrant,
    pub sockets: SocketGrant,
    /// Variables the guest sees: copied from the host (`pass`) or set.
    pub env: Vec<(String, String)>,
    /// What `wasi:config/store` answers: the manifest's `[config]`.
    pub config: Vec<(String, String)>,
    /// What the plugin may ask of the client (contract 0.2.0): `[interaction]`.
    pub interaction: InteractionGrant,
}

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountAccess {
    ReadOnly,
    ReadWrite,
}

impl MountAccess {
    pub fn as_str(self) -> &'static str {
        match self {
            MountAccess::ReadOnly => "read-only",
            MountAccess::ReadWrite => "read-write",
        }
    }
}

/// A host directory visible to the guest at `guest`.
#[derive(Debug, Clone, PartialEq)]
pub struct Mount {
    pub host: PathBuf,
    pub guest: String,
    pub access: MountAccess,
}

impl Mount {
    /// How the manifest names this mount: `filesystem."/srv/notes"`.
    pub fn key(&self) -> String {
        format!("filesystem.{:?}", self.host.display().to_string())
    }
}

/// Folders Warden reads code and grants from, which no mount may reach:
/// a plugin that could write there could give itself (or another plugin)
/// any grant, or have Warden run native code of its choosing.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProtectedFolders {
    /// The plugins folders (canonical paths).
    pub plugins: Vec<PathBuf>,
    /// The compiled-code cache folders in use or in use by default
    /// (canonical as far as they exist).
    pub caches: Vec<PathBuf>,
}

/// Where a plugin's mounts may be. `mounts` have canonical host paths (the
/// loader has pinned them, which refuses symlinks and `..`); `own_folder` is
/// the folder of a folder plugin (canonical), `None` for a bare `name.wasm`.
///
/// - A plugin's mounts are separate folders: none is inside another, so a
///   writable mount cannot replace the folder another mount names.
/// - No mount is, holds, or is inside a compiled-code cache folder.
/// - No mount is or holds a plugins folder; inside one, only a subfolder of
///   the plugin's own folder may be mounted (never the folder itself, which
///   holds its manifest and component).
pub fn check_mount_layout(mounts: &[Mount], own_folder: Option<&Path>, protected: &ProtectedFolders) -> Result<()> {
    for (index, mount) in mounts.iter().enumerate() {
        let (key, host) = (mount.key(), &mount.host);
        if let Some(outer) = mounts[..index]
            .iter()
            .find(|other| host.starts_with(&other.host) || other.host.starts_with(host))
        {
            bail!(
                "`{key}` and `{}` overlap (one folder is inside the other); a plugin's mounts must be \
                 separate folders — mount only the outer one, or two folders side by side",
                outer.key()
            );
        }
        if let Some(cache) = protected
            .caches
            .iter()
            .find(|c| c.starts_with(host) || host.starts_with(c))
        {
            bail!(
                "`{key}` overlaps the compiled-code cache folder {}, whose files Warden runs as native \
                 code; mount a folder outside it",
                cache.display()
            );
        }
        if let Some(root) = protected.plugins.iter().find(|root| root.starts_with(host)) {
            bail!(
                "`{key}` holds the plugins folder {}, where manifests and components are read from; \
                 mount a folder outside it",
                root.display()
            );
        }
        let strictly_in_own_folder = own_folder.is_some_and(|own| host.starts_with(own) && host != own);
        if let Some(root) = protected.plugins.iter().find(|root| host.starts_with(root))
            && !strictly_in_own_folder
        {
            bail!(
                "`{key}` is inside the plugins folder {}, where manifests and components are read from; \
                 mount a folder outside it (a folder plugin may mount a subfolder of its own folder, \
                 like `name/state`)",
                root.display()
            );
        }
    }
    Ok(())
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

    /// Does the rule cover this scheme and port? Without a scheme it covers
    /// both; without a port, the scheme's default port only.
    fn covers(&self, scheme: Scheme, port: u16) -> bool {
        self.scheme.is_none_or(|s| s == scheme) && port == self.port.unwrap_or(scheme.default_port())
    }

    fn matches(&self, scheme: Scheme, host: &str, port: u16) -> bool {
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
            HttpDenial::NotListed { host, port } => format!(
                "network access to {host}:{port} is not granted; add \"{host}\" (or \"{host}:{port}\") to \
                 [network] allow in {manifest}"
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
        assert!(
            message.contains("resolves to 127.0.0.1,")
                && message.contains("(\"127.0.0.1:8080\") in [network] allow in fetch.toml"),
            "{message}"
        );
    }

    fn mounts(hosts: &[&str]) -> Vec<Mount> {
        hosts
            .iter()
            .enumerate()
            .map(|(i, host)| Mount {
                host: PathBuf::from(host),
                guest: format!("/m{i}"),
                access: MountAccess::ReadWrite,
            })
            .collect()
    }

    #[test]
    fn mounts_stay_apart_from_each_other_and_from_plugins_and_cached_code() {
        let protected = ProtectedFolders {
            plugins: vec![PathBuf::from("/srv/plugins")],
            caches: vec![PathBuf::from("/home/op/.cache/warden")],
        };
        let own = Some(Path::new("/srv/plugins/notes"));
        let layout = |hosts: &[&str], own| check_mount_layout(&mounts(hosts), own, &protected);
        let refused = |hosts: &[&str], own| format!("{:#}", layout(hosts, own).unwrap_err());

        assert!(layout(&["/srv/a", "/srv/b", "/srv/ab"], None).is_ok());
        assert!(layout(&["/srv/plugins/notes/state", "/srv/plugins/notes/cache"], own).is_ok());
        assert!(layout(&["/home/op/.cache/other"], None).is_ok());

        let nested = refused(&["/srv/a", "/srv/a/inner"], None);
        assert!(
            nested.contains("`filesystem.\"/srv/a/inner\"` and `filesystem.\"/srv/a\"` overlap"),
            "{nested}"
        );
        assert!(refused(&["/srv/a/inner", "/srv/a"], None).contains("overlap"));
        assert!(refused(&["/srv/a", "/srv/a"], None).contains("overlap"));

        for cache_overlap in [
            "/home/op/.cache/warden",
            "/home/op/.cache",
            "/home/op/.cache/warden/x",
            "/",
        ] {
            let err = refused(&[cache_overlap], None);
            assert!(
                err.contains("overlaps the compiled-code cache folder /home/op/.cache/warden"),
                "{cache_overlap}: {err}"
            );
        }
        for holder in ["/srv/plugins", "/srv"] {
            let err = refused(&[holder], own);
            assert!(err.contains("holds the plugins folder /srv/plugins"), "{holder}: {err}");
        }
        for inside in [
            "/srv/plugins/notes",
            "/srv/plugins/other/state",
            "/srv/plugins/loose-folder",
        ] {
            let err = refused(&[inside], own);
            assert!(
                err.contains("is inside the plugins folder /srv/plugins"),
                "{inside}: {err}"
            );
            assert!(err.contains("a subfolder of its own folder"), "{err}");
        }
        // A bare `name.wasm` has no folder of its own to mount from.
        assert!(refused(&["/srv/plugins/notes/state"], None).contains("inside the plugins folder"));
        // Prefixes are whole components: /srv/plugins-data is not inside /srv/plugins.
        assert!(layout(&["/srv/plugins-data"], None).is_ok());
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
