//! The arithmetic of a hold ledger (`hold_limits`' bounds): a write alone
//! (`reserve`) or a batch of them (`ledger_writes`) applied through a book
//! of its entries, chained by cart and by session, with what every cart's
//! counted entry holds summed by SKU and in all, kept as entries come and
//! go.

use std::collections::hash_map::Entry;
use std::hash::BuildHasher;
use std::sync::OnceLock;

use foldhash::HashMap;
use foldhash::fast::RandomState;
use storefront_proto::cart::storage::v1::{HoldEntry, HoldLedger};
use storefront_proto::catalog::v1::StockLine;

use crate::hold_limits::{Exceeded, GRACE_MS, HoldLimit};

/// `HoldLedger.entries`: the field each entry is stored as.
pub(crate) const ENTRIES: u32 = 1;

/// Adds `entry` to `ledger` if its lines fit `limit` beside what the
/// holder's other carts hold (see [`Book::reserve`]): one write alone.
pub fn reserve(
    ledger: &mut HoldLedger,
    entry: HoldEntry,
    now_ms: i64,
    fresh_until: i64,
    limit: HoldLimit,
) -> Result<i64, Exceeded> {
    let mut book = Book::new(std::mem::take(&mut ledger.entries));
    let reserved = book.reserve(entry, now_ms, fresh_until, limit);
    ledger.entries = book.into_entries();
    reserved
}

/// A ledger's entries as writes change them, chained by cart and by
/// session, with what every cart's counted entry (its newest session's)
/// holds summed by SKU and in all, kept as entries come and go. A write
/// costs what its own cart and session hold, not the ledger: a network's
/// ledger holds an entry per open checkout behind one address, and its
/// writes come gathered (up to 256 at once, `ledger_writes`), so
/// recounting the whole ledger for each write made a batch cost its size
/// times the ledger's. Making a book costs a hash of each entry's cart and
/// session and no allocation an entry. Kept between writes too
/// (`ledger_kept`): then a write costs what it touches, not the ledger,
/// and each entry is encoded once however many writes store it (`wire`).
#[derive(Clone)]
pub struct Book {
    /// In the ledger's order; a removed entry leaves `None`.
    slots: Vec<Option<HoldEntry>>,
    /// Each slot's entry as the ledger stores it (field and length
    /// first), made the first time it is stored: entries never change
    /// in place, so a kept book's next write copies these bytes rather
    /// than encoding every entry of the ledger again (at one allocation an
    /// entry the first time, where one encoding of the ledger had one).
    wire: Vec<OnceLock<Vec<u8>>>,
    /// Slots left `None` (`tidy` drops them).
    holes: usize,
    /// Each slot's successor in its cart's chain and in its session's.
    next_of_cart: Vec<usize>,
    next_of_session: Vec<usize>,
    /// The chains, by the hash of their cart or session.
    carts: HashMap<u64, Chain>,
    sessions: HashMap<u64, Chain>,
    hasher: RandomState,
    /// Units of the counted entries, by SKU (`sku_key`; no zeros) and in
    /// all.
    by_sku: HashMap<u128, u64>,
    total: u64,
    /// No entry ends before this (exact when counted; an entry's removal
    /// may leave it early, and the next expiry looks again).
    earliest_end: i64,
}

/// Where a chain ends.
const END: usize = usize::MAX;

/// The slots whose cart (or session) hashes alike, in the ledger's order,
/// linked through `next_of_*`: the first and the last. Walking one skips
/// removed slots and another key of the same hash.
#[derive(Clone, Copy)]
struct Chain {
    first: usize,
    last: usize,
}

impl Book {
    pub fn new(entries: Vec<HoldEntry>) -> Self {
        let n = entries.len() + 1;
        let mut book = Self {
            slots: Vec::with_capacity(n),
            wire: Vec::with_capacity(n),
            holes: 0,
            next_of_cart: Vec::with_capacity(n),
            next_of_session: Vec::with_capacity(n),
            carts: HashMap::with_capacity_and_hasher(n, RandomState::default()),
            sessions: HashMap::with_capacity_and_hasher(n, RandomState::default()),
            hasher: RandomState::default(),
            by_sku: HashMap::with_capacity_and_hasher(n, RandomState::default()),
            total: 0,
            earliest_end: i64::MAX,
        };
        for entry in entries {
            book.index(entry);
        }
        for slot in 0..book.slots.len() {
            let Some(entry) = book.slots[slot].as_ref() else {
                continue;
            };
            let first = book.first_of_cart(&entry.cart_id);
            if newest(&book.slots, &book.next_of_cart, first, &entry.cart_id) == Some(slot) {
                add_units(&mut book.by_sku, &mut book.total, &entry.lines);
            }
        }
        book
    }

    pub fn into_entries(self) -> Vec<HoldEntry> {
        self.slots.into_iter().flatten().collect()
    }

    /// The entries, in the ledger's order (the tests' view: a ledger is
    /// stored through `wire`).
    #[cfg(test)]
    pub(crate) fn entries(&self) -> impl Iterator<Item = &HoldEntry> {
        self.slots.iter().flatten()
    }

    /// The entries as the ledger stores them (each its `ENTRIES` field),
    /// in its order: a `HoldLedger`'s encoding, piece by piece.
    pub fn wire(&self) -> impl Iterator<Item = &[u8]> {
        let slots = self.slots.iter().zip(&self.wire);
        slots.filter_map(|(slot, wire)| {
            let entry = slot.as_ref()?;
            let bytes = wire.get_or_init(|| {
                let mut bytes =
                    Vec::with_capacity(prost::encoding::message::encoded_len(ENTRIES, entry));
                prost::encoding::message::encode(ENTRIES, entry, &mut bytes);
                bytes
            });
            Some(&bytes[..])
        })
    }

    /// Made anew from its entries once removed ones are the most of its
    /// slots: a book kept from write to write stays the size of its
    /// ledger, at the cost of one making per as many removals.
    pub fn tidy(&mut self) {
        if self.holes * 2 > self.slots.len() {
            let entries = std::mem::take(&mut self.slots).into_iter().flatten();
            *self = Self::new(entries.collect());
        }
    }

    /// Adds `entry` if its lines fit `limit` beside what the holder's
    /// other carts hold; drops entries past their end (and the grace)
    /// first. An unset `entry.until_ms` is inherited from a live entry of
    /// the same cart, else `fresh_until`: the entry's end, as added. The
    /// session's earlier entry, if any, is replaced.
    pub fn reserve(
        &mut self,
        mut entry: HoldEntry,
        now_ms: i64,
        fresh_until: i64,
        limit: HoldLimit,
    ) -> Result<i64, Exceeded> {
        self.expire(now_ms);
        let cart = entry.cart_id.as_str();
        let first = self.first_of_cart(cart);
        if entry.until_ms == 0 {
            let own = walk(first, &self.next_of_cart).filter_map(|i| self.slots[i].as_ref());
            let ends = own.filter(|e| e.cart_id == cart).map(|e| e.until_ms);
            entry.until_ms = ends.filter(|&u| u > now_ms).max().unwrap_or(fresh_until);
        }
        // What the other carts hold: the sums less this cart's own.
        let mine = newest(&self.slots, &self.next_of_cart, first, cart);
        let mine = mine.and_then(|i| self.slots[i].as_ref());
        let mine = mine.map_or(&[][..], |e| &e.lines[..]);
        let mine_of = |sku: &str| -> u64 {
            let lines = mine.iter().filter(|l| l.sku == sku);
            lines.map(|l| u64::from(l.quantity)).sum()
        };
        let mut asked_total = 0u64;
        for line in &entry.lines {
            let asked = u64::from(line.quantity);
            asked_total += asked;
            let summed = self.by_sku.get(&sku_key(&line.sku)).copied().unwrap_or(0);
            let already = summed - mine_of(&line.sku);
            if already + asked > u64::from(limit.per_variant) {
                return Err(Exceeded {
                    sku: Some(line.sku.clone()),
                    already,
                    asked,
                    limit: limit.per_variant,
                });
            }
        }
        let already = self.total - mine.iter().map(|l| u64::from(l.quantity)).sum::<u64>();
        if already + asked_total > u64::from(limit.total) {
            return Err(Exceeded {
                sku: None,
                already,
                asked: asked_total,
                limit: limit.total,
            });
        }
        let until = entry.until_ms;
        self.forget(&entry.session_id);
        let cart = entry.cart_id.clone();
        self.count(&cart, false);
        self.index(entry);
        self.count(&cart, true);
        Ok(until)
    }

    /// Drops the session's entries: whether it had any.
    pub fn forget(&mut self, session_id: &str) -> bool {
        let hash = self.hasher.hash_one(session_id);
        let mut slot = self.sessions.get(&hash).map_or(END, |c| c.first);
        let mut found = false;
        while slot != END {
            let next = self.next_of_session[slot];
            let cart = match &self.slots[slot] {
                Some(e) if e.session_id == session_id => e.cart_id.clone(),
                _ => {
                    slot = next;
                    continue;
                }
            };
            self.count(&cart, false);
            self.slots[slot] = None;
            self.wire[slot] = OnceLock::new();
            self.holes += 1;
            self.count(&cart, true);
            found = true;
            slot = next;
        }
        found
    }

    /// Drops the entries past their end and the grace at `now_ms`.
    fn expire(&mut self, now_ms: i64) {
        if self.earliest_end.saturating_add(GRACE_MS) > now_ms {
            return;
        }
        let entries = std::mem::take(&mut self.slots).into_iter().flatten();
        let live = entries.filter(|e| e.until_ms + GRACE_MS > now_ms).collect();
        *self = Self::new(live);
    }

    /// Places `entry` last, chained; counted by the caller.
    fn index(&mut self, entry: HoldEntry) {
        let slot = self.slots.len();
        self.earliest_end = self.earliest_end.min(entry.until_ms);
        let cart = self.hasher.hash_one(entry.cart_id.as_str());
        link(&mut self.carts, &mut self.next_of_cart, cart, slot);
        let session = self.hasher.hash_one(entry.session_id.as_str());
        link(&mut self.sessions, &mut self.next_of_session, session, slot);
        self.slots.push(Some(entry));
        self.wire.push(OnceLock::new());
    }

    fn first_of_cart(&self, cart: &str) -> usize {
        let hash = self.hasher.hash_one(cart);
        self.carts.get(&hash).map_or(END, |c| c.first)
    }

    /// Adds (or takes away) what `cart`'s counted entry holds to the sums.
    fn count(&mut self, cart: &str, add: bool) {
        let first = self.first_of_cart(cart);
        let newest = newest(&self.slots, &self.next_of_cart, first, cart);
        let Some(entry) = newest.and_then(|i| self.slots[i].as_ref()) else {
            return;
        };
        if add {
            add_units(&mut self.by_sku, &mut self.total, &entry.lines);
            return;
        }
        for line in &entry.lines {
            let units = u64::from(line.quantity);
            self.total -= units;
            let key = sku_key(&line.sku);
            if let Some(sum) = self.by_sku.get_mut(&key) {
                *sum -= units;
                if *sum == 0 {
                    self.by_sku.remove(&key);
                }
            }
        }
    }
}

fn add_units(by_sku: &mut HashMap<u128, u64>, total: &mut u64, lines: &[StockLine]) {
    for line in lines {
        let units = u64::from(line.quantity);
        *total += units;
        *by_sku.entry(sku_key(&line.sku)).or_default() += units;
    }
}

/// A SKU as the sums know it: a 128-bit hash, so that a book copies no
/// SKU (as the catalog's feed knows ids and SKUs, `feed/batch.rs`). Two
/// SKUs of one hash would share a sum: a bound reached early, never
/// passed.
fn sku_key(sku: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128(sku.as_bytes())
}

/// Appends `slot` to the chain of `key`.
fn link(chains: &mut HashMap<u64, Chain>, next: &mut Vec<usize>, key: u64, slot: usize) {
    next.push(END);
    match chains.entry(key) {
        Entry::Occupied(mut chain) => {
            next[chain.get().last] = slot;
            chain.get_mut().last = slot;
        }
        Entry::Vacant(chain) => {
            chain.insert(Chain {
                first: slot,
                last: slot,
            });
        }
    }
}

/// The slots of a chain from `first`.
fn walk(first: usize, next: &[usize]) -> impl Iterator<Item = usize> + '_ {
    let first = Some(first).filter(|&s| s != END);
    std::iter::successors(first, |&s| Some(next[s]).filter(|&n| n != END))
}

/// Of `cart`'s entries (its chain from `first`), the slot of the one that
/// counts: the newest session's, the first of those opened at once.
fn newest(slots: &[Option<HoldEntry>], next: &[usize], first: usize, cart: &str) -> Option<usize> {
    let mut newest: Option<(usize, i64)> = None;
    for slot in walk(first, next) {
        let Some(entry) = slots[slot].as_ref().filter(|e| e.cart_id == cart) else {
            continue;
        };
        if newest.is_none_or(|(_, opened)| entry.opened_ms > opened) {
            newest = Some((slot, entry.opened_ms));
        }
    }
    newest.map(|(slot, _)| slot)
}

#[cfg(test)]
#[path = "ledger_book_tests.rs"]
mod tests;
