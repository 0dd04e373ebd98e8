//! How the store's connections to Redis are set, read from this process's
//! sockets themselves (copies of their descriptors taken with
//! `pidfd_getfd`, since the client does not hand its sockets out).

use std::net::SocketAddr;

use rustix::process::{PidfdFlags, PidfdGetfdFlags, getpid, pidfd_getfd, pidfd_open};

use crate::store::{RedisTarget, Store};
use crate::testing::{RedisCluster, RedisServer};

/// This process's sockets connected to a loopback port of `ports`, each
/// with whether it sends without Nagle's delay (`TCP_NODELAY`).
fn sockets_to(ports: &[u16]) -> Vec<(SocketAddr, bool)> {
    let me = pidfd_open(getpid(), PidfdFlags::empty()).expect("pidfd_open");
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd").expect("/proc/self/fd") {
        let Ok(entry) = entry else { continue };
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|link| link.to_string_lossy().starts_with("socket:"));
        let fd = entry.file_name().to_str().and_then(|n| n.parse().ok());
        let (true, Some(fd)) = (is_socket, fd) else {
            continue;
        };
        // Closed since it was listed, or not ours to copy: not a Redis one.
        let Ok(copy) = pidfd_getfd(&me, fd, PidfdGetfdFlags::empty()) else {
            continue;
        };
        let socket = socket2::SockRef::from(&copy);
        let peer = socket.peer_addr().ok().and_then(|a| a.as_socket());
        if let Some(peer) = peer.filter(|p| p.ip().is_loopback() && ports.contains(&p.port())) {
            found.push((peer, socket.tcp_nodelay().unwrap_or(false)));
        }
    }
    found
}

fn port_of(url: &str) -> u16 {
    let port = url
        .rsplit(':')
        .next()
        .and_then(|p| p.trim_end_matches('/').parse().ok());
    port.unwrap_or_else(|| panic!("no port in {url}"))
}

/// One connection carries every command of the process: with Nagle's
/// algorithm a command could wait for a delayed ACK of the one before.
#[tokio::test]
async fn every_connection_to_redis_sends_without_delay() {
    let server = RedisServer::start_tls().expect("redis-server with TLS, and openssl");
    let mut target = RedisTarget::new(server.url.clone());
    let ca = server.tls.as_ref().expect("TLS").join("ca.crt");
    target.ca_pem = Some(std::fs::read(ca).expect("the CA"));
    let one = Store::connect(&target, "test:").await.expect("one server");
    one.ping().await.expect("ping");
    let cluster = RedisCluster::start().expect("a Redis Cluster on loopback");
    let clustered = Store::redis(&cluster.url, "test:").await.expect("cluster");
    for key in ["a", "b", "c", "d", "e", "f"] {
        assert!(clustered.insert(key, b"one", None).await.expect("insert"));
    }
    let server_sockets = sockets_to(&[port_of(&server.url)]);
    let cluster_sockets = sockets_to(&cluster.ports);
    assert!(!server_sockets.is_empty(), "no socket to the server found");
    assert!(
        cluster_sockets.len() >= 3,
        "a socket to each primary at least: {cluster_sockets:?}"
    );
    for (peer, nodelay) in server_sockets.iter().chain(&cluster_sockets) {
        assert!(
            nodelay,
            "the connection to {peer} waits with Nagle's algorithm"
        );
    }
}
