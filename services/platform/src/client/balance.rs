//! Calls spread over every replica of a callee. One HTTP/2 connection
//! carries every call to its peer, so a Kubernetes ClusterIP Service (one
//! virtual address) pins a client to whichever pod it first reached, and
//! replicas added later get nothing from clients already connected. Here
//! each call picks a replica (tower's power of two choices, by calls in
//! flight) among all the addresses the callee's name resolves to (a
//! headless Service: one per ready pod), resolved again every few seconds
//! as pods come and go; or among a fixed list of URLs.

use std::collections::HashSet;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::sync::mpsc::Sender;
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};

/// How often a name is resolved again.
pub const RESOLVE_EVERY: Duration = Duration::from_secs(5);
/// How often each replica is checked to take connections, and how long
/// it has to.
const PROBE_EVERY: Duration = Duration::from_secs(1);
const PROBE_TIMEOUT: Duration = Duration::from_millis(300);
/// Pending changes of the balanced set.
const CHANGES: usize = 64;

/// Where a callee is, as its URL says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replicas {
    /// One address (an IP literal): one connection.
    One(String),
    /// A fixed list of URLs (comma-separated), balanced.
    List(Vec<String>),
    /// A name resolved to every replica's address, again and again.
    Resolved {
        scheme: String,
        host: String,
        port: u16,
    },
}

impl Replicas {
    pub fn of(url: &str) -> anyhow::Result<Self> {
        if url.contains(',') {
            let urls = url.split(',').map(str::trim).filter(|u| !u.is_empty());
            return Ok(Replicas::List(urls.map(str::to_string).collect()));
        }
        let (scheme, rest) = url
            .split_once("://")
            .ok_or_else(|| anyhow::anyhow!("{url:?} has no scheme"))?;
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !host.ends_with(']') || host.starts_with('[') => {
                (host, port.parse::<u16>().ok())
            }
            _ => (authority, None),
        };
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let is_ip = host.parse::<IpAddr>().is_ok();
        match port {
            Some(port) if !is_ip => Ok(Replicas::Resolved {
                scheme: scheme.to_string(),
                host: host.to_string(),
                port,
            }),
            _ => Ok(Replicas::One(url.to_string())),
        }
    }
}

/// A channel to every replica of `url`, each connection made from
/// `endpoint` (the settings every connection shares) for its URL, and
/// what wakes its replicas' check at once (a call that lost its
/// connection: a replica that died leaves the set now, not at the next
/// probe).
pub fn channel(
    url: &str,
    endpoint: impl Fn(&str) -> anyhow::Result<Endpoint> + Send + 'static,
) -> anyhow::Result<(Channel, Arc<Notify>)> {
    let recheck = Arc::new(Notify::new());
    let replicas = Replicas::of(url)?;
    if let Replicas::One(url) = replicas {
        return Ok((endpoint(&url)?.connect_lazy(), recheck));
    }
    let (channel, changes) = Channel::balance_channel::<String>(CHANGES);
    tokio::spawn(follow(replicas, endpoint, changes, recheck.clone()));
    Ok((channel, recheck))
}

/// The replicas' URLs now: the list, or what the name resolves to.
async fn candidates(replicas: &Replicas) -> Vec<String> {
    match replicas {
        Replicas::One(url) => vec![url.clone()],
        Replicas::List(urls) => urls.clone(),
        Replicas::Resolved { scheme, host, port } => {
            match tokio::net::lookup_host((host.as_str(), *port)).await {
                Ok(found) => found.map(|addr| format!("{scheme}://{addr}")).collect(),
                Err(e) => {
                    tracing::warn!(host, error = %e, "resolving a callee's replicas");
                    Vec::new()
                }
            }
        }
    }
}

/// Whether a replica takes connections: one that stopped is left out of
/// the balanced set (its calls would fail) until it takes them again.
async fn takes_connections(url: &str) -> bool {
    let authority = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = authority.split('/').next().unwrap_or_default().to_string();
    let connect = tokio::net::TcpStream::connect(authority);
    matches!(
        tokio::time::timeout(PROBE_TIMEOUT, connect).await,
        Ok(Ok(_))
    )
}

/// Keeps the balanced set equal to the replicas that take connections,
/// until the channel is dropped.
async fn follow(
    replicas: Replicas,
    endpoint: impl Fn(&str) -> anyhow::Result<Endpoint>,
    changes: Sender<Change<String, Endpoint>>,
    recheck: Arc<Notify>,
) {
    let mut current: HashSet<String> = HashSet::new();
    let mut since_resolved = RESOLVE_EVERY;
    let mut known = Vec::new();
    loop {
        if since_resolved >= RESOLVE_EVERY || known.is_empty() {
            known = candidates(&replicas).await;
            since_resolved = Duration::ZERO;
        }
        let probes = known
            .iter()
            .map(|url| async move { (url, takes_connections(url).await) });
        let live: HashSet<String> = futures::future::join_all(probes)
            .await
            .into_iter()
            .filter(|(_, up)| *up)
            .map(|(url, _)| url.clone())
            .collect();
        for change in diff(&current, &live, &endpoint) {
            if changes.send(change).await.is_err() {
                return;
            }
        }
        current = live;
        // None yet (the callee is starting): looked at again soon.
        let pause = if current.is_empty() {
            Duration::from_millis(200)
        } else {
            PROBE_EVERY
        };
        since_resolved += pause;
        tokio::select! {
            () = changes.closed() => return,
            () = tokio::time::sleep(pause) => {}
            () = recheck.notified() => {}
        }
    }
}

/// The changes that turn `current` into `found`.
fn diff(
    current: &HashSet<String>,
    found: &HashSet<String>,
    endpoint: &impl Fn(&str) -> anyhow::Result<Endpoint>,
) -> Vec<Change<String, Endpoint>> {
    let gone = current
        .difference(found)
        .map(|url| Change::Remove(url.clone()));
    let new = found
        .difference(current)
        .filter_map(|url| match endpoint(url) {
            Ok(endpoint) => Some(Change::Insert(url.clone(), endpoint)),
            Err(e) => {
                tracing::warn!(url, error = %e, "a callee replica's address");
                None
            }
        });
    gone.chain(new).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_names_one_address_a_list_or_a_name() {
        assert_eq!(
            Replicas::of("http://127.0.0.1:50051").unwrap(),
            Replicas::One("http://127.0.0.1:50051".into())
        );
        assert_eq!(
            Replicas::of("http://[::1]:50051").unwrap(),
            Replicas::One("http://[::1]:50051".into())
        );
        assert_eq!(
            Replicas::of("http://a:1, http://b:2").unwrap(),
            Replicas::List(vec!["http://a:1".into(), "http://b:2".into()])
        );
        assert_eq!(
            Replicas::of("http://storefront-catalog:50051").unwrap(),
            Replicas::Resolved {
                scheme: "http".into(),
                host: "storefront-catalog".into(),
                port: 50051
            }
        );
    }

    #[test]
    fn a_new_resolution_adds_and_removes_only_what_changed() {
        let url = |p: u16| format!("http://10.0.0.1:{p}");
        let endpoint = |u: &str| Ok(Endpoint::from_shared(u.to_string())?);
        let current: HashSet<_> = [url(1), url(2)].into();
        let found: HashSet<_> = [url(2), url(3)].into();
        let changes = diff(&current, &found, &endpoint);
        let described: Vec<String> = changes
            .iter()
            .map(|c| match c {
                Change::Insert(u, _) => format!("+{u}"),
                Change::Remove(u) => format!("-{u}"),
            })
            .collect();
        assert_eq!(described, [format!("-{}", url(1)), format!("+{}", url(3))]);
    }
}
