//! `[sockets]`: raw TCP and UDP, to exact addresses only.

use std::net::SocketAddr;

/// Raw sockets: exact addresses, resolved when the plugin loads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SocketGrant {
    pub tcp: Vec<SocketAddr>,
    pub udp: Vec<SocketAddr>,
    pub dns: bool,
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

#[cfg(test)]
mod tests {
    use super::*;

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
