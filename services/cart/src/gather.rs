//! Calls of one kind gathered while one of them is in flight. Under load
//! dozens of checkouts call the catalog within one round trip, each for a
//! few products, and each call paid a hop of its own (its HTTP/2 frames,
//! HPACK, span, identity token). A call that arrives while one of its
//! kind is in flight waits for it to come back and goes in the next call
//! with every other one waiting then (up to the kind's bound). So a call
//! is never answered by one sent before it was asked (a confirm's prices
//! are read after the confirm began), and with nothing in flight a call
//! goes at once, as it would alone.
//!
//! A call stuck on a slow replica of the peer (up to its deadline) must
//! not hold up every other: a caller that has waited [`STALL`] opens a
//! second call beside it ([`IN_FLIGHT`] at most), which then carries the
//! kind's calls, and the channel's balancing steers it elsewhere. Two
//! always open measured about 5% more CPU a checkout confirm (fewer calls
//! gathered) than one opened this way.
//!
//! A gathered call carries the correlation id and trace of the first one
//! in it; the others' traces show the wait, not the peer's span.

use std::collections::HashMap;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use storefront_platform::call_context::{correlated, correlation};
use storefront_platform::client::call::{CallError, not_served};
use storefront_proto::common::v1::CallStatus;
use tokio::sync::oneshot;
use tonic::metadata::{Ascii, MetadataValue};
use tracing::Instrument;

use crate::clients::Answer;

/// The answers of one gathered call, one an item, in order.
pub type Answers<'a, T> = Pin<Box<dyn Future<Output = Vec<Result<T, CallError>>> + Send + 'a>>;

/// A kind of call that may carry several callers' items.
pub trait Batched: Send + Sync + 'static {
    /// Items that may go in one call.
    type Kind: Hash + Eq + Clone + Send + Sync + 'static;
    type Item: Send + 'static;
    type Out: Send + 'static;
    /// The most one call carries, counted in [`Batched::weight`].
    const BOUND: usize;
    fn weight(item: &Self::Item) -> usize;
    /// One call for `items`: each one's answer, in order.
    fn send<'a>(&'a self, kind: &'a Self::Kind, items: Vec<Self::Item>) -> Answers<'a, Self::Out>;
}

/// Calls of one kind in flight at once, at most.
pub const IN_FLIGHT: usize = 2;
/// How long a caller waits behind a call in flight before it opens
/// another (a catalog call under load takes a few ms, rarely 20).
pub const STALL: Duration = Duration::from_millis(50);

/// One caller waiting, with the scope it called in.
struct Waiter<B: Batched> {
    item: B::Item,
    correlation: Option<MetadataValue<Ascii>>,
    span: tracing::Span,
    answer: oneshot::Sender<Result<B::Out, CallError>>,
}

/// A kind's callers waiting, and its calls in flight.
struct Queue<B: Batched> {
    waiting: Vec<Waiter<B>>,
    in_flight: usize,
}

impl<B: Batched> Queue<B> {
    /// Takes a slot when fewer than `up_to` are in flight.
    fn open(&mut self, up_to: usize) -> bool {
        let free = self.in_flight < up_to;
        self.in_flight += usize::from(free);
        free
    }
}

type Queues<B> = Arc<Mutex<HashMap<<B as Batched>::Kind, Queue<B>>>>;

/// Gathers `B`'s calls.
pub struct Gather<B: Batched> {
    batched: Arc<B>,
    /// [`STALL`], but in tests.
    stall: Duration,
    /// Calls waiting, by kind: a kind is here only while a task sends its
    /// calls, so the map holds no more kinds than calls in flight.
    waiting: Queues<B>,
}

impl<B: Batched> Gather<B> {
    pub fn new(batched: B) -> Self {
        Self::stalled_after(batched, STALL)
    }

    /// As `new`, a second call opened after `stall`.
    pub fn stalled_after(batched: B, stall: Duration) -> Self {
        Self {
            batched: Arc::new(batched),
            stall,
            waiting: Arc::default(),
        }
    }

    /// `item`'s answer, from the next call of its kind.
    pub async fn call(&self, kind: B::Kind, item: B::Item) -> Result<B::Out, CallError> {
        let (answer, answered) = oneshot::channel();
        let waiter = Waiter {
            item,
            correlation: correlation(),
            span: tracing::Span::current(),
            answer,
        };
        let lead = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            // The kind cloned (a read's is its currency) only to be kept.
            if !waiting.contains_key(&kind) {
                let queue = Queue {
                    waiting: Vec::new(),
                    in_flight: 0,
                };
                waiting.insert(kind.clone(), queue);
            }
            let queue = waiting.get_mut(&kind).expect("just kept");
            queue.waiting.push(waiter);
            queue.open(1)
        };
        let answer = if lead {
            // Its own call takes it first: no other to open if it stalls.
            self.drain(kind);
            answered.await
        } else {
            let mut answered = answered;
            match tokio::time::timeout(self.stall, &mut answered).await {
                Ok(answer) => answer,
                Err(_) => {
                    self.open_beside(kind);
                    answered.await
                }
            }
        };
        answer.unwrap_or_else(|_| {
            let stopped = tonic::Status::internal("a gathered call stopped");
            Err(CallError::Status(stopped))
        })
    }

    /// A second call of `kind` beside the one in flight, when calls still
    /// wait and a slot is free.
    fn open_beside(&self, kind: B::Kind) {
        let open = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            let queue = waiting.get_mut(&kind);
            queue.is_some_and(|q| !q.waiting.is_empty() && q.open(IN_FLIGHT))
        };
        if open {
            self.drain(kind);
        }
    }

    /// Sends `kind`'s waiting calls in a slot taken for it, on a task of
    /// its own: a caller whose request is dropped must not take the
    /// others' calls with it.
    fn drain(&self, kind: B::Kind) {
        let drain = Drain {
            batched: self.batched.clone(),
            waiting: self.waiting.clone(),
            kind,
            finished: false,
        };
        tokio::spawn(drain.run());
    }

    #[cfg(test)]
    pub fn waiting(&self, kind: &B::Kind) -> usize {
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        waiting.get(kind).map_or(0, |q| q.waiting.len())
    }

    #[cfg(test)]
    pub fn idle(&self) -> bool {
        let waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        waiting.is_empty()
    }
}

/// Sends one kind's waiting calls, one call at a time, until none wait:
/// one of the kind's slots in flight.
struct Drain<B: Batched> {
    batched: Arc<B>,
    waiting: Queues<B>,
    kind: B::Kind,
    /// Set when it found none waiting and gave its slot back; otherwise (a
    /// panic) dropping the drain gives it back, and with no other slot in
    /// flight drops the kind's waiting callers (they hear an error), so
    /// that the next call leads anew.
    finished: bool,
}

impl<B: Batched> Drain<B> {
    /// Gives the slot back; the kind goes with its last slot.
    fn leave(&mut self, waiting: &mut HashMap<B::Kind, Queue<B>>) {
        self.finished = true;
        if let Some(queue) = waiting.get_mut(&self.kind) {
            queue.in_flight = queue.in_flight.saturating_sub(1);
            if queue.in_flight == 0 {
                waiting.remove(&self.kind);
            }
        }
    }
}

impl<B: Batched> Drop for Drain<B> {
    fn drop(&mut self) {
        if !self.finished {
            let waiting = self.waiting.clone();
            let mut waiting = waiting.lock().unwrap_or_else(|e| e.into_inner());
            self.leave(&mut waiting);
        }
    }
}

impl<B: Batched> Drain<B> {
    async fn run(mut self) {
        while let Some(batch) = self.next_batch() {
            let (correlation, span) = (batch[0].correlation.clone(), batch[0].span.clone());
            let mut answers = Vec::with_capacity(batch.len());
            let items = (batch.into_iter())
                .map(|w| {
                    answers.push(w.answer);
                    w.item
                })
                .collect();
            let call = correlated(correlation, self.batched.send(&self.kind, items));
            let mut outs = call.instrument(span).await.into_iter();
            for answer in answers {
                let out = outs.next().unwrap_or_else(|| {
                    let short = tonic::Status::internal("a gathered call answered too few");
                    Err(CallError::Status(short))
                });
                // A caller gone (its request dropped) has nothing to hear.
                let _ = answer.send(out);
            }
        }
    }

    /// The calls waiting now, up to the kind's bound; None (and the slot
    /// given back) when none wait.
    fn next_batch(&mut self) -> Option<Vec<Waiter<B>>> {
        let waiting = self.waiting.clone();
        let mut waiting = waiting.lock().unwrap_or_else(|e| e.into_inner());
        let queue = waiting.get_mut(&self.kind)?;
        if queue.waiting.is_empty() {
            self.leave(&mut waiting);
            return None;
        }
        let queue = &mut queue.waiting;
        let mut total = 0;
        let n = (queue.iter())
            .take_while(|w| {
                total += B::weight(&w.item);
                total <= B::BOUND
            })
            .count()
            .max(1);
        Some(queue.drain(..n).collect())
    }
}

/// How long items go one by one after the peer did not serve a batch,
/// before one is tried again (a peer upgraded meanwhile).
const UNSERVED_FOR: Duration = Duration::from_secs(60);

/// A peer's batch method (`method`), sent items one by one instead while
/// the peer does not serve it: older than the method, or a callers' list
/// that does not name it for this service.
pub struct Batching {
    method: &'static str,
    unserved_until: Mutex<Option<Instant>>,
}

impl Batching {
    pub fn new(method: &'static str) -> Self {
        Self {
            method,
            unserved_until: Mutex::default(),
        }
    }

    fn served(&self) -> bool {
        let until = self.unserved_until.lock();
        until
            .unwrap_or_else(|e| e.into_inner())
            .is_none_or(|t| Instant::now() >= t)
    }

    fn unserved(&self, status: &tonic::Status) {
        tracing::warn!(method = self.method, code = ?status.code(), "the peer does not serve a batch method to this service: its items go one by one");
        let mut until = self
            .unserved_until
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        *until = Some(Instant::now() + UNSERVED_FOR);
    }

    /// `items` in one call of `batch` (its reply read by `outcomes`, one an
    /// item), or each in a call of its own (`alone`) when there is one or
    /// the peer does not serve the batch.
    pub async fn send<'a, I: Clone, O, R>(
        &self,
        items: Vec<I>,
        batch: impl FnOnce(Vec<I>) -> Answer<'a, R>,
        outcomes: impl FnOnce(R) -> Vec<Result<O, CallError>>,
        alone: impl Fn(I) -> Answer<'a, O>,
    ) -> Vec<Result<O, CallError>> {
        if items.len() == 1 || !self.served() {
            return futures::future::join_all(items.into_iter().map(alone)).await;
        }
        let n = items.len();
        match batch(items.clone()).await {
            Ok(reply) => {
                let mut answers = outcomes(reply);
                if answers.len() != n {
                    let short = tonic::Status::internal("a batch answered too few items");
                    answers = (0..n)
                        .map(|_| Err(CallError::Status(short.clone())))
                        .collect();
                }
                answers
            }
            Err(CallError::Status(s)) if not_served(&s) => {
                self.unserved(&s);
                futures::future::join_all(items.into_iter().map(alone)).await
            }
            Err(e) => (0..n).map(|_| Err(e.clone())).collect(),
        }
    }
}

/// An item's outcome of a batch: its reply, or the error its call alone
/// would have had.
pub fn outcome<T>(reply: Option<T>, error: Option<CallStatus>) -> Result<T, CallError> {
    match (reply, error) {
        (Some(reply), _) => Ok(reply),
        (None, Some(error)) => Err(CallError::Status(error.into())),
        (None, None) => Err(CallError::Status(tonic::Status::internal(
            "a batch item answered neither a reply nor an error",
        ))),
    }
}
