//! The client's address: the TCP peer, unless the peer is a trusted proxy;
//! then the first untrusted hop of `X-Forwarded-For`, read from the right.

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

    fn trusts(&self, ip: IpAddr) -> bool {
        self.0.iter().any(|c| c.contains(ip))
    }
}

/// The address the limits count against.
pub fn client_ip(
    peer: Option<IpAddr>,
    headers: &HeaderMap,
    trusted: &TrustedProxies,
) -> Option<IpAddr> {
    let peer = peer?;
    if !trusted.trusts(peer) {
        return Some(peer);
    }
    let hops = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','));
    let hops: Vec<IpAddr> = hops.filter_map(|h| h.trim().parse().ok()).collect();
    // From the nearest hop outwards, past every proxy we trust.
    Some(
        hops.into_iter()
            .rev()
            .find(|ip| !trusted.trusts(*ip))
            .unwrap_or(peer),
    )
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
        assert_eq!(
            client_ip(peer, &headers("1.2.3.4, 10.9.9.9"), &trusted),
            "1.2.3.4".parse().ok()
        );
        // A client-supplied leftmost entry is not believed over the real hop.
        assert_eq!(
            client_ip(peer, &headers("6.6.6.6, 5.5.5.5, 10.9.9.9"), &trusted),
            "5.5.5.5".parse().ok()
        );
        let untrusted = Some("8.8.8.8".parse().unwrap());
        assert_eq!(
            client_ip(untrusted, &headers("1.2.3.4"), &trusted),
            untrusted
        );
        assert_eq!(client_ip(peer, &HeaderMap::new(), &trusted), peer);
        assert!(TrustedProxies::parse(&["10.0.0.0/33".into()]).is_err());
        assert!(TrustedProxies::parse(&["::1/128".into(), "fd00::/8".into()]).is_ok());
    }
}
