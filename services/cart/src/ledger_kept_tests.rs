//! A ledger kept indexed from write to write: stored as a `HoldLedger`
//! is, read back as one, and its writes come out as those of a book made
//! anew for each.

use prost::Message;
use storefront_proto::cart::storage::v1::{HoldEntry, HoldLedger};
use storefront_proto::catalog::v1::StockLine;

use super::*;
use crate::hold_limits::HoldLimit;

const LIMIT: HoldLimit = HoldLimit {
    per_variant: 6,
    total: 14,
};

fn entry(n: u64) -> HoldEntry {
    HoldEntry {
        session_id: format!("s{}", n % 211),
        cart_id: format!("c{}", n % 7),
        opened_ms: n as i64 * 1_000,
        until_ms: 0,
        lines: vec![StockLine {
            sku: format!("SKU-{}", n % 3),
            quantity: (n % 4 + 1) as u32,
        }],
    }
}

/// The `n`th of a run of writes to both: a reserve, or a forget of a
/// session reserved earlier; each one's outcome, as text.
fn write(n: u64, kept: &mut Book, fresh: &mut HoldLedger) -> (String, String) {
    // A write every second, entries ending 50 s after they start: past
    // the grace (`GRACE_MS`), some expire on the way.
    let now = n as i64 * 1_000;
    let until = now + 50_000;
    let mut made = Book::new(std::mem::take(&mut fresh.entries));
    let outcomes = if n % 3 == 2 {
        let session = format!("s{}", (n * 7) % 211);
        (
            format!("{:?}", kept.forget(&session)),
            format!("{:?}", made.forget(&session)),
        )
    } else {
        (
            format!("{:?}", kept.reserve(entry(n), now, until, LIMIT)),
            format!("{:?}", made.reserve(entry(n), now, until, LIMIT)),
        )
    };
    kept.tidy();
    fresh.entries = made.into_entries();
    outcomes
}

#[test]
fn a_kept_book_writes_as_a_book_made_for_each_write() {
    let mut kept = KeptLedger::default();
    let mut fresh = HoldLedger::default();
    let mut seen = std::collections::BTreeSet::new();
    for n in 0..600 {
        let (a, b) = write(n, kept.book(), &mut fresh);
        assert_eq!(a, b, "write {n}");
        seen.insert(a.split('(').next().unwrap_or_default().to_string());
        // Each entry's bytes are kept from the write that first stored it.
        assert_eq!(
            kept.encode_to_vec(),
            fresh.encode_to_vec(),
            "entries after write {n}"
        );
        assert_eq!(kept.encoded_len(), fresh.encoded_len(), "write {n}");
    }
    // Some expired: at most the last 170 s of writes are held (a session
    // comes back every 211 writes).
    assert!(
        (1..=170).contains(&fresh.entries.len()),
        "{}",
        fresh.entries.len()
    );
    // Held, refused, forgotten and not found: every kind of outcome.
    let kinds: Vec<_> = seen.into_iter().collect();
    assert_eq!(kinds, ["Err", "Ok", "false", "true"]);
}

#[test]
fn it_is_stored_and_read_as_a_hold_ledger() {
    let ledger = HoldLedger {
        entries: (0..9).map(entry).collect(),
    };
    let bytes = ledger.encode_to_vec();
    let mut kept = KeptLedger::decode(bytes.as_slice()).expect("decodes");
    assert_eq!(kept.encode_to_vec(), bytes, "decoded, not indexed");
    assert_eq!(kept.encoded_len(), bytes.len());
    kept.book().forget("s4");
    let read = HoldLedger::decode(kept.encode_to_vec().as_slice()).expect("a ledger");
    let left: Vec<_> = ledger
        .entries
        .into_iter()
        .filter(|e| e.session_id != "s4")
        .collect();
    assert_eq!(read.entries, left, "indexed, one entry forgotten");
    assert_eq!(kept.encoded_len(), kept.encode_to_vec().len());
    // Merged into once indexed (a decode into a kept value): both sets.
    kept.merge(bytes.as_slice()).expect("merges");
    assert_eq!(kept.book().entries().count(), 8 + 9);
    assert_eq!(KeptLedger::default().encode_to_vec(), Vec::<u8>::new());
}
