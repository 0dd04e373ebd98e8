//! Calls spread over every replica of a callee. One HTTP/2 connection
//! carries every call to its peer, so a Kubernetes ClusterIP Service (one
//! virtual address) pins a client to whichever pod it first reached, and
//! replicas added later get nothing from clients already connected. Here
//! each call picks a replica (tower's power of two choices, by calls in
//! flight) among all the addresses the callee's name resolves to (a
//! headless Service: one per ready pod), resolved again every few seconds
//! as pods come and go; or among a fixed list of URLs. A replica joins the
//! set once its health check says it serves, not when it first takes a
//! connection: a program binds its address before it has loaded what it
//! serves, and a call sent to it then waits out its whole deadline.

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::sync::mpsc::Sender;
use tonic::transport::channel::Change;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// How often a name is resolved again.
pub const RESOLVE_EVERY: Duration = Duration::from_secs(5);
/// How often each replica is checked, how long it has to take a
/// connection and to answer its health check.
const PROBE_EVERY: Duration = Duration::from_secs(1);
const PROBE_TIMEOUT: Duration = Duration::from_millis(300);
const HEALTH_TIMEOUT: Duration = Duration::from_secs(1);
/// Health checks in a row a replica of the set may leave unanswered (busy,
/// or hung) before it is left out.
const MISSES_ALLOWED: u8 = 2;
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

/// What a replica's probe found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// It says it serves; or it answers gRPC without a health service.
    Serving,
    /// It refuses connections, or says it does not serve (starting,
    /// draining, its store gone).
    Out,
    /// It takes connections but left its health check unanswered: a
    /// program still loading (it listens first), or one too busy to answer.
    NoAnswer,
}

/// Probes the replica at `url` over `channel` (its own connection, kept
/// between probes): a connection first, then its readiness (`""`).
async fn probe(url: &str, channel: Channel) -> Probe {
    if !takes_connections(url).await {
        return Probe::Out;
    }
    let mut health = HealthClient::new(channel);
    let mut asked = tonic::Request::new(HealthCheckRequest::default());
    asked.set_timeout(HEALTH_TIMEOUT);
    match tokio::time::timeout(HEALTH_TIMEOUT, health.check(asked)).await {
        Ok(Ok(answer)) if answer.get_ref().status() == ServingStatus::Serving => Probe::Serving,
        Ok(Ok(_)) => Probe::Out,
        Ok(Err(status)) => match status.code() {
            tonic::Code::Unimplemented => Probe::Serving,
            tonic::Code::NotFound => Probe::Out,
            _ => Probe::NoAnswer,
        },
        Err(_) => Probe::NoAnswer,
    }
}

/// One replica as the follower knows it: its probe connection and the
/// health checks in a row it left unanswered while in the set.
struct Known {
    channel: Channel,
    misses: u8,
}

/// Whether a replica belongs in the set after `found`, given whether it
/// is in it now; counts a member's unanswered checks in `misses`.
fn belongs(found: Probe, member: bool, misses: &mut u8) -> bool {
    match found {
        Probe::Serving => {
            *misses = 0;
            true
        }
        Probe::Out => false,
        Probe::NoAnswer if member && *misses < MISSES_ALLOWED => {
            *misses += 1;
            true
        }
        Probe::NoAnswer => false,
    }
}

/// Keeps the balanced set equal to the replicas that serve, until the
/// channel is dropped.
async fn follow(
    replicas: Replicas,
    endpoint: impl Fn(&str) -> anyhow::Result<Endpoint>,
    changes: Sender<Change<String, Endpoint>>,
    recheck: Arc<Notify>,
) {
    let mut current: HashSet<String> = HashSet::new();
    let mut since_resolved = RESOLVE_EVERY;
    let mut urls = Vec::new();
    let mut known: HashMap<String, Known> = HashMap::new();
    loop {
        if since_resolved >= RESOLVE_EVERY || urls.is_empty() {
            urls = candidates(&replicas).await;
            since_resolved = Duration::ZERO;
            known.retain(|url, _| urls.contains(url));
            for url in &urls {
                if let (false, Ok(e)) = (known.contains_key(url), endpoint(url)) {
                    let channel = e.connect_lazy();
                    known.insert(url.clone(), Known { channel, misses: 0 });
                }
            }
        }
        let probes = known
            .iter()
            .map(|(url, k)| async move { (url.clone(), probe(url, k.channel.clone()).await) });
        let found = futures::future::join_all(probes).await;
        let mut live = HashSet::new();
        for (url, found) in found {
            let member = current.contains(&url);
            let Some(k) = known.get_mut(&url) else {
                continue;
            };
            if belongs(found, member, &mut k.misses) {
                live.insert(url);
            }
        }
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
    #[test]
    fn a_member_stays_through_a_few_unanswered_checks_and_a_newcomer_waits_for_an_answer() {
        let mut misses = 0;
        assert!(
            !belongs(Probe::NoAnswer, false, &mut misses),
            "not yet serving"
        );
        for _ in 0..MISSES_ALLOWED {
            assert!(belongs(Probe::NoAnswer, true, &mut misses), "busy, kept");
        }
        assert!(
            !belongs(Probe::NoAnswer, true, &mut misses),
            "hung, left out"
        );
        assert!(belongs(Probe::Serving, false, &mut misses));
        assert_eq!(misses, 0, "an answer forgives the misses");
        assert!(
            !belongs(Probe::Out, true, &mut misses),
            "refused or not serving"
        );
    }

    /// A gRPC server on a loopback listener answering only health checks:
    /// readiness (`""`) as `ready`, and `"joined"` serving when asked.
    async fn health_server(
        listener: tokio::net::TcpListener,
        ready: tonic_health::ServingStatus,
        joined: bool,
    ) {
        let (reporter, service) = tonic_health::server::health_reporter();
        reporter.set_service_status("", ready).await;
        if joined {
            reporter
                .set_service_status("joined", tonic_health::ServingStatus::Serving)
                .await;
        }
        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
        tokio::spawn(async move {
            let _reporter = reporter;
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(incoming)
                .await
        });
    }

    async fn listener() -> (tokio::net::TcpListener, String) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        (listener, url)
    }

    #[tokio::test]
    async fn calls_go_only_to_replicas_that_serve_and_a_loaded_one_joins() {
        let (serving, serving_url) = listener().await;
        health_server(serving, tonic_health::ServingStatus::Serving, false).await;
        let (draining, draining_url) = listener().await;
        health_server(draining, tonic_health::ServingStatus::NotServing, false).await;
        // Bound and still loading: takes connections, answers nothing.
        let (loading, loading_url) = listener().await;
        let urls = [serving_url, draining_url, loading_url].join(",");
        let endpoint = |u: &str| Ok(Endpoint::from_shared(u.to_string())?);
        let (channel, _) = super::channel(&urls, endpoint).unwrap();
        let mut client = HealthClient::new(channel);
        let ask = |service: &str| HealthCheckRequest {
            service: service.to_string(),
        };
        for n in 0..40 {
            let answer = tokio::time::timeout(Duration::from_secs(5), client.check(ask("")))
                .await
                .unwrap_or_else(|_| panic!("call {n} was sent to the replica still loading"))
                .expect("answered");
            let status = answer.get_ref().status();
            assert_eq!(
                status,
                ServingStatus::Serving,
                "call {n} went to one not serving"
            );
        }
        health_server(loading, tonic_health::ServingStatus::Serving, true).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        loop {
            let answer = client.check(ask("joined")).await;
            if answer.is_ok_and(|a| a.get_ref().status() == ServingStatus::Serving) {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the loaded replica never joined"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
