//! Listening sockets with room for a burst of new connections.
//!
//! `tokio::net::TcpListener::bind` listens with the standard library's
//! backlog of 128. When more clients than that connect at once while the
//! cores are busy (a load balancer reconnecting after a deploy, a page of
//! storefront traffic arriving together), the accept queue overflows, the
//! kernel drops the SYNs past it, and each of those clients waits a whole
//! second for its retry. Measured: 256 connections opened at once to a
//! gateway under load, 107-120 of them dropped (`TcpExtListenOverflows`),
//! and a cluster's line adds at 256 connections with 69-80 connects
//! retried after 1 s. The kernel caps the backlog at
//! `net.core.somaxconn` (4,096 by default since Linux 5.4).

use std::io;
use std::net::SocketAddr;

use tokio::net::{TcpListener, TcpSocket};

/// Connections the kernel may hold, accepted or half-open, before a
/// listener takes them.
pub const BACKLOG: u32 = 4_096;

/// Listens on `addr` with [`BACKLOG`] (address reuse on, as tokio's own
/// `bind` sets it, so a restarted program binds at once).
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_of_connections_waits_in_the_backlog() {
        let listener = bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        // Nobody accepts: every connect completes only if the kernel
        // queues it (past 128 the SYNs were dropped and retried in 1 s).
        let connects = (0..300).map(|_| tokio::net::TcpStream::connect(addr));
        let connected = tokio::time::timeout(
            std::time::Duration::from_millis(900),
            futures::future::try_join_all(connects),
        )
        .await
        .expect("every connect queued at once, none retried after a second")
        .expect("connected");
        assert_eq!(connected.len(), 300);
    }
}
