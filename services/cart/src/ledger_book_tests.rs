//! The ledger's arithmetic: what counts, what is refused, what a cart
//! checked out again inherits; and a book agrees with it applied one
//! write at a time, whatever the writes.

use super::*;

fn entry(session: &str, cart: &str, opened: i64, lines: &[(&str, u32)]) -> HoldEntry {
    HoldEntry {
        session_id: session.into(),
        cart_id: cart.into(),
        opened_ms: opened,
        until_ms: 0,
        lines: lines
            .iter()
            .map(|(sku, quantity)| StockLine {
                sku: (*sku).into(),
                quantity: *quantity,
            })
            .collect(),
    }
}

const LIMIT: HoldLimit = HoldLimit {
    per_variant: 10,
    total: 15,
};

#[test]
fn carts_count_together_per_variant_and_in_all() {
    let mut ledger = HoldLedger::default();
    assert!(
        reserve(
            &mut ledger,
            entry("s1", "c1", 0, &[("a", 6)]),
            0,
            100,
            LIMIT
        )
        .is_ok()
    );
    let past = reserve(
        &mut ledger,
        entry("s2", "c2", 1, &[("a", 5)]),
        1,
        100,
        LIMIT,
    );
    assert_eq!(
        past,
        Err(Exceeded {
            sku: Some("a".into()),
            already: 6,
            asked: 5,
            limit: 10
        })
    );
    assert!(
        reserve(
            &mut ledger,
            entry("s2", "c2", 1, &[("a", 4), ("b", 5)]),
            1,
            100,
            LIMIT
        )
        .is_ok()
    );
    let total = reserve(
        &mut ledger,
        entry("s3", "c3", 2, &[("c", 1)]),
        2,
        100,
        LIMIT,
    );
    assert_eq!(total.map_err(|e| (e.sku, e.already)), Err((None, 15)));
    assert_eq!(ledger.entries.len(), 2, "a refusal counts nothing");
}

#[test]
fn a_cart_checked_out_again_counts_once_and_keeps_its_end() {
    let mut ledger = HoldLedger::default();
    let first = reserve(
        &mut ledger,
        entry("s1", "c1", 0, &[("a", 10)]),
        0,
        1_000,
        LIMIT,
    );
    assert_eq!(first, Ok(1_000));
    // The same cart again, later: not twice the units, not a new end.
    let again = reserve(
        &mut ledger,
        entry("s2", "c1", 500, &[("a", 10)]),
        500,
        1_500,
        LIMIT,
    );
    assert_eq!(again, Ok(1_000));
    // Another cart sees the newest session of c1 only.
    let other = reserve(
        &mut ledger,
        entry("s3", "c2", 600, &[("b", 5)]),
        600,
        1_600,
        LIMIT,
    );
    assert_eq!(other, Ok(1_600));
    // Past its end and the grace, an entry no longer counts, and the
    // cart's next session starts a fresh window.
    let late = 1_000 + GRACE_MS + 1;
    let fresh = reserve(
        &mut ledger,
        entry("s4", "c1", late, &[("a", 10)]),
        late,
        late + 900,
        LIMIT,
    );
    assert_eq!(fresh, Ok(late + 900));
    assert_eq!(ledger.entries.len(), 2);
}

/// The ledger's arithmetic as it was first written, one write at a time,
/// recounting the whole ledger for each: the specification a [`Book`]
/// must agree with.
mod one_by_one {
    use std::collections::BTreeMap;

    use super::*;

    fn counted<'a>(ledger: &'a HoldLedger, cart_id: &str) -> (BTreeMap<&'a str, u64>, u64) {
        let mut newest: BTreeMap<&str, &HoldEntry> = BTreeMap::new();
        for e in ledger.entries.iter().filter(|e| e.cart_id != cart_id) {
            let slot = newest.entry(e.cart_id.as_str()).or_insert(e);
            if e.opened_ms > slot.opened_ms {
                *slot = e;
            }
        }
        let mut by_sku = BTreeMap::new();
        let mut total = 0u64;
        for line in newest.values().flat_map(|e| &e.lines) {
            *by_sku.entry(line.sku.as_str()).or_default() += u64::from(line.quantity);
            total += u64::from(line.quantity);
        }
        (by_sku, total)
    }

    pub fn reserve(
        ledger: &mut HoldLedger,
        mut entry: HoldEntry,
        now_ms: i64,
        fresh_until: i64,
        limit: HoldLimit,
    ) -> Result<i64, Exceeded> {
        ledger.entries.retain(|e| e.until_ms + GRACE_MS > now_ms);
        if entry.until_ms == 0 {
            let inherited = ledger
                .entries
                .iter()
                .filter(|e| e.cart_id == entry.cart_id && e.until_ms > now_ms)
                .map(|e| e.until_ms)
                .max();
            entry.until_ms = inherited.unwrap_or(fresh_until);
        }
        let (by_sku, total) = counted(ledger, &entry.cart_id);
        let mut asked_total = 0u64;
        for line in &entry.lines {
            let asked = u64::from(line.quantity);
            asked_total += asked;
            let already = by_sku.get(line.sku.as_str()).copied().unwrap_or(0);
            if already + asked > u64::from(limit.per_variant) {
                return Err(Exceeded {
                    sku: Some(line.sku.clone()),
                    already,
                    asked,
                    limit: limit.per_variant,
                });
            }
        }
        if total + asked_total > u64::from(limit.total) {
            return Err(Exceeded {
                sku: None,
                already: total,
                asked: asked_total,
                limit: limit.total,
            });
        }
        let until = entry.until_ms;
        ledger.entries.retain(|e| e.session_id != entry.session_id);
        ledger.entries.push(entry);
        Ok(until)
    }
}

mod book_agrees {
    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Reserve(HoldEntry, i64, i64),
        Forget(String),
    }

    fn line() -> impl Strategy<Value = StockLine> {
        (0..3u8, 1..7u32).prop_map(|(sku, quantity)| StockLine {
            sku: format!("sku{sku}"),
            quantity,
        })
    }

    /// Few carts, sessions and SKUs, so that they meet: a cart's sessions
    /// opened at the same moment, ends near the grace, bounds reached.
    fn held() -> impl Strategy<Value = HoldEntry> {
        let lines = proptest::collection::vec(line(), 0..4);
        (0..8u8, 0..4u8, 0..4i64, 0..3i64, lines).prop_map(|(s, c, opened, until, lines)| {
            HoldEntry {
                session_id: format!("s{s}"),
                cart_id: format!("c{c}"),
                opened_ms: opened * 1_000,
                until_ms: until * 100_000,
                lines,
            }
        })
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => (held(), any::<bool>(), 0..5i64, 0..5i64).prop_map(|(mut e, inherit, now, fresh)| {
                if inherit {
                    e.until_ms = 0;
                }
                Op::Reserve(e, now * 100_000, now * 100_000 + fresh * 50_000)
            }),
            1 => (0..8u8).prop_map(|s| Op::Forget(format!("s{s}"))),
        ]
    }

    proptest! {
        /// A batch through one book: each write's outcome and the ledger
        /// after, entry for entry, as applying them one by one.
        #[test]
        fn as_one_write_at_a_time(
            start in proptest::collection::vec(held(), 0..12),
            ops in proptest::collection::vec(op(), 1..40),
            per_variant in 1..20u32,
            total in 1..40u32,
        ) {
            let limit = HoldLimit { per_variant, total };
            let mut ledger = HoldLedger { entries: start.clone() };
            let mut book = Book::new(start);
            for op in ops {
                match op {
                    Op::Reserve(entry, now, fresh) => {
                        let expected = one_by_one::reserve(&mut ledger, entry.clone(), now, fresh, limit);
                        prop_assert_eq!(book.reserve(entry, now, fresh, limit), expected);
                    }
                    Op::Forget(session) => {
                        let before = ledger.entries.len();
                        ledger.entries.retain(|e| e.session_id != session);
                        prop_assert_eq!(book.forget(&session), ledger.entries.len() != before);
                    }
                }
            }
            prop_assert_eq!(book.into_entries(), ledger.entries);
        }
    }
}

#[test]
fn a_book_kept_from_write_to_write_stays_the_size_of_its_ledger() {
    let mut book = Book::new(Vec::new());
    for n in 0..1_000i64 {
        let session = format!("s{n}");
        let lines = [("a", 1)];
        let held = book.reserve(
            entry(&session, &format!("c{n}"), n, &lines),
            n,
            n + 10_000,
            LIMIT,
        );
        assert!(held.is_ok(), "{n}");
        assert!(book.forget(&session));
        book.tidy();
        assert!(
            book.slots.len() <= 2,
            "{} slots after {n} writes",
            book.slots.len()
        );
    }
    assert_eq!(book.entries().count(), 0);
    assert_eq!((book.total, book.by_sku.len()), (0, 0));
}
