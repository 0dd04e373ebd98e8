use storefront_proto::catalog::v1::{Availability, StockLine};

use super::*;
use crate::units::keep_holds;

fn catalog() -> Catalog {
    Catalog::new(crate::generate::generate(60, 3))
}

/// A SKU with stock, and its availability.
fn stocked(c: &Catalog) -> (String, Availability) {
    (0..c.products.len() as u32)
        .filter_map(|row| c.product(row).ok())
        .flat_map(|p| p.variants)
        .find_map(|v| {
            let a = v.availability.filter(|a| a.quantity >= 4)?;
            Some((v.sku, a))
        })
        .expect("a variant with stock")
}

fn shown(c: &Catalog, sku: &str) -> Availability {
    let row = c.skus[&sku_key(sku)];
    let p = c.product(row).unwrap();
    let v = p.variants.into_iter().find(|v| v.sku == sku).unwrap();
    v.availability.unwrap()
}

fn op(id: &str, action: StockAction, sku: &str, quantity: u32, hold: &str) -> AdjustStockRequest {
    AdjustStockRequest {
        operation_id: id.into(),
        action: action as i32,
        lines: vec![StockLine {
            sku: sku.into(),
            quantity,
        }],
        hold_id: hold.into(),
    }
}

/// `req` against `c`: the next version (None: nothing changed) and the
/// answer.
fn run(c: &Catalog, req: &AdjustStockRequest) -> (Option<Catalog>, AdjustStockReply) {
    let mut overlay = Overlay::default();
    let reply = overlay.apply(c, req).unwrap();
    let changes = overlay.into_changes();
    let next = (!changes.is_empty()).then(|| c.apply(changes).unwrap());
    (next, reply)
}

/// `req` applied to `c` as its next version.
fn applied(c: &Catalog, req: &AdjustStockRequest) -> Catalog {
    let (next, reply) = run(c, req);
    assert!(reply.applied, "{} applies: {reply:?}", req.operation_id);
    next.expect("a version")
}

/// Whether `req` is known as a repeat: no version, nothing applied.
fn repeat(c: &Catalog, req: &AdjustStockRequest) -> bool {
    let (next, reply) = run(c, req);
    next.is_none() && !reply.applied && reply.shortages.is_empty()
}

#[test]
fn a_hold_is_sold_or_released_once_and_stock_adds_up() {
    let base = catalog();
    let (sku, at_start) = stocked(&base);
    let q = at_start.quantity;
    let held = applied(&base, &op("h1", StockAction::Hold, &sku, 3, ""));
    assert_eq!(shown(&held, &sku), availability(q - 3, 3));
    assert!(repeat(&held, &op("h1", StockAction::Hold, &sku, 3, "")));
    let released = applied(&held, &op("r1", StockAction::Release, &sku, 3, "h1"));
    assert_eq!(shown(&released, &sku), availability(q, 0));
    let sold = applied(&held, &op("s1", StockAction::Sell, &sku, 3, "h1"));
    assert_eq!(shown(&sold, &sku), availability(q - 3, 0));
    let returned = applied(&sold, &op("ret1", StockAction::Return, &sku, 3, ""));
    assert_eq!(shown(&returned, &sku), availability(q, 0));
    // The shop counts 2 on hand with 3 held: holds are cut to what is there.
    let recount = held
        .apply(vec![Change::Stock(vec![crate::edit::Stock {
            sku: sku.clone(),
            level: crate::edit::Level::Quantity(2),
        }])])
        .unwrap();
    assert_eq!(shown(&recount, &sku), availability(0, 2));
}

#[test]
fn a_hold_short_of_stock_holds_nothing_and_names_what_is_left() {
    let base = catalog();
    let (sku, at_start) = stocked(&base);
    let mut req = op("h1", StockAction::Hold, &sku, 1, "");
    req.lines.push(StockLine {
        sku: sku.clone(),
        quantity: at_start.quantity,
    });
    req.lines.push(StockLine {
        sku: "NO-SUCH-SKU".into(),
        quantity: 1,
    });
    let (next, reply) = run(&base, &req);
    assert!(next.is_none() && !reply.applied, "nothing held");
    let named: Vec<(&str, u32, u32)> = reply
        .shortages
        .iter()
        .map(|s| (s.sku.as_str(), s.requested, s.available))
        .collect();
    let left = at_start.quantity - 1;
    assert_eq!(
        named,
        [
            (sku.as_str(), at_start.quantity, left),
            ("NO-SUCH-SKU", 1, 0)
        ]
    );
}

/// Operations of one batch apply in order against one version: each sees
/// what those before it did, a refused one changes nothing, and a repeat
/// within the batch is known.
#[test]
fn a_batch_applies_in_order_as_one_version() {
    let base = catalog();
    let (sku, at_start) = stocked(&base);
    let q = at_start.quantity;
    let mut overlay = Overlay::default();
    let first = overlay
        .apply(&base, &op("h1", StockAction::Hold, &sku, q - 1, ""))
        .unwrap();
    let short = overlay
        .apply(&base, &op("h2", StockAction::Hold, &sku, 2, ""))
        .unwrap();
    let again = overlay
        .apply(&base, &op("h1", StockAction::Hold, &sku, q - 1, ""))
        .unwrap();
    let last = overlay
        .apply(&base, &op("h3", StockAction::Hold, &sku, 1, ""))
        .unwrap();
    assert!(first.applied && last.applied && !again.applied);
    assert_eq!(short.shortages[0].available, 1, "what the first left");
    let next = base.apply(overlay.into_changes()).unwrap();
    assert_eq!(next.version, base.version + 1, "one version");
    assert_eq!(shown(&next, &sku), availability(0, q));
    assert!(repeat(&next, &op("h3", StockAction::Hold, &sku, 1, "")));
}

/// A release that overtakes its hold settles it: the hold, arriving late,
/// holds nothing.
#[test]
fn a_release_before_its_hold_keeps_the_hold_from_applying() {
    let base = catalog();
    let (sku, at_start) = stocked(&base);
    let released = applied(&base, &op("r1", StockAction::Release, &sku, 2, "h1"));
    assert_eq!(shown(&released, &sku), at_start);
    assert!(repeat(&released, &op("h1", StockAction::Hold, &sku, 2, "")));
}

/// Holds survive the feed text the shared store's snapshots are made of,
/// and a shop's record put over a product keeps them.
#[test]
fn holds_survive_snapshots_and_puts() {
    let base = catalog();
    let (sku, at_start) = stocked(&base);
    let held = applied(&base, &op("h1", StockAction::Hold, &sku, 3, ""));
    let row = held.skus[&sku_key(&sku)];
    let product = held.product(row).unwrap();
    let record = crate::feed::convert::product_record(&product);
    let variant = record.variants.iter().find(|v| v.sku == sku).unwrap();
    assert_eq!(
        (variant.availability.quantity, variant.availability.held),
        (i64::from(at_start.quantity), 3),
        "on hand and held"
    );
    let mut problems = crate::feed::convert::Problems::default();
    let back = crate::feed::convert::product(
        record.clone(),
        product.category_ids.clone(),
        &mut problems,
        storefront_domain::time::now(),
        &storefront_domain::currencies::Currencies::demo(),
    );
    let v = back.variants.iter().find(|v| v.sku == sku).unwrap();
    assert_eq!(
        v.availability.unwrap(),
        availability(at_start.quantity - 3, 3)
    );
    let mut from_shop = back.clone();
    for v in &mut from_shop.variants {
        v.availability = Some(availability(10, 0));
    }
    keep_holds(Some(&product), &mut from_shop);
    let v = from_shop.variants.iter().find(|v| v.sku == sku).unwrap();
    assert_eq!(v.availability.unwrap(), availability(7, 3));
}

/// Twenty holds of one unit each, at once, on five units: five hold.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_holds_never_take_more_than_there_is() {
    let base = catalog();
    let (sku, _) = stocked(&base);
    let five = base
        .apply(vec![Change::Stock(vec![crate::edit::Stock {
            sku: sku.clone(),
            level: crate::edit::Level::Quantity(5),
        }])])
        .unwrap();
    let api = Live::new(five, None);
    let holds = (0..20).map(|i| {
        let (api, sku) = (api.clone(), sku.clone());
        tokio::spawn(async move {
            let req = op(&format!("h{i}"), StockAction::Hold, &sku, 1, "");
            adjust(&api, req).await.unwrap()
        })
    });
    let replies = futures::future::join_all(holds).await;
    let held = replies
        .iter()
        .filter(|r| r.as_ref().unwrap().applied)
        .count();
    assert_eq!(held, 5);
    assert_eq!(shown(&api.read(), &sku), availability(0, 5));
    let short = replies
        .iter()
        .map(|r| r.as_ref().unwrap())
        .filter(|r| !r.applied)
        .all(|r| r.shortages.len() == 1 && r.shortages[0].available == 0);
    assert!(short, "every refused hold says none is left");
}

/// `AdjustStockBatch`: each operation answered as alone (applied, short,
/// a repeat, refused as invalid), all in one version; over the bound, none.
#[tokio::test]
async fn a_batch_call_answers_each_operation_as_alone_in_one_version() {
    let base = catalog();
    let (sku, at_start) = stocked(&base);
    let q = at_start.quantity;
    let api = Live::new(base, None);
    let before = api.read().version;
    let mut empty = op("bad", StockAction::Hold, &sku, 1, "");
    empty.lines.clear();
    let ops = vec![
        op("h1", StockAction::Hold, &sku, q - 1, ""),
        op("h2", StockAction::Hold, &sku, 2, ""),
        empty,
        op("h1", StockAction::Hold, &sku, q - 1, ""),
        op("s1", StockAction::Sell, &sku, q - 1, "h1"),
    ];
    let answers = adjust_all(&api, ops).await.unwrap();
    let [held, short, bad, again, sold] = answers.try_into().unwrap();
    assert!(held.unwrap().applied);
    assert_eq!(short.unwrap().shortages[0].available, 1);
    assert_eq!(bad.unwrap_err().kind, ErrorKind::Validation);
    let again = again.unwrap();
    assert!(!again.applied && again.shortages.is_empty(), "a repeat");
    assert!(sold.unwrap().applied);
    assert_eq!(api.read().version, before + 1, "one version");
    assert_eq!(shown(&api.read(), &sku), availability(1, 0));
    let too_many = vec![op("h9", StockAction::Hold, &sku, 1, ""); MAX_BATCH_OPERATIONS + 1];
    assert!(adjust_all(&api, too_many).await.is_err());
}
