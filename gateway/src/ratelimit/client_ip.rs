//! The client's address: the TCP peer, unless the peer is a trusted proxy;
//! then the first untrusted hop of `X-Forwarded-For`, read from the right.
//! The walk is strict: a hop that is not an address stops it (that hop is
//! the client), so garbage written by a proxy never moves the walk onto
//! entries the client wrote. An IPv6 client is its /64, the block one
//! subscriber gets; an IPv4 client its address.

use std::net::IpAddr;
use std::str::FromStr;

use axum::http::HeaderMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Cidr {
    net: IpAddr,
    prefix: u8,
}

impl Cidr {
    fn contains(&self, ip: IpAddr) -> bool {
        match (self.net, ip) {
            (IpAddr::V4(n), IpAddr::V4(i)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                u32::from(n) & mask == u32::from(i) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(i)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                u128::from(n) & mask == u128::from(i) & mask
            }
            _ => false,
        }
    }
}

impl FromStr for Cidr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (ip, prefix) = s.split_once('/').unwrap_or((s, ""));
        let net: IpAddr = ip
            .parse()
            .map_err(|_| format!("{s:?} is not an IP address or CIDR range"))?;
        let max = if net.is_ipv4() { 32 } else { 128 };
        let prefix = if prefix.is_empty() {
            max
        } else {
            prefix.parse().map_err(|_| format!("{s:?}: bad prefix"))?
        };
        if prefix > max {
            return Err(format!("{s:?}: prefix over {max}"));
        }
        Ok(Self { net, prefix })
    }
}

/// `TRUSTED_PROXIES`: addresses or CIDR ranges whose `X-Forwarded-For` is believed.
#[derive(Debug, Clone, Default)]
pub struct TrustedProxies(Vec<Cidr>);

impl TrustedProxies {
    pub fn parse(list: &[String]) -> Result<Self, String> {
        list.iter()
            .map(|s| s.parse())
            .collect::<Result<_, _>>()
            .map(Self)
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|c| c.contains(ip))
    }
}

/// Where a request comes from, as rate limits key it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Client {
    V4(std::net::Ipv4Addr),
    /// The /64 network of an IPv6 address.
    V6Net(std::net::Ipv6Addr),
    /// A forwarded hop that is not an address (at most 64 bytes of it).
    Unparsable(String),
    Unknown,
}

impl Client {
    fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Client::V4(v4),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Client::V4(v4),
                None => Client::V6Net((u128::from(v6) & (u128::MAX << 64)).into()),
            },
        }
    }
}

impl Client {
    /// The network the client is in: an IPv4 address's /24, an IPv6 /64
    /// (already its key), or the key itself when it is no address.
    pub fn network(&self) -> String {
        match self {
            Client::V4(ip) => {
                let [a, b, c, _] = ip.octets();
                format!("{a}.{b}.{c}.0/24")
            }
            other => other.to_string(),
        }
    }
}

impl std::fmt::Display for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Client::V4(ip) => write!(f, "{ip}"),
            Client::V6Net(net) => write!(f, "{net}/64"),
            Client::Unparsable(hop) => write!(f, "hop:{hop}"),
            Client::Unknown => f.write_str("unknown"),
        }
    }
}

/// The client the limits count against.
pub fn client_ip(peer: Option<IpAddr>, headers: &HeaderMap, trusted: &TrustedProxies) -> Client {
    let Some(peer) = peer else {
        return Client::Unknown;
    };
    if !trusted.trusts(peer) {
        return Client::of(peer);
    }
    let values: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .map(|v| v.to_str().unwrap_or("\u{fffd}"))
        .collect();
    // From the nearest hop outwards, past every proxy we trust.
    for hop in values.iter().rev().flat_map(|v| v.rsplit(',')) {
        let hop = hop.trim();
        match hop.parse::<IpAddr>() {
            Ok(ip) if trusted.trusts(ip) => continue,
            Ok(ip) => return Client::of(ip),
            Err(_) => {
                let end = hop.floor_char_boundary(64);
                return Client::Unparsable(hop[..end].to_string());
            }
        }
    }
    Client::of(peer)
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn headers(xff: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert("x-forwarded-for", HeaderValue::from_str(xff).unwrap());
        h
    }

    #[test]
    fn forwarded_for_is_believed_only_from_trusted_proxies() {
        let trusted = TrustedProxies::parse(&["10.0.0.0/8".into(), "127.0.0.1".into()]).unwrap();
        let peer = Some("10.1.2.3".parse().unwrap());
        let key = |xff: &HeaderMap, peer| client_ip(peer, xff, &trusted).to_string();
        assert_eq!(key(&headers("1.2.3.4, 10.9.9.9"), peer), "1.2.3.4");
        // A client-supplied leftmost entry is not believed over the real hop.
        assert_eq!(key(&headers("6.6.6.6, 5.5.5.5, 10.9.9.9"), peer), "5.5.5.5");
        let untrusted = Some("8.8.8.8".parse().unwrap());
        assert_eq!(key(&headers("1.2.3.4"), untrusted), "8.8.8.8");
        assert_eq!(key(&HeaderMap::new(), peer), "10.1.2.3");
        assert_eq!(
            client_ip(None, &HeaderMap::new(), &trusted),
            Client::Unknown
        );
        assert!(TrustedProxies::parse(&["10.0.0.0/33".into()]).is_err());
    }

    #[test]
    fn an_unparsable_hop_stops_the_walk_and_ipv6_counts_per_64() {
        let trusted = TrustedProxies::parse(&["10.0.0.0/8".into()]).unwrap();
        let peer = Some("10.1.2.3".parse().unwrap());
        let key = |xff: &str| client_ip(peer, &headers(xff), &trusted).to_string();
        // The walk does not skip "junk" to reach the client-written 6.6.6.6.
        assert_eq!(key("6.6.6.6, junk, 10.9.9.9"), "hop:junk");
        assert_eq!(key(&format!("{}, 10.9.9.9", "x".repeat(500))).len(), 68);
        // Every address of one /64 is one client; another /64 another.
        assert_eq!(key("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        assert_eq!(key("2001:db8:1:2:ffff::9"), "2001:db8:1:2::/64");
        assert_eq!(key("2001:db8:1:3::1"), "2001:db8:1:3::/64");
        assert_eq!(key("::ffff:1.2.3.4"), "1.2.3.4");
        let network = |xff: &str| client_ip(peer, &headers(xff), &trusted).network();
        assert_eq!(network("198.51.100.7"), "198.51.100.0/24");
        assert_eq!(network("2001:db8:1:2::1"), "2001:db8:1:2::/64");
        let v6_peer = Some("2001:db8::1".parse().unwrap());
        assert_eq!(
            client_ip(v6_peer, &HeaderMap::new(), &trusted).to_string(),
            "2001:db8::/64"
        );
        assert!(TrustedProxies::parse(&["::1/128".into(), "fd00::/8".into()]).is_ok());
    }
}
