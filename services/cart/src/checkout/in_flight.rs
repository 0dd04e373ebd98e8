//! Confirms in flight in this process: a confirm of a session while
//! another runs (the shopper's beside the provider's webhook, a client's
//! retry) waits for that one's outcome rather than making the order a
//! second time. Across replicas the machine's compare-and-sets still keep
//! one order; this spares the second's calls (a payment read, a
//! repricing, an order the orders service answers as made already). Keyed
//! by customer and session: only the session's own customer shares an
//! outcome.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;

use storefront_platform::error::ServiceError;
use tokio::sync::watch;

type Outcome<T> = Option<Result<T, ServiceError>>;
type Key = (String, String);

/// The runs in flight, by key: a key is here only while its run is, so
/// the map holds no more keys than requests in flight.
pub(crate) struct InFlight<T> {
    running: Mutex<HashMap<Key, watch::Receiver<Outcome<T>>>>,
}

impl<T> Default for InFlight<T> {
    fn default() -> Self {
        Self {
            running: Mutex::default(),
        }
    }
}

enum Role<T> {
    Lead(watch::Sender<Outcome<T>>),
    Join(watch::Receiver<Outcome<T>>),
}

/// Takes the leader's key out when its run ends or is dropped.
struct Leaving<'a, T> {
    running: &'a Mutex<HashMap<Key, watch::Receiver<Outcome<T>>>>,
    key: &'a Key,
}

impl<T> Drop for Leaving<'_, T> {
    fn drop(&mut self) {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        running.remove(self.key);
    }
}

impl<T: Clone> InFlight<T> {
    /// `work`'s outcome, or that of the run of `key` in flight now. A run
    /// dropped unfinished (its request gone) leaves its joiners to run
    /// `work` themselves.
    pub async fn run<F>(&self, key: Key, work: impl FnOnce() -> F) -> Result<T, ServiceError>
    where
        F: Future<Output = Result<T, ServiceError>>,
    {
        match self.role(&key) {
            Role::Join(mut rx) => {
                if let Ok(done) = rx.wait_for(Option::is_some).await
                    && let Some(outcome) = done.clone()
                {
                    return outcome;
                }
                work().await
            }
            Role::Lead(tx) => {
                let leaving = Leaving {
                    running: &self.running,
                    key: &key,
                };
                let outcome = work().await;
                // Out of the map first, so that no one joins from now on:
                // the outcome is copied only for those waiting (most runs
                // have none).
                drop(leaving);
                if tx.receiver_count() > 0 {
                    tx.send_replace(Some(outcome.clone()));
                }
                outcome
            }
        }
    }

    fn role(&self, key: &Key) -> Role<T> {
        let mut running = self.running.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(rx) = running.get(key) {
            return Role::Join(rx.clone());
        }
        let (tx, rx) = watch::channel(None);
        running.insert(key.clone(), rx);
        Role::Lead(tx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    fn key(session: &str) -> Key {
        ("c-1".into(), session.into())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn runs_at_once_share_the_first_ones_outcome() {
        let flights = Arc::new(InFlight::<usize>::default());
        let ran = Arc::new(AtomicUsize::new(0));
        let (go, gate) = watch::channel(false);
        let tasks: Vec<_> = (0..8)
            .map(|n| {
                let (flights, ran, mut gate) = (flights.clone(), ran.clone(), gate.clone());
                tokio::spawn(async move {
                    flights
                        .run(key("s-1"), || async move {
                            ran.fetch_add(1, Ordering::SeqCst);
                            let _ = gate.wait_for(|open| *open).await;
                            Ok(n)
                        })
                        .await
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(50)).await;
        go.send_replace(true);
        let mut outcomes = Vec::new();
        for task in tasks {
            outcomes.push(task.await.unwrap().unwrap());
        }
        outcomes.dedup();
        assert_eq!(outcomes.len(), 1, "{outcomes:?}");
        assert_eq!(ran.load(Ordering::SeqCst), 1);
        assert!(flights.running.lock().unwrap().is_empty(), "none kept");
        // Another customer's key, or a later run, runs on its own.
        let other = flights.run(("c-2".into(), "s-1".into()), || async { Ok(99) });
        assert_eq!(other.await.unwrap(), 99);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_dropped_unfinished_leaves_its_joiner_to_run() {
        let flights = Arc::new(InFlight::<&'static str>::default());
        let lead = tokio::spawn({
            let flights = flights.clone();
            async move {
                let never = std::future::pending::<Result<&'static str, ServiceError>>;
                flights.run(key("s-1"), never).await
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        let join = tokio::spawn({
            let flights = flights.clone();
            async move { flights.run(key("s-1"), || async { Ok("joiner") }).await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        lead.abort();
        let joined = tokio::time::timeout(Duration::from_secs(5), join).await;
        assert_eq!(joined.expect("answered").unwrap().unwrap(), "joiner");
        assert!(flights.running.lock().unwrap().is_empty(), "none kept");
    }

    /// An outcome that counts its copies.
    #[derive(Debug)]
    struct Counted(Arc<AtomicUsize>);

    impl Clone for Counted {
        fn clone(&self) -> Self {
            self.0.fetch_add(1, Ordering::SeqCst);
            Counted(self.0.clone())
        }
    }

    #[tokio::test]
    async fn an_outcome_is_copied_only_for_those_waiting_on_it() {
        let flights = InFlight::<Counted>::default();
        let copies = Arc::new(AtomicUsize::new(0));
        let alone = flights.run(key("s-1"), || async { Ok(Counted(copies.clone())) });
        assert!(alone.await.is_ok());
        assert_eq!(copies.load(Ordering::SeqCst), 0, "no one waited");
        let (go, gate) = watch::channel(false);
        let lead = flights.run(key("s-2"), || async {
            let _ = gate.clone().wait_for(|open| *open).await;
            Ok(Counted(copies.clone()))
        });
        // The joiner joins while the lead waits at its gate, opened later.
        let joined = async {
            tokio::task::yield_now().await;
            flights
                .run(key("s-2"), || async { Ok(Counted(copies.clone())) })
                .await
        };
        let open = async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            go.send_replace(true);
        };
        let (lead, joined, ()) = tokio::join!(lead, joined, open);
        assert!(lead.is_ok() && joined.is_ok());
        // One copy sent to the joiner, which takes its own out of the channel.
        assert_eq!(copies.load(Ordering::SeqCst), 2);
        assert!(flights.running.lock().unwrap().is_empty(), "none kept");
    }
}
