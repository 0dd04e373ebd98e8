//! Gathered writes on both stores (a real redis-server): a bound holds
//! however many write at once, from one process or two, and a caller that
//! goes away takes no one else's write with it.

use std::time::Duration;

use storefront_platform::store::Store;
use storefront_platform::testing::RedisServer;
use storefront_proto::cart::storage::v1::{HoldEntry, HoldLedger};
use storefront_proto::catalog::v1::StockLine;

use super::*;

const KEY: &str = "hold-ledger-net:10.0.0.0/24";
const LIMIT: HoldLimit = HoldLimit {
    per_variant: 25,
    total: 1_000,
};

fn reserve_one(n: usize) -> Write {
    Write::Reserve {
        entry: HoldEntry {
            session_id: format!("s{n}"),
            cart_id: format!("c{n}"),
            opened_ms: 1_000,
            until_ms: 0,
            lines: vec![StockLine {
                sku: "LAMP-1".into(),
                quantity: 1,
            }],
        },
        now_ms: 1_000,
        fresh_until: 900_000,
        limit: LIMIT,
    }
}

/// Memory, and a store on a real redis-server (kept running by the second).
async fn stores() -> Vec<(Store, Option<RedisServer>)> {
    let redis = RedisServer::start().expect("redis-server on PATH");
    let store = Store::redis(&redis.url, "test:").await.expect("connect");
    vec![(Store::memory(), None), (store, Some(redis))]
}

async fn entries(store: &Store) -> usize {
    let ledger = store.get_message::<HoldLedger>(KEY).await.unwrap();
    ledger.map_or(0, |l| l.value.entries.len())
}

/// `writes` applied at once, each by its own task: their outcomes.
async fn at_once(writes: &LedgerWrites, all: Vec<Write>) -> Vec<Result<Wrote, Failed>> {
    let tasks: Vec<_> = all
        .into_iter()
        .map(|w| {
            let writes = writes.clone();
            tokio::spawn(async move { writes.apply(KEY.to_string(), w).await })
        })
        .collect();
    let mut outcomes = Vec::new();
    for task in tasks {
        outcomes.push(task.await.unwrap());
    }
    outcomes
}

fn held(outcomes: &[Result<Wrote, Failed>]) -> usize {
    outcomes
        .iter()
        .filter(|o| matches!(o, Ok(Wrote::Held(900_000))))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_bound_holds_for_writes_at_once_and_each_hears_its_own_outcome() {
    for (store, _server) in stores().await {
        let b = store.backend();
        let writes = LedgerWrites::new(store.clone(), Duration::from_secs(60));
        let outcomes = at_once(&writes, (0..40).map(reserve_one).collect()).await;
        assert_eq!(held(&outcomes), 25, "{b}: {outcomes:?}");
        let past = outcomes.iter().filter(|o| {
            matches!(o, Ok(Wrote::Past(e)) if e.sku.as_deref() == Some("LAMP-1") && e.already == 25)
        });
        assert_eq!(past.count(), 15, "{b}: the others, each told the bound");
        assert_eq!(entries(&store).await, 25, "{b}");

        // Ten of those counted forgotten as others count: what is counted
        // is what stays.
        let counted = (0..40).filter(|&n| matches!(outcomes[n], Ok(Wrote::Held(_))));
        let mixed = counted
            .take(10)
            .map(|n| Write::Forget {
                session_id: format!("s{n}"),
            })
            .chain((100..110).map(reserve_one))
            .collect();
        let outcomes = at_once(&writes, mixed).await;
        let forgot = outcomes.iter().filter(|o| matches!(o, Ok(Wrote::Forgot)));
        assert_eq!(forgot.count(), 10, "{b}");
        let now = entries(&store).await;
        assert_eq!(now, 15 + held(&outcomes), "{b}: {outcomes:?}");
        assert!(now <= 25, "{b}: {now} held past the bound");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_replicas_writing_one_ledger_keep_its_bound() {
    let redis = RedisServer::start().expect("redis-server on PATH");
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let store = Store::redis(&redis.url, "test:").await.expect("connect");
        replicas.push(LedgerWrites::new(store, Duration::from_secs(60)));
    }
    let (a, b) = (
        at_once(&replicas[0], (0..30).map(reserve_one).collect()),
        at_once(&replicas[1], (30..60).map(reserve_one).collect()),
    );
    let (a, b) = tokio::join!(a, b);
    assert_eq!(held(&a) + held(&b), 25, "{a:?} {b:?}");
    let store = Store::redis(&redis.url, "test:").await.expect("connect");
    assert_eq!(entries(&store).await, 25);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_caller_gone_takes_no_other_write_with_it() {
    for (store, _server) in stores().await {
        let b = store.backend();
        let writes = LedgerWrites::new(store.clone(), Duration::from_secs(60));
        let tasks: Vec<_> = (0..20)
            .map(|n| {
                let writes = writes.clone();
                tokio::spawn(async move { writes.apply(KEY.to_string(), reserve_one(n)).await })
            })
            .collect();
        // The first callers (one of them leads the first batch) go away.
        for task in &tasks[..5] {
            task.abort();
        }
        let mut answered = 0;
        for task in tasks.into_iter().skip(5) {
            let outcome = task.await.expect("not aborted");
            assert!(matches!(outcome, Ok(Wrote::Held(_))), "{b}: {outcome:?}");
            answered += 1;
        }
        assert_eq!(answered, 15, "{b}");
        let kept = entries(&store).await;
        assert!((15..=20).contains(&kept), "{b}: {kept} entries");
    }
}

/// Writes that wait while one is in flight go in one compare-and-set: on
/// one thread, the 40 callers all queue before the task that writes runs,
/// so the ledger is written once (its version 1), not once a write.
#[tokio::test(flavor = "current_thread")]
async fn writes_that_wait_together_are_written_once() {
    for (store, _server) in stores().await {
        let b = store.backend();
        let writes = LedgerWrites::new(store.clone(), Duration::from_secs(60));
        let outcomes = at_once(&writes, (0..40).map(reserve_one).collect()).await;
        assert_eq!(held(&outcomes), 25, "{b}");
        let stored = store.get(KEY).await.unwrap().expect("written");
        assert_eq!(stored.version, 1, "{b}: one write for the 40");
    }
}
