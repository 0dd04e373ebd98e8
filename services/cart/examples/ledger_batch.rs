//! What a hold ledger's writes cost as the ledger grows. A network's
//! ledger holds an entry per open checkout behind one address (a
//! carrier's or an office's shoppers), and its writes come gathered: a
//! batch is applied through one `Book` (`ledger_writes`), whose cost is
//! each write's own cart and session, and the ledger's size to copy its
//! entries' bytes, each encoded once (and, when the ledger was read
//! rather than kept, to index and encode it).
//!
//! `cargo run --release -p storefront-cart --example ledger_batch [entries...]`
//! (default 64 1000 10000). For each size, 256 writes (a checkout counted,
//! then one forgotten, in turn), each compare-and-set's ledger encoded as
//! the store is sent it: applied as one batch; each alone with the book
//! kept from write to write (`KeptLedger`, as the store's turn keeps it:
//! a batch of one, when no other write waits); and the baseline in the
//! same run, each alone through a book made for it (what a batch of one
//! cost before the book was kept, and what a write read from the store
//! costs).

use std::hint::black_box;
use std::time::{Duration, Instant};

use prost::Message;
use storefront_cart::hold_limits::HoldLimit;
use storefront_cart::ledger_book::Book;
use storefront_cart::ledger_kept::KeptLedger;
use storefront_proto::cart::storage::v1::{HoldEntry, HoldLedger};
use storefront_proto::catalog::v1::StockLine;

const WRITES: usize = 256;
const ROUNDS: usize = 20;
const NOW_MS: i64 = 1_800_000_000_000;
/// Out of reach: every write is checked, none refused.
const LIMIT: HoldLimit = HoldLimit {
    per_variant: u32::MAX,
    total: u32::MAX,
};

fn entry(i: usize) -> HoldEntry {
    HoldEntry {
        session_id: format!("{:08x}-0000-4000-8000-{i:012x}", i * 7919),
        cart_id: format!("{:08x}-0000-4000-9000-{i:012x}", i * 104_729),
        opened_ms: NOW_MS - 1_000 + i as i64,
        until_ms: NOW_MS + 900_000,
        lines: (0..1 + i % 3)
            .map(|l| StockLine {
                sku: format!("SKU-{:05}", (i * 31 + l * 7) % 5_000),
                quantity: 1,
            })
            .collect(),
    }
}

enum Write {
    Reserve(HoldEntry),
    Forget(String),
}

fn writes(entries: usize) -> Vec<Write> {
    (0..WRITES)
        .map(|w| match w % 2 {
            0 => Write::Reserve(entry(entries + w)),
            _ => Write::Forget(entry(w * entries / WRITES).session_id),
        })
        .collect()
}

fn apply(book: &mut Book, write: &Write) {
    match write {
        Write::Reserve(e) => drop(black_box(book.reserve(
            e.clone(),
            NOW_MS,
            NOW_MS + 900_000,
            LIMIT,
        ))),
        Write::Forget(session) => drop(black_box(book.forget(session))),
    }
}

/// How the writes go to the store.
#[derive(Clone, Copy)]
enum Mode {
    /// All in one compare-and-set.
    Batch,
    /// One compare-and-set each, the book kept between them.
    Kept,
    /// One compare-and-set each, a book made for each.
    Made,
}

/// The mean time a write of `ROUNDS` runs of `writes`, each on the
/// ledger as it was, encoded for each compare-and-set.
fn per_write(ledger: &[HoldEntry], writes: &[Write], mode: Mode) -> Duration {
    let mut spent = Duration::ZERO;
    for _ in 0..ROUNDS {
        let stored = HoldLedger {
            entries: ledger.to_vec(),
        }
        .encode_to_vec();
        let mut kept = KeptLedger::decode(stored.as_slice()).expect("a ledger");
        let started = Instant::now();
        match mode {
            Mode::Batch | Mode::Kept => {
                for (i, write) in writes.iter().enumerate() {
                    apply(kept.book(), write);
                    let last = i + 1 == writes.len();
                    if matches!(mode, Mode::Kept) || last {
                        kept.book().tidy();
                        black_box(kept.encode_to_vec());
                    }
                }
            }
            Mode::Made => {
                let mut ledger = HoldLedger::decode(stored.as_slice()).expect("a ledger");
                for write in writes {
                    let mut book = Book::new(std::mem::take(&mut ledger.entries));
                    apply(&mut book, write);
                    ledger.entries = book.into_entries();
                    black_box(ledger.encode_to_vec());
                }
            }
        }
        spent += started.elapsed();
    }
    spent / (ROUNDS * writes.len()) as u32
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("a number of entries"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![64, 1_000, 10_000]
    } else {
        sizes
    };
    println!(
        "| entries | a write in a batch of {WRITES} | a write alone, book kept | a write alone, book made | kept / made |"
    );
    println!("|---|---|---|---|---|");
    for n in sizes {
        let ledger: Vec<HoldEntry> = (0..n).map(entry).collect();
        let writes = writes(n);
        let batched = per_write(&ledger, &writes, Mode::Batch);
        let kept = per_write(&ledger, &writes, Mode::Kept);
        let made = per_write(&ledger, &writes, Mode::Made);
        let ratio = kept.as_secs_f64() / made.as_secs_f64();
        println!("| {n} | {batched:.2?} | {kept:.2?} | {made:.2?} | {ratio:.3}x |");
    }
}
