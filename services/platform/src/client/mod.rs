//! Calling another service of the mesh: a lazily connected channel, and the
//! decoration every call carries (identity token for the callee's audience,
//! correlation id, deadline).

pub mod balance;
pub mod breaker;
pub mod call;
pub mod limit;
pub mod raw;

use std::sync::Arc;
use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::{Channel, Endpoint};

pub use limit::{Limited, Shed};

use crate::identity::token_source::{TokenError, TokenSource};
use crate::telemetry::{CORRELATION_ID_HEADER, inject_current_trace};

/// Calls in flight to one peer before more are shed.
pub const DEFAULT_CONCURRENCY: usize = 512;
/// HTTP/2 flow-control windows of every gRPC connection, both ends.
pub const STREAM_WINDOW: u32 = 2 << 20;
pub const CONNECTION_WINDOW: u32 = 8 << 20;
/// The largest HTTP/2 frame either end of a gRPC connection takes. At the
/// protocol's 16 KiB default a 45 KB listing reply left as three DATA
/// frames, each its own `writev` at the sender and read at the receiver;
/// a frame still never exceeds the stream's window.
pub const MAX_FRAME: u32 = 1 << 20;

/// A channel that holds at most a set number of calls in flight and sheds
/// the rest at once (see [`is_shed`], [`limit`]).
pub type Guarded = Limited<Channel>;

#[derive(Clone)]
pub struct Peer {
    /// The name errors and readiness use, e.g. `catalog`.
    pub name: &'static str,
    pub audience: String,
    pub channel: Guarded,
    /// The same connection without the limit, for health checks, which
    /// must not fail because the peer is busy.
    pub unguarded: Channel,
    /// Where the peer is, for a call that outlasts the channel's deadline.
    endpoint: Endpoint,
    /// Wakes the check of the peer's replicas (`balance::channel`).
    recheck: Arc<tokio::sync::Notify>,
    tokens: Arc<TokenSource>,
    timeout: Duration,
}

/// Whether a call failed in the transport, below gRPC: a connection
/// refused, reset or closed under it, a stream refused or cut by GOAWAY.
/// Such a status is made on this side, with the transport's error as its
/// source; a peer's own answer (decoded from its trailers) has none. A
/// read so failed is retried; a write may have reached the peer, so it is
/// not, and answers 503 (its `Idempotency-Key` makes the client's retry
/// safe).
pub fn transport_failed(status: &tonic::Status) -> bool {
    use tonic::Code;
    if !matches!(
        status.code(),
        Code::Unknown | Code::Internal | Code::Unavailable | Code::Cancelled
    ) {
        return false;
    }
    let mut source = std::error::Error::source(status);
    let mut transport = false;
    while let Some(e) = source {
        // The channel's own deadline, or our own shedding: not the link.
        if e.is::<tonic::TimeoutExpired>() || e.is::<Shed>() {
            return false;
        }
        // A request the connection dropped before answering (closed by a
        // GOAWAY, or gone) comes back as hyper's "canceled".
        transport |= e.is::<hyper::Error>()
            || e.is::<h2::Error>()
            || e.is::<std::io::Error>()
            || e.is::<tonic::ConnectError>()
            || e.is::<tonic::transport::Error>();
        source = e.source();
    }
    transport
}

/// Whether a call failed because it was shed (the peer had as many calls
/// in flight as allowed), not because the peer failed.
pub fn is_shed(status: &tonic::Status) -> bool {
    std::error::Error::source(status).is_some_and(|e| e.is::<Shed>())
}

impl Peer {
    pub fn new(
        name: &'static str,
        url: &str,
        audience: &str,
        tokens: Arc<TokenSource>,
        timeout: Duration,
    ) -> anyhow::Result<Self> {
        Self::limited(name, url, audience, tokens, timeout, DEFAULT_CONCURRENCY)
    }

    /// As `new`, with at most `concurrency` calls in flight.
    pub fn limited(
        name: &'static str,
        url: &str,
        audience: &str,
        tokens: Arc<TokenSource>,
        timeout: Duration,
        concurrency: usize,
    ) -> anyhow::Result<Self> {
        let settings = |url: &str| -> anyhow::Result<Endpoint> {
            Ok(Endpoint::from_shared(url.to_string())?
                .connect_timeout(Duration::from_secs(1))
                .tcp_nodelay(true)
                .http2_keep_alive_interval(Duration::from_secs(30))
                // HTTP/2's 64 KiB default windows make a large reply (an
                // export) a ping-pong of window updates.
                .initial_stream_window_size(STREAM_WINDOW)
                .initial_connection_window_size(CONNECTION_WINDOW)
                .max_frame_size(MAX_FRAME))
        };
        // A long call (`long_running`) takes the first replica: it is one
        // call, and any replica serves it.
        let first = url.split(',').next().unwrap_or(url).trim();
        let endpoint = settings(first)?;
        let (unguarded, recheck) =
            balance::channel(url, move |u| Ok(settings(u)?.timeout(timeout)))?;
        let channel = Limited::new(unguarded.clone(), concurrency);
        Ok(Self {
            name,
            audience: audience.to_string(),
            channel,
            unguarded,
            endpoint,
            recheck,
            tokens,
            timeout,
        })
    }

    /// A call lost its connection: check the replicas now, so that one
    /// that stopped leaves the balanced set before the next call picks it.
    pub fn suspect(&self) {
        self.recheck.notify_one();
    }

    /// A connection of its own for one long call (a whole feed streamed
    /// in or out), held to `timeout` instead of the channel's deadline.
    pub fn long_running(&self, timeout: Duration) -> Channel {
        self.endpoint.clone().timeout(timeout).connect_lazy()
    }

    /// `message` with this peer's identity token, the correlation id of
    /// the call being served (if any, see [`crate::call_context`]), the
    /// current trace context and the call deadline.
    pub async fn request<T>(&self, message: T) -> Result<tonic::Request<T>, TokenError> {
        let correlation = crate::call_context::correlation();
        self.request_with(correlation.as_ref(), message).await
    }

    /// As [`Peer::request`], with the correlation id given.
    pub async fn request_with<T>(
        &self,
        correlation: Option<&MetadataValue<Ascii>>,
        message: T,
    ) -> Result<tonic::Request<T>, TokenError> {
        let bearer = self.tokens.bearer(&self.audience).await?;
        let mut request = tonic::Request::new(message);
        request.set_timeout(self.timeout);
        let metadata = request.metadata_mut();
        metadata.insert("authorization", bearer);
        if let Some(id) = correlation {
            metadata.insert(CORRELATION_ID_HEADER, id.clone());
        }
        inject_current_trace(metadata);
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_transport_made_is_a_transport_failure() {
        // A peer's own answer, decoded from its trailers, has no source.
        assert!(!transport_failed(&tonic::Status::unavailable(
            "the catalog is away"
        )));
        assert!(!transport_failed(&tonic::Status::unknown("boom")));
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        let status = tonic::Status::from_error(Box::new(reset));
        assert_eq!(status.code(), tonic::Code::Unknown);
        assert!(transport_failed(&status));
        // The channel's own deadline is not the link failing.
        let late = tonic::Status::from_error(Box::new(tonic::TimeoutExpired(())));
        assert_eq!(late.code(), tonic::Code::Cancelled);
        assert!(!transport_failed(&late));
        let shed = tonic::Status::from_error(Box::new(Shed));
        assert!(!transport_failed(&shed));
    }

    #[test]
    fn a_method_not_served_is_one_missing_or_not_allowed() {
        use call::CallError;
        let status = |code| CallError::Status(tonic::Status::new(code, "no"));
        assert!(status(tonic::Code::Unimplemented).not_served());
        assert!(status(tonic::Code::PermissionDenied).not_served());
        for code in [
            tonic::Code::Unavailable,
            tonic::Code::InvalidArgument,
            tonic::Code::Unauthenticated,
            tonic::Code::Internal,
        ] {
            assert!(!status(code).not_served(), "{code:?}");
        }
        assert!(!CallError::CircuitOpen("cart").not_served());
    }
}
