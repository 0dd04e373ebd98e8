//! Where the Redis backend is, as configuration names it.

use std::fmt;

/// One server (`redis://` or `rediss://` URL) or a Redis Cluster (its
/// nodes' URLs, comma-separated: any reachable one leads to the rest),
/// and the CA certificates that sign its TLS certificates when they are
/// not signed by a public authority.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisTarget {
    pub url: String,
    /// PEM (`REDIS_CA_FILE`) trusted for `rediss://`; without it the
    /// system's roots.
    pub ca_pem: Option<Vec<u8>>,
    /// The variable and the mounted file it was read from (`REDIS_URL_FILE`,
    /// `REDIS_CLUSTER_NODES_FILE`), followed while the program runs, and
    /// how often (`SECRETS_WATCH_SECS`).
    pub source: Option<(&'static str, std::path::PathBuf, std::time::Duration)>,
}

impl RedisTarget {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            ca_pem: None,
            source: None,
        }
    }

    pub fn is_cluster(&self) -> bool {
        self.url.contains(',')
    }

    pub fn nodes(&self) -> impl Iterator<Item = &str> {
        self.url.split(',').map(str::trim)
    }

    pub fn is_tls(&self) -> bool {
        self.nodes().all(|node| node.starts_with("rediss://"))
    }
}

impl RedisTarget {
    /// Its nodes' URLs with user info masked (`redis://***@host:6379/0`).
    pub fn masked(&self) -> Vec<String> {
        self.nodes()
            .map(|node| match (node.find("://"), node.rfind('@')) {
                (Some(scheme), Some(at)) if at > scheme => {
                    format!("{}://***{}", &node[..scheme], &node[at..])
                }
                _ => node.to_string(),
            })
            .collect()
    }

    /// Where it is, whatever its credentials: each node's address and
    /// database as the client reads them (`host:6379/0`, `tls host:6380/0`,
    /// a socket's path). Two targets with the same endpoint hold the same
    /// data.
    pub fn endpoint(&self) -> Vec<String> {
        use redis::IntoConnectionInfo;
        self.nodes()
            .zip(self.masked())
            .map(|(node, masked)| match node.into_connection_info() {
                Ok(info) => {
                    let tls = matches!(info.addr(), redis::ConnectionAddr::TcpTls { .. });
                    let db = info.redis_settings().db();
                    format!("{}{}/{db}", if tls { "tls " } else { "" }, info.addr())
                }
                Err(_) => masked,
            })
            .collect()
    }
}

/// Without a password: a URL's user info (`redis://:secret@host`) never
/// reaches a log through a configuration's `Debug`.
impl fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let nodes = self.masked();
        f.debug_struct("RedisTarget")
            .field("nodes", &nodes)
            .field("ca_pem", &self.ca_pem.as_ref().map(|pem| pem.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_a_password() {
        let target = RedisTarget::new("rediss://user:secret@r1:6380,redis://r2:6379");
        let shown = format!("{target:?}");
        assert!(
            !shown.contains("secret") && !shown.contains("user"),
            "{shown}"
        );
        assert!(shown.contains("rediss://***@r1:6380") && shown.contains("redis://r2:6379"));
        assert!(target.is_cluster() && !target.is_tls());
    }
}
