//! The ledger's arithmetic: what counts, what is refused, what a cart
//! checked out again inherits.

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
