//! What a hold ledger's writes cost as the ledger grows. A network's
//! ledger holds an entry per open checkout behind one address (a
//! carrier's or an office's shoppers), and its writes come gathered: a
//! batch is applied through one `Book` (`ledger_writes`), whose cost is
//! the ledger's size once plus each write's own cart and session.
//!
//! `cargo run --release -p storefront-cart --example ledger_batch [entries...]`
//! (default 64 1000 10000). For each size, 256 writes (a checkout counted,
//! then one forgotten, in turn) applied as one batch, and the baseline in
//! the same run: the same writes each applied alone, a book made for each
//! (a batch of one: what every write cost before writes were gathered,
//! and what each costs when none wait).

use std::hint::black_box;
use std::time::{Duration, Instant};

use storefront_cart::hold_limits::HoldLimit;
use storefront_cart::ledger_book::Book;
use storefront_proto::cart::storage::v1::HoldEntry;
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

/// The mean time a write of `ROUNDS` batches, each on the ledger as it
/// was; `alone`: each write through a book of its own.
fn per_write(ledger: &[HoldEntry], writes: &[Write], alone: bool) -> Duration {
    let mut spent = Duration::ZERO;
    for _ in 0..ROUNDS {
        let entries = ledger.to_vec();
        let started = Instant::now();
        if alone {
            let mut entries = entries;
            for write in writes {
                let mut book = Book::new(entries);
                apply(&mut book, write);
                entries = book.into_entries();
            }
            black_box(entries);
        } else {
            let mut book = Book::new(entries);
            for write in writes {
                apply(&mut book, write);
            }
            black_box(book.into_entries());
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
    println!("| entries | a write in a batch of {WRITES} | a write alone | batch / alone |");
    println!("|---|---|---|---|");
    for n in sizes {
        let ledger: Vec<HoldEntry> = (0..n).map(entry).collect();
        let writes = writes(n);
        let batched = per_write(&ledger, &writes, false);
        let alone = per_write(&ledger, &writes, true);
        let ratio = batched.as_secs_f64() / alone.as_secs_f64();
        println!("| {n} | {batched:.2?} | {alone:.2?} | {ratio:.3}x |");
    }
}
