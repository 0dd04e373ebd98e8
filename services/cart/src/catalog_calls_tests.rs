//! Gathered calls against a catalog peer that answers only when let go
//! (each test first takes the kind's slots, `IN_FLIGHT`, with reads of
//! their own): reads waiting on a call go together in the next one, each answered
//! with its own products and never by a call made before it asked; a
//! failed call fails each of its reads, and the next read leads anew;
//! stock operations go in one batch, each with its own outcome, or one by
//! one where the catalog does not serve batches.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use storefront_proto::catalog::v1::AdjustStockOutcome;
use storefront_proto::common::v1::ResourceMeta;
use tokio::sync::Semaphore;

use super::*;

/// A catalog whose every product is at `price` (read when a call is
/// made), each call answered once a permit is given.
struct Held {
    calls: Mutex<Vec<GetProductsRequest>>,
    /// Each stock call: its operations' ids (one when sent alone).
    stock_calls: Mutex<Vec<Vec<String>>>,
    batches_served: AtomicBool,
    batch_tries: AtomicUsize,
    price: AtomicU64,
    fail: AtomicBool,
    permits: Semaphore,
}

impl Default for Held {
    fn default() -> Self {
        Self {
            calls: Mutex::default(),
            stock_calls: Mutex::default(),
            batches_served: AtomicBool::new(true),
            batch_tries: AtomicUsize::new(0),
            price: AtomicU64::default(),
            fail: AtomicBool::default(),
            permits: Semaphore::new(0),
        }
    }
}

impl Held {
    fn calls(&self) -> Vec<GetProductsRequest> {
        self.calls.lock().unwrap().clone()
    }
}

fn product(id: &str, version: u64) -> Product {
    Product {
        meta: Some(ResourceMeta {
            id: id.into(),
            version: version as i64,
            ..Default::default()
        }),
        ..Default::default()
    }
}

impl CatalogPeer for Held {
    fn get_product(&self, _: GetProductRequest) -> Answer<'_, Product> {
        unreachable!("not gathered")
    }

    fn get_products(&self, message: GetProductsRequest) -> Answer<'_, GetProductsResponse> {
        let price = self.price.load(Ordering::SeqCst);
        self.calls.lock().unwrap().push(message.clone());
        Box::pin(async move {
            if message.product_ids.iter().any(|id| id == "stuck") {
                // A replica that never answers (until the call's deadline).
                std::future::pending::<()>().await;
            }
            self.permits.acquire().await.unwrap().forget();
            if self.fail.load(Ordering::SeqCst) {
                return Err(CallError::Status(tonic::Status::unavailable("down")));
            }
            // "missing" is an id the catalog does not have.
            let products = (message.product_ids.iter())
                .filter(|id| *id != "missing")
                .map(|id| product(id, price))
                .collect();
            Ok(GetProductsResponse { products })
        })
    }

    fn adjust_stock(&self, op: AdjustStockRequest) -> Answer<'_, AdjustStockReply> {
        self.stock_calls
            .lock()
            .unwrap()
            .push(vec![op.operation_id.clone()]);
        Box::pin(async move {
            self.permits.acquire().await.unwrap().forget();
            stock_answer(&op).map_err(CallError::Status)
        })
    }

    fn adjust_stock_batch(
        &self,
        message: AdjustStockBatchRequest,
    ) -> Answer<'_, storefront_proto::catalog::v1::AdjustStockBatchReply> {
        let served = self.batches_served.load(Ordering::SeqCst);
        self.batch_tries.fetch_add(1, Ordering::SeqCst);
        if served {
            let ids = message.operations.iter().map(|o| o.operation_id.clone());
            self.stock_calls.lock().unwrap().push(ids.collect());
        }
        Box::pin(async move {
            if !served {
                return Err(CallError::Status(tonic::Status::unimplemented("no")));
            }
            self.permits.acquire().await.unwrap().forget();
            let outcomes = (message.operations.iter())
                .map(|op| match stock_answer(op) {
                    Ok(reply) => AdjustStockOutcome {
                        reply: Some(reply),
                        ..Default::default()
                    },
                    Err(status) => AdjustStockOutcome {
                        reply: None,
                        error: Some(status.into()),
                    },
                })
                .collect();
            Ok(storefront_proto::catalog::v1::AdjustStockBatchReply { outcomes })
        })
    }

    fn list_categories(&self, _: ListCategoriesRequest) -> Answer<'_, ListCategoriesResponse> {
        unreachable!("not gathered")
    }
}

/// An operation named "bad..." is refused; any other applies, its
/// catalog version its position in the alphabet of its id's last letter.
fn stock_answer(op: &AdjustStockRequest) -> Result<AdjustStockReply, tonic::Status> {
    if op.operation_id.starts_with("bad") {
        return Err(tonic::Status::with_details(
            tonic::Code::InvalidArgument,
            "lines must be 1 to 1,000 lines",
            b"violations".to_vec().into(),
        ));
    }
    Ok(AdjustStockReply {
        applied: true,
        shortages: Vec::new(),
        catalog_version: u64::from(op.operation_id.bytes().last().unwrap_or(0)),
    })
}

fn request(ids: &[&str], currency: &str) -> GetProductsRequest {
    GetProductsRequest {
        product_ids: ids.iter().map(|id| id.to_string()).collect(),
        currency_code: currency.into(),
        prices_only: true,
    }
}

type Read = tokio::task::JoinHandle<Result<GetProductsResponse, CallError>>;

fn spawn_read(gathered: &Arc<Gathered>, ids: &[&str], currency: &str) -> Read {
    let (gathered, message) = (gathered.clone(), request(ids, currency));
    tokio::spawn(async move { gathered.get_products(message).await })
}

/// Until the peer has been called `n` times.
async fn calls_reach(peer: &Held, n: usize) {
    for _ in 0..500 {
        if peer.calls().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("{n} calls never came: {:?}", peer.calls());
}

/// Calls of a kind in flight at once while none has waited long.
const IN_FLIGHT: usize = 1;

/// `peer` gathered, a second call opened only past the test's length
/// (but in the test of it).
fn gathered(peer: &Arc<Held>) -> Arc<Gathered> {
    Arc::new(Gathered::stalled_after(
        peer.clone(),
        Duration::from_secs(3600),
    ))
}

/// A read of "a" in flight, in a call of its own.
async fn slots_taken(gathered: &Arc<Gathered>, peer: &Held) -> Vec<Read> {
    let read = spawn_read(gathered, &["a"], "EUR");
    calls_reach(peer, IN_FLIGHT).await;
    vec![read]
}

/// (id, version) of a read's products.
fn got(reply: Result<GetProductsResponse, CallError>) -> Vec<(String, i64)> {
    let products = reply.expect("answered").products;
    (products.into_iter())
        .map(|p| {
            let meta = p.meta.unwrap();
            (meta.id, meta.version)
        })
        .collect()
}

fn pair(id: &str, version: i64) -> (String, i64) {
    (id.to_string(), version)
}

async fn settled(reads: Vec<Read>) -> Vec<Result<GetProductsResponse, CallError>> {
    let mut all = Vec::new();
    for read in reads {
        all.push(read.await.unwrap());
    }
    all
}

/// Until `n` reads wait behind the call in flight (their kind's queue).
async fn waiting_reach(gathered: &Gathered, kind: &str, n: usize) {
    for _ in 0..500 {
        if gathered.reads.waiting(&(kind.to_string(), true)) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("{n} reads never waited");
}

#[tokio::test]
async fn reads_waiting_on_a_call_go_together_in_the_next_each_with_its_own() {
    let peer = Arc::new(Held::default());
    peer.price.store(1, Ordering::SeqCst);
    let gathered = gathered(&peer);
    let first = slots_taken(&gathered, &peer).await;
    // Asked after the first calls were made: at the price of a later one.
    peer.price.store(2, Ordering::SeqCst);
    let others = vec![
        spawn_read(&gathered, &["b", "c"], "EUR"),
        spawn_read(&gathered, &["c", "missing"], "EUR"),
        spawn_read(&gathered, &["d"], "EUR"),
    ];
    waiting_reach(&gathered, "EUR", 3).await;
    peer.permits.add_permits(IN_FLIGHT + 1);
    for answer in settled(first).await {
        assert_eq!(got(answer), vec![pair("a", 1)]);
    }
    let mut answers = settled(others).await.into_iter().map(got);
    assert_eq!(answers.next().unwrap(), vec![pair("b", 2), pair("c", 2)]);
    assert_eq!(answers.next().unwrap(), vec![pair("c", 2)]);
    assert_eq!(answers.next().unwrap(), vec![pair("d", 2)]);
    let calls = peer.calls();
    assert_eq!(calls.len(), IN_FLIGHT + 1, "{calls:?}");
    assert_eq!(calls[IN_FLIGHT].product_ids, ["b", "c", "missing", "d"]);
    assert!(gathered.reads.idle());
}

#[tokio::test]
async fn a_call_stuck_holds_up_no_read_but_its_own() {
    let peer = Arc::new(Held::default());
    let gathered = Arc::new(Gathered::new(peer.clone()));
    let stuck = spawn_read(&gathered, &["stuck"], "EUR");
    calls_reach(&peer, 1).await;
    // Each read past the stall opens a call of its own beside it.
    peer.permits.add_permits(3);
    for id in ["b", "c", "d"] {
        let read = spawn_read(&gathered, &[id], "EUR");
        let answer = tokio::time::timeout(Duration::from_secs(5), read).await;
        assert_eq!(
            got(answer.expect("not held up").unwrap()),
            vec![pair(id, 0)]
        );
    }
    assert!(!stuck.is_finished());
    stuck.abort();
}

#[tokio::test]
async fn reads_of_another_currency_go_apart() {
    let peer = Arc::new(Held::default());
    let gathered = gathered(&peer);
    let euros = spawn_read(&gathered, &["a"], "EUR");
    let dollars = spawn_read(&gathered, &["a"], "USD");
    calls_reach(&peer, 2).await;
    peer.permits.add_permits(2);
    assert_eq!(got(euros.await.unwrap()).len(), 1);
    assert_eq!(got(dollars.await.unwrap()).len(), 1);
    let mut currencies: Vec<_> = peer.calls().into_iter().map(|c| c.currency_code).collect();
    currencies.sort();
    assert_eq!(currencies, ["EUR", "USD"]);
}

#[tokio::test]
async fn a_call_goes_with_no_more_ids_than_the_catalog_takes() {
    let peer = Arc::new(Held::default());
    let gathered = gathered(&peer);
    let first = slots_taken(&gathered, &peer).await;
    let many: Vec<String> = (0..MAX_BATCH_PRODUCTS).map(|i| format!("p{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    let big = spawn_read(&gathered, &many, "EUR");
    waiting_reach(&gathered, "EUR", 1).await;
    let after = spawn_read(&gathered, &["b"], "EUR");
    waiting_reach(&gathered, "EUR", 2).await;
    peer.permits.add_permits(IN_FLIGHT + 2);
    settled(first).await;
    let answers = settled(vec![big, after]).await;
    let sizes: Vec<usize> = answers.into_iter().map(|a| got(a).len()).collect();
    assert_eq!(sizes, [MAX_BATCH_PRODUCTS, 1]);
    let mut sent: Vec<usize> = peer.calls()[IN_FLIGHT..]
        .iter()
        .map(|c| c.product_ids.len())
        .collect();
    sent.sort();
    assert_eq!(sent, [1, MAX_BATCH_PRODUCTS], "each in a call of its own");
}

#[tokio::test]
async fn a_failed_call_fails_each_of_its_reads_and_the_next_leads_anew() {
    let peer = Arc::new(Held::default());
    let gathered = gathered(&peer);
    let mut all = slots_taken(&gathered, &peer).await;
    all.push(spawn_read(&gathered, &["b"], "EUR"));
    all.push(spawn_read(&gathered, &["c"], "EUR"));
    waiting_reach(&gathered, "EUR", 2).await;
    peer.fail.store(true, Ordering::SeqCst);
    peer.permits.add_permits(IN_FLIGHT + 1);
    for answer in settled(all).await {
        let Err(CallError::Status(status)) = answer else {
            panic!("not the call's error: {answer:?}");
        };
        assert_eq!(status.code(), tonic::Code::Unavailable);
    }
    peer.fail.store(false, Ordering::SeqCst);
    peer.permits.add_permits(1);
    let again = spawn_read(&gathered, &["a"], "EUR").await.unwrap();
    assert_eq!(got(again), vec![pair("a", 0)]);
    assert_eq!(peer.calls().len(), IN_FLIGHT + 2);
    assert!(gathered.reads.idle());
}

#[tokio::test]
async fn a_reader_gone_takes_no_one_elses_read_with_it() {
    let peer = Arc::new(Held::default());
    let gathered = gathered(&peer);
    let first = slots_taken(&gathered, &peer).await;
    first.iter().for_each(|read| read.abort());
    let second = spawn_read(&gathered, &["b"], "EUR");
    waiting_reach(&gathered, "EUR", 1).await;
    peer.permits.add_permits(IN_FLIGHT + 1);
    assert_eq!(got(second.await.unwrap()), vec![pair("b", 0)]);
}

fn stock_op(id: &str) -> AdjustStockRequest {
    AdjustStockRequest {
        operation_id: id.into(),
        action: storefront_proto::catalog::v1::StockAction::Hold as i32,
        ..Default::default()
    }
}

type StockCall = tokio::task::JoinHandle<Result<AdjustStockReply, CallError>>;

fn spawn_stock(gathered: &Arc<Gathered>, id: &str) -> StockCall {
    let (gathered, op) = (gathered.clone(), stock_op(id));
    tokio::spawn(async move { gathered.adjust_stock(op).await })
}

/// Until `n` stock operations wait behind the call in flight.
async fn stock_waiting_reach(gathered: &Gathered, n: usize) {
    for _ in 0..500 {
        if gathered.stock.waiting(&()) >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("{n} operations never waited");
}

/// The version each applied operation answered, or its error's code and
/// message.
async fn stock_outcomes(calls: Vec<StockCall>) -> Vec<Result<u64, (tonic::Code, String)>> {
    let mut all = Vec::new();
    for call in calls {
        all.push(match call.await.unwrap() {
            Ok(reply) => Ok(reply.catalog_version),
            Err(CallError::Status(s)) => {
                assert_eq!(s.details(), b"violations", "the details kept");
                Err((s.code(), s.message().to_string()))
            }
            Err(e) => panic!("not the catalog's answer: {e:?}"),
        });
    }
    all
}

#[tokio::test]
async fn stock_operations_waiting_go_in_one_batch_each_with_its_own_outcome() {
    let peer = Arc::new(Held::default());
    let gathered = gathered(&peer);
    let first = spawn_stock(&gathered, "opa");
    stock_calls_reach(&peer, 1).await;
    let others = vec![
        spawn_stock(&gathered, "opb"),
        spawn_stock(&gathered, "bad"),
        spawn_stock(&gathered, "opc"),
    ];
    stock_waiting_reach(&gathered, 3).await;
    peer.permits.add_permits(IN_FLIGHT + 1);
    assert_eq!(stock_outcomes(vec![first]).await, [Ok(u64::from(b'a'))]);
    let all = others;
    let refused = Err((
        tonic::Code::InvalidArgument,
        "lines must be 1 to 1,000 lines".to_string(),
    ));
    let versions = |c: u8| Ok(u64::from(c));
    assert_eq!(
        stock_outcomes(all).await,
        vec![versions(b'b'), refused, versions(b'c')]
    );
    let calls = peer.stock_calls.lock().unwrap().clone();
    assert_eq!(calls, vec![vec!["opa"], vec!["opb", "bad", "opc"]]);
    assert!(gathered.stock.idle());
}

#[tokio::test]
async fn stock_operations_go_one_by_one_where_batches_are_not_served() {
    let peer = Arc::new(Held::default());
    peer.batches_served.store(false, Ordering::SeqCst);
    let gathered = gathered(&peer);
    // Twice: the second time no batch is tried.
    for (i, round) in ["x", "y"].into_iter().enumerate() {
        let first = spawn_stock(&gathered, &format!("{round}a"));
        stock_calls_reach(&peer, 3 * i + 1).await;
        let others = vec![
            spawn_stock(&gathered, &format!("{round}b")),
            spawn_stock(&gathered, &format!("{round}c")),
        ];
        stock_waiting_reach(&gathered, 2).await;
        peer.permits.add_permits(3);
        let mut all = vec![first];
        all.extend(others);
        let outcomes = stock_outcomes(all).await;
        let versions: Vec<_> = b"abc".iter().map(|&c| Ok(u64::from(c))).collect();
        assert_eq!(outcomes, versions);
    }
    let calls = peer.stock_calls.lock().unwrap().clone();
    assert!(calls.iter().all(|c| c.len() == 1), "{calls:?}");
    assert_eq!(calls.len(), 6);
    assert_eq!(peer.batch_tries.load(Ordering::SeqCst), 1);
}

/// Until the peer has had `n` stock calls.
async fn stock_calls_reach(peer: &Held, n: usize) {
    for _ in 0..500 {
        if peer.stock_calls.lock().unwrap().len() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    panic!("{n} stock calls never came");
}
