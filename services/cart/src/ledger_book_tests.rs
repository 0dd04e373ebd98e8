//! A book agrees with the ledger's arithmetic applied one write at a
//! time, whatever the writes.

use storefront_proto::cart::storage::v1::HoldLedger;

use super::*;

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
