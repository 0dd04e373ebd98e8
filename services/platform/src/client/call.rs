//! One call to a peer, whatever the method or the caller (the gateway or a
//! service): the identity token, correlation id and deadline on the
//! request, the circuit breaker before and after, and retries for the
//! methods declared idempotent reads. Typed clients ([`typed_client!`])
//! declare each method with its [`Policy`] and go through [`Caller::call`].
//!
//! [`typed_client!`]: crate::typed_client

use std::sync::Arc;
use std::time::Duration;

use tonic::metadata::{Ascii, MetadataValue};
use tower::retry::budget::{Budget, TpsBudget};

use super::breaker::Breaker;
use super::{Peer, is_shed};
use crate::error::{ErrorKind, ServiceError, status_details};
use crate::identity::token_source::TokenError;

/// What a method may be retried for, declared with the method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Idempotent: retried with jittered exponential back-off while the
    /// peer is unreachable, within the retry budget.
    Read,
    /// Sent once: a retry could apply it twice.
    Write,
}

/// What a call carries besides its message.
pub trait CallScope {
    /// The correlation id to send on, if any.
    fn correlation(&self) -> Option<MetadataValue<Ascii>>;
    /// A deadline tighter than the channel's, if the call has one.
    fn deadline(&self) -> Option<Duration>;
}

/// A service's call to another, in the scope of the call it is serving
/// (see [`crate::call_context`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct Current;

impl CallScope for Current {
    fn correlation(&self) -> Option<MetadataValue<Ascii>> {
        crate::call_context::correlation()
    }
    fn deadline(&self) -> Option<Duration> {
        None
    }
}

#[derive(Debug, Clone)]
pub enum CallError {
    /// The peer's circuit is open: not sent.
    CircuitOpen(&'static str),
    /// No identity token for the peer: not sent.
    Token(&'static str, TokenError),
    /// The peer's answer, or the transport's.
    Status(tonic::Status),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::CircuitOpen(peer) => {
                write!(f, "{peer} is failing; calls are paused briefly")
            }
            CallError::Token(peer, e) => write!(f, "no identity token for {peer}: {e}"),
            CallError::Status(s) => f.write_str(s.message()),
        }
    }
}

impl CallError {
    /// The peer's own refusal of the request, as this mesh's services write
    /// one (a status carrying its kind and code), when it is the caller's
    /// to answer as it is: 400, 422, 404, 409. `None` for anything else
    /// (unreachable, failing, its internal error, an identity refused at
    /// the hop), which the caller answers as its peer being unavailable.
    pub fn refusal(&self) -> Option<ServiceError> {
        let CallError::Status(status) = self else {
            return None;
        };
        let details = status_details(status);
        let kind = details.kind?;
        let refused = matches!(
            kind,
            ErrorKind::BadRequest
                | ErrorKind::Validation
                | ErrorKind::NotFound
                | ErrorKind::Conflict
        );
        if !refused {
            return None;
        }
        let mut error = ServiceError::new(kind, details.reason?, status.message());
        error.violations = details.violations;
        Some(error)
    }

    /// Whether the peer does not serve the method to this caller: a peer
    /// older than the method (UNIMPLEMENTED), or an allow-list that does
    /// not name it for the caller's account (PERMISSION_DENIED). Where the
    /// mesh has an older way to the same end (a batch's items one by one,
    /// a webhook in two calls), the caller takes it.
    pub fn not_served(&self) -> bool {
        matches!(self, CallError::Status(status) if not_served(status))
    }

    /// 503 `code`: the peer could not answer. Its words stay in the log:
    /// they may quote what the client sent.
    pub fn unavailable(&self, code: &'static str, message: &'static str) -> ServiceError {
        tracing::warn!(error = %self, code, "peer call failed");
        ServiceError::new(ErrorKind::Unavailable, code, message)
    }
}

/// Retries of an idempotent read after a peer was unreachable.
const MAX_RETRIES: u32 = 3;
/// The first back-off; it doubles, with up to ±50% jitter.
const BASE_BACKOFF: Duration = Duration::from_millis(50);

fn backoff(attempt: u32) -> Duration {
    let base = BASE_BACKOFF * 2u32.pow(attempt);
    base.mul_f64(0.5 + fastrand::f64())
}

/// Retries may add at most 20% to the calls made (plus a floor of 10 a
/// second), so a struggling peer is not buried under retries.
pub fn retry_budget() -> Arc<TpsBudget> {
    Arc::new(TpsBudget::new(Duration::from_secs(10), 10, 0.2))
}

/// A peer with its breaker and the retry budget it draws on (which
/// callers may share).
#[derive(Clone)]
pub struct Caller {
    pub peer: Peer,
    pub breaker: Arc<Breaker>,
    pub retry_budget: Arc<TpsBudget>,
}

impl Caller {
    /// `peer` with the default breaker (5 failures, open for 5 s) and a
    /// budget of its own.
    pub fn new(peer: Peer) -> Self {
        Self {
            peer,
            breaker: Arc::new(Breaker::new(5, Duration::from_secs(5))),
            retry_budget: retry_budget(),
        }
    }

    /// `peer` for a background job that retries on its own schedule
    /// (start-up loops, index rebuilds): no breaker and no retries, which
    /// would only delay its next attempt.
    pub fn for_background(peer: Peer) -> Self {
        Self {
            peer,
            breaker: Arc::new(Breaker::new(u32::MAX, Duration::ZERO)),
            retry_budget: Arc::new(TpsBudget::new(Duration::from_secs(1), 0, 0.0)),
        }
    }

    pub fn name(&self) -> &'static str {
        self.peer.name
    }

    /// Calls the peer with `message` under `policy`. The scope's deadline
    /// holds the call, even against a peer that never answers.
    pub async fn call<M, R, F, Fut>(
        &self,
        scope: &impl CallScope,
        policy: Policy,
        message: M,
        call: F,
    ) -> Result<R, CallError>
    where
        M: Clone,
        F: Fn(tonic::Request<M>) -> Fut,
        Fut: std::future::Future<Output = Result<tonic::Response<R>, tonic::Status>>,
    {
        let retries = match policy {
            Policy::Read => {
                self.retry_budget.deposit();
                MAX_RETRIES
            }
            Policy::Write => 0,
        };
        let correlation = scope.correlation();
        // One deadline for the call however many attempts it takes: a
        // retry gets what is left of it, not a fresh one.
        let ends = scope.deadline().map(|d| tokio::time::Instant::now() + d);
        let mut attempt = 0;
        // Cloned only for an attempt that may be followed by another: a
        // write, and a read's last attempt, send the message itself.
        let mut message = Some(message);
        let outcome = loop {
            if !self.breaker.allows() {
                crate::telemetry::metrics::refused(self.name(), "circuit_open");
                return Err(CallError::CircuitOpen(self.name()));
            }
            let payload = if attempt < retries {
                message.clone()
            } else {
                message.take()
            };
            let payload = payload.ok_or_else(|| {
                CallError::Status(tonic::Status::internal("message already sent"))
            })?;
            let mut request = self
                .peer
                .request_with(correlation.as_ref(), payload)
                .await
                .map_err(|e| CallError::Token(self.name(), e))?;
            // The call's own deadline travels as grpc-timeout (the
            // channel's is the cap).
            let deadline = ends.map(|at| at.saturating_duration_since(tokio::time::Instant::now()));
            if let Some(d) = deadline {
                request.set_timeout(d);
            }
            let result = match deadline {
                Some(d) => tokio::time::timeout(d, call(request))
                    .await
                    .unwrap_or_else(|_| Err(tonic::Status::deadline_exceeded("deadline passed"))),
                None => call(request).await,
            };
            if let Err(status) = &result
                && super::transport_failed(status)
            {
                self.peer.suspect();
            }
            match result {
                Err(status)
                    if (status.code() == tonic::Code::Unavailable
                        || super::transport_failed(&status))
                        && attempt < retries
                        && self.retry_budget.withdraw() =>
                {
                    tracing::debug!(peer = self.name(), attempt, "retrying an unreachable peer");
                    tokio::time::sleep(backoff(attempt)).await;
                    attempt += 1;
                }
                outcome => break outcome,
            }
        };
        self.record(&outcome);
        outcome
            .map(tonic::Response::into_inner)
            .map_err(CallError::Status)
    }

    /// Feeds the breaker with one call's outcome (reads and writes alike).
    /// It counts calls, not attempts: one read that exhausted its retries
    /// is one failure. Only the peer failing counts (see
    /// [`peer_failed`]): a deadline may be one expensive request's own
    /// (heavy queries must not open the circuit for everyone), and a shed
    /// call was never sent; the concurrency limit bounds what a hung peer
    /// holds. Any other answer, an error included, shows the peer is up.
    fn record<R>(&self, outcome: &Result<R, tonic::Status>) {
        match outcome {
            Err(s) if peer_failed(s) => {
                if self.breaker.failed() {
                    tracing::warn!(peer = self.name(), "circuit opened");
                    crate::telemetry::metrics::circuit(self.name(), true);
                }
            }
            Err(s) if is_shed(s) => crate::telemetry::metrics::refused(self.name(), "shed"),
            Err(s)
                if matches!(
                    s.code(),
                    tonic::Code::DeadlineExceeded | tonic::Code::Cancelled
                ) => {}
            _ => {
                if self.breaker.succeeded() {
                    crate::telemetry::metrics::circuit(self.name(), false);
                }
            }
        }
    }
}

/// [`CallError::not_served`], of a status.
pub fn not_served(status: &tonic::Status) -> bool {
    matches!(
        status.code(),
        tonic::Code::Unimplemented | tonic::Code::PermissionDenied
    )
}

/// Whether a failed call says the peer itself is failing: UNAVAILABLE
/// from the transport (no connection, a connection lost, a stream
/// refused) or from a peer without a word of its own. A peer that answers
/// UNAVAILABLE in its own words (our ErrorInfo: "the catalog is
/// unreachable") is up and saying so; counting that against it would let
/// one request that upsets a peer's peer pause the peer for everyone. A
/// reset stream, a protocol error or any other code is about the call,
/// not the peer, and a shed call was never sent.
pub fn peer_failed(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unavailable
        && !is_shed(status)
        && crate::error::status_details(status).reason.is_none()
}

/// A typed client over a [`Caller`]: one method per gRPC method the
/// caller uses, each with its [`Policy`], all through [`Caller::call`].
/// The tonic client type (`$grpc`) must be in scope where it is used.
#[macro_export]
macro_rules! typed_client {
    (
        $(#[$doc:meta])*
        $vis:vis $client:ident via $grpc:ident {
            $( $policy:ident $method:ident($request:ty) -> $reply:ty; )*
        }
    ) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        $vis struct $client<'a>(pub &'a $crate::client::call::Caller);

        impl $client<'_> {
            /// The gRPC methods this client calls, as the topology's
            /// allow-lists name them (`GetProduct`), sorted.
            pub fn methods() -> Vec<String> {
                let mut names: Vec<String> = [$(stringify!($method)),*]
                    .iter()
                    .map(|m| $crate::topology::grpc_name(m))
                    .collect();
                names.sort();
                names
            }

            $(
                pub async fn $method(
                    self,
                    scope: &impl $crate::client::call::CallScope,
                    message: $request,
                ) -> Result<$reply, $crate::client::call::CallError> {
                    let caller = self.0;
                    caller
                        .call(scope, $crate::client::call::Policy::$policy, message, |request| {
                            let mut client = $grpc::new(caller.peer.channel.clone());
                            async move { client.$method(request).await }
                        })
                        .await
                }
            )*
        }
    };
}
