//! The writes to one hold ledger gathered into one compare-and-set. A
//! network's ledger holds an entry per open checkout of every shopper of
//! it, and each of them changes it twice (its hold counted, then
//! forgotten): written one at a time in this process's turn at the key,
//! the ledger was where every checkout of a busy network queued, each
//! re-encoding and sending the whole ledger. Writes that arrive while one
//! is in flight now wait, and the next compare-and-set applies all of them
//! in order (at most [`BATCH`]), each with its own outcome, as if applied
//! one by one: a bound still holds over every replica, and a refusal of
//! one write is its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use storefront_platform::store::{Store, StoreError, Updated};
use storefront_proto::cart::storage::v1::HoldEntry;
use tokio::sync::oneshot;

use crate::hold_limits::{Exceeded, HoldLimit};
use crate::ledger_book::Book;
use crate::ledger_kept::KeptLedger;

/// Compare-and-set attempts of one batch before its writes are refused
/// as too contended.
const ATTEMPTS: usize = 64;
/// Writes one compare-and-set applies at most.
const BATCH: usize = 256;

/// One write to a ledger.
pub(crate) enum Write {
    /// Count `entry` if it fits `limit` (see [`reserve`]).
    Reserve {
        entry: HoldEntry,
        now_ms: i64,
        fresh_until: i64,
        limit: HoldLimit,
    },
    /// The session's entry no longer counts.
    Forget { session_id: String },
}

/// What a write did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wrote {
    /// Counted, holding until this (ms since the epoch).
    Held(i64),
    /// Not counted: past this bound.
    Past(Exceeded),
    Forgot,
}

/// Why a write was not applied.
#[derive(Debug, Clone)]
pub(crate) enum Failed {
    Store(StoreError),
    /// Too many replicas changed the ledger at once.
    Busy,
}

impl Write {
    /// Applies the write to `book`: what it did, and whether the ledger
    /// changed.
    fn apply(&self, book: &mut Book) -> (Wrote, bool) {
        match self {
            Write::Reserve {
                entry,
                now_ms,
                fresh_until,
                limit,
            } => match book.reserve(entry.clone(), *now_ms, *fresh_until, *limit) {
                Ok(until) => (Wrote::Held(until), true),
                Err(exceeded) => (Wrote::Past(exceeded), false),
            },
            Write::Forget { session_id } => (Wrote::Forgot, book.forget(session_id)),
        }
    }
}

type Waiter = (Write, oneshot::Sender<Result<Wrote, Failed>>);

/// The ledgers' writes waiting, by key: a key is here only while a task
/// writes it, so the map holds no more keys than writes in flight.
#[derive(Clone)]
pub(crate) struct LedgerWrites {
    store: Store,
    /// How long a ledger is kept after its last change.
    keep: Duration,
    waiting: Arc<Mutex<HashMap<String, Vec<Waiter>>>>,
}

/// What stops an update without writing.
enum Halt {
    /// Nothing in the batch changed the ledger: each write's outcome.
    Unchanged(Vec<Wrote>),
    Store(StoreError),
}

impl From<StoreError> for Halt {
    fn from(e: StoreError) -> Self {
        Halt::Store(e)
    }
}

impl LedgerWrites {
    pub fn new(store: Store, keep: Duration) -> Self {
        Self {
            store,
            keep,
            waiting: Arc::default(),
        }
    }

    /// Applies `write` to the ledger at `key`, with whatever other writes
    /// of it wait at the time.
    pub async fn apply(&self, key: String, write: Write) -> Result<Wrote, Failed> {
        let (tx, rx) = oneshot::channel();
        let lead = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            match waiting.get_mut(&key) {
                Some(queue) => {
                    queue.push((write, tx));
                    false
                }
                None => {
                    waiting.insert(key.clone(), vec![(write, tx)]);
                    true
                }
            }
        };
        if lead {
            // A task of its own: a caller whose request is dropped must
            // not take the others' writes with it.
            tokio::spawn(self.clone().drain(key));
        }
        rx.await.unwrap_or(Err(Failed::Busy))
    }

    /// Writes `key`'s waiting writes, a batch at a time, until none wait.
    async fn drain(self, key: String) {
        loop {
            let batch: Vec<Waiter> = {
                let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
                let Some(queue) = waiting.get_mut(&key) else {
                    return;
                };
                if queue.is_empty() {
                    waiting.remove(&key);
                    return;
                }
                let n = queue.len().min(BATCH);
                queue.drain(..n).collect()
            };
            let (writes, senders): (Vec<Write>, Vec<_>) = batch.into_iter().unzip();
            let outcomes = self.write(&key, &writes).await;
            for (i, tx) in senders.into_iter().enumerate() {
                let outcome = match &outcomes {
                    Ok(wrote) => wrote.get(i).cloned().ok_or(Failed::Busy),
                    Err(e) => Err(e.clone()),
                };
                // A caller gone (its request dropped) has nothing to hear.
                let _ = tx.send(outcome);
            }
        }
    }

    /// Applies `writes` in order by one compare-and-set: each one's
    /// outcome. A missing ledger is made when a write counts in it.
    async fn write(&self, key: &str, writes: &[Write]) -> Result<Vec<Wrote>, Failed> {
        // The ledger is kept indexed in the key's turn (`KeptLedger`): its
        // book is made only when it was read.
        let apply_all = |ledger: &mut KeptLedger| {
            let mut changed = false;
            let book = ledger.book();
            let wrote: Vec<Wrote> = writes
                .iter()
                .map(|w| {
                    let (wrote, changes) = w.apply(book);
                    changed |= changes;
                    wrote
                })
                .collect();
            book.tidy();
            if changed {
                Ok(wrote)
            } else {
                Err(Halt::Unchanged(wrote))
            }
        };
        for _ in 0..ATTEMPTS {
            // The ledger written is not wanted back, only kept in the turn
            // for the key's next writer: moved there, not copied (a
            // network's ledger holds an entry per open checkout).
            let updated = self
                .store
                .update_message_encoded_from(key, None, ATTEMPTS, Some(self.keep), apply_all)
                .await;
            match updated {
                Ok(Updated::Done { result, .. }) => return Ok(result),
                Ok(Updated::Contended) => return Err(Failed::Busy),
                Err(Halt::Unchanged(wrote)) => return Ok(wrote),
                Err(Halt::Store(e)) => return Err(Failed::Store(e)),
                Ok(Updated::Missing) => {
                    let mut ledger = KeptLedger::default();
                    let wrote = match apply_all(&mut ledger) {
                        Ok(wrote) => wrote,
                        Err(Halt::Unchanged(wrote)) => return Ok(wrote),
                        Err(Halt::Store(e)) => return Err(Failed::Store(e)),
                    };
                    let inserted = self.store.insert_message(key, &ledger, Some(self.keep));
                    if inserted.await.map_err(Failed::Store)? {
                        return Ok(wrote);
                    }
                }
            }
        }
        Err(Failed::Busy)
    }
}

#[cfg(test)]
#[path = "ledger_writes_tests.rs"]
mod tests;
