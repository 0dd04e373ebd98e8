//! What a search reads of each document of a segment: its row, its place
//! in the relevance tie order and its facet values.

use std::sync::Arc;

use storefront_domain::currencies::MAX_CURRENCIES;

use super::{Counts, FacetRow, FacetRows, Packed, Rank, blank};

/// What a search reads of each document of one segment, in document
/// order (the order it finds hits in), so it reads front to back. Apart,
/// not side by side: counting every match (most of a broad search's
/// time) reads only the facet values, 12 bytes a document when ranks fit
/// in u16; rows and tie places are read for the page's candidates, and
/// rows for every match only under filters or deletions. Each part is
/// shared between index versions: a step that moves only stock and prices
/// copies the values alone (`restocked`).
#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
pub struct SegmentDocs {
    /// Each document's row (`u32::MAX`: none, or deleted).
    rows: Arc<[u32]>,
    /// Each document's place in the tie order.
    ties: Arc<[u32]>,
    values: Arc<Values>,
    /// Whether its documents with a row are in tie order: of two equally
    /// relevant matches, the one met first ranks first.
    ordered: bool,
    /// Whether every document has a row (none deleted).
    complete: bool,
    /// One bit a document with a row, when some have none (deleted by a
    /// change): what a count masks its matches with.
    alive: Option<Arc<[u64]>>,
}

#[derive(Clone)]
#[cfg_attr(test, derive(Debug, PartialEq))]
enum Values {
    Narrow(Box<[FacetRow<u16>]>),
    Wide(Box<[FacetRow<u32>]>),
}

fn values<R: Rank>(by_row: &[FacetRow<R>], rows: &[u32]) -> Box<[FacetRow<R>]> {
    rows.iter()
        .map(|&row| by_row.get(row as usize).copied().unwrap_or_else(blank))
        .collect()
}

/// Hits a search reads the entries of at once (`SegmentDocs::take`).
pub const BATCH: usize = 64;

/// Of `hits` (at most `BATCH`, with scores), those with a row that `keep`
/// keeps: counted and given to `take(row, tie, score)`; the number kept.
fn take<R: Rank>(
    docs: &SegmentDocs,
    values: &[FacetRow<R>],
    hits: &[(u32, f32)],
    counts: &mut Counts,
    keep: impl Fn(u32) -> bool,
    mut take: impl FnMut(u32, u32, f32),
) -> u64 {
    // Read every row before using any: independent loads, so their cache
    // misses overlap rather than wait on each other (one miss a hit was
    // half of a search's time at 1,000,000 products).
    let mut rows = [u32::MAX; BATCH];
    for (slot, &(doc, _)) in rows.iter_mut().zip(hits) {
        *slot = docs.rows.get(doc as usize).copied().unwrap_or(u32::MAX);
    }
    let mut kept = 0;
    for (&row, &(doc, score)) in rows.iter().zip(hits) {
        if row == u32::MAX || !keep(row) {
            continue;
        }
        let (Some(v), Some(&tie)) = (values.get(doc as usize), docs.ties.get(doc as usize)) else {
            continue;
        };
        kept += 1;
        counts.add(v);
        take(row, tie, score);
    }
    kept
}

/// Of `docs` (at most `BATCH`), those with a row that `keep` keeps (None:
/// every one), counted; the number counted.
fn count<R: Rank>(
    segment: &SegmentDocs,
    values: &[FacetRow<R>],
    docs: &[u32],
    counts: &mut Counts,
    keep: Option<&dyn Fn(u32) -> bool>,
) -> u64 {
    let mut read = [blank::<R>(); BATCH];
    let mut n = 0;
    match keep {
        // Every document has a row and no filter: only the values are read.
        None if segment.complete => {
            for &doc in docs {
                if let Some(&v) = values.get(doc as usize) {
                    read[n] = v;
                    n += 1;
                }
            }
        }
        _ => {
            let keep = keep.unwrap_or(&|_| true);
            for &doc in docs {
                let row = segment.rows.get(doc as usize).copied().unwrap_or(u32::MAX);
                if row != u32::MAX
                    && keep(row)
                    && let Some(&v) = values.get(doc as usize)
                {
                    read[n] = v;
                    n += 1;
                }
            }
        }
    }
    for v in &read[..n] {
        counts.add(v);
    }
    n as u64
}

/// Every document set in `bits` (one word of bits a 64 documents, in
/// order) counted by its values alone; the number counted.
fn count_set<R: Rank>(
    values: &[FacetRow<R>],
    bits: impl Iterator<Item = u64>,
    counts: &mut Counts,
) -> u64 {
    let mut total = 0;
    for (values, word) in values.chunks(64).zip(bits) {
        let mut word = word;
        // Each load's address is known from the bits alone, so the loads
        // of a word's documents overlap without a batch.
        while word != 0 {
            if let Some(v) = values.get(word.trailing_zeros() as usize) {
                counts.add(v);
                total += 1;
            }
            word &= word - 1;
        }
    }
    total
}

/// `words` with only the bits `alive` has.
fn masked<'a>(
    words: impl Iterator<Item = u64> + 'a,
    alive: &'a [u64],
) -> impl Iterator<Item = u64> + 'a {
    words.zip(alive).map(|(word, alive)| word & alive)
}

/// One bit a document whose row is not `u32::MAX`.
fn alive_bits(rows: &[u32]) -> Arc<[u64]> {
    let mut bits = vec![0u64; rows.len().div_ceil(64)];
    for (doc, _) in rows.iter().enumerate().filter(|(_, row)| **row != u32::MAX) {
        set(&mut bits, doc as u32);
    }
    bits.into()
}

/// Sets bit `at` of `bits` (which has room for it).
pub(super) fn set(bits: &mut [u64], at: u32) {
    bits[at as usize / 64] |= 1 << (at % 64);
}

/// Whether bit `at` of `bits` is set.
pub(super) fn is_set(bits: &[u64], at: u32) -> bool {
    bits.get(at as usize / 64)
        .is_some_and(|word| word >> (at % 64) & 1 == 1)
}

/// `values` with the stock and price of each document in `docs` (its
/// place and its row) as `stock_bucket(row)` says.
fn restock<R: Rank>(
    values: &mut [FacetRow<R>],
    docs: &[(usize, u32)],
    stock_bucket: &impl Fn(u32) -> [u8; MAX_CURRENCIES],
) {
    for &(doc, row) in docs {
        if let Some(value) = values.get_mut(doc) {
            value.stock_bucket = stock_bucket(row);
        }
    }
}

impl SegmentDocs {
    /// Every document set in `bits` that has a row counted into
    /// `counts`, by values alone (for a search without filters: no row is
    /// read, deleted documents masked out word by word); the number
    /// counted.
    pub fn count_all(&self, bits: &[u64], counts: &mut Counts) -> u64 {
        let words = bits.iter().copied();
        match (&*self.values, &self.alive) {
            (Values::Narrow(values), None) => count_set(values, words, counts),
            (Values::Wide(values), None) => count_set(values, words, counts),
            (Values::Narrow(values), Some(alive)) => {
                count_set(values, masked(words, alive), counts)
            }
            (Values::Wide(values), Some(alive)) => count_set(values, masked(words, alive), counts),
        }
    }

    /// Of `hits` (documents of this segment with their scores, at most
    /// `BATCH`), those with a row that `keep(row)` keeps: counted into
    /// `counts` and given to `hit(row, tie, score)`. The number kept.
    #[inline]
    pub fn take(
        &self,
        hits: &[(u32, f32)],
        counts: &mut Counts,
        keep: impl Fn(u32) -> bool,
        hit: impl FnMut(u32, u32, f32),
    ) -> u64 {
        match &*self.values {
            Values::Narrow(values) => take(self, values, hits, counts, keep, hit),
            Values::Wide(values) => take(self, values, hits, counts, keep, hit),
        }
    }

    /// Of `docs` (at most `BATCH`), those with a row that `keep(row)`
    /// keeps (None: every one) counted into `counts`; the number counted.
    #[inline]
    pub fn count(
        &self,
        docs: &[u32],
        counts: &mut Counts,
        keep: Option<&dyn Fn(u32) -> bool>,
    ) -> u64 {
        match &*self.values {
            Values::Narrow(values) => count(self, values, docs, counts, keep),
            Values::Wide(values) => count(self, values, docs, counts, keep),
        }
    }

    /// The row and tie place of document `doc` (None: a document
    /// without a row).
    #[inline]
    pub fn entry(&self, doc: u32) -> Option<(u32, u32)> {
        let row = *self.rows.get(doc as usize)?;
        let tie = *self.ties.get(doc as usize)?;
        (row != u32::MAX).then_some((row, tie))
    }

    /// Whether its documents are in tie order (see `ordered`).
    pub fn ordered(&self) -> bool {
        self.ordered
    }

    /// This segment with the stock and price of the rows set in `changed`
    /// as `stock_bucket(row)` says; everything else shared. Reads every
    /// document's row (a few milliseconds at 1,000,000) and copies the
    /// values when one of them changed.
    pub(super) fn restocked(
        &self,
        changed: &[u64],
        stock_bucket: impl Fn(u32) -> [u8; MAX_CURRENCIES],
    ) -> SegmentDocs {
        let docs: Vec<(usize, u32)> = (self.rows.iter().enumerate())
            .filter(|(_, row)| **row != u32::MAX && is_set(changed, **row))
            .map(|(doc, &row)| (doc, row))
            .collect();
        let mut next = self.clone();
        if docs.is_empty() {
            return next;
        }
        match Arc::make_mut(&mut next.values) {
            Values::Narrow(values) => restock(values, &docs, &stock_bucket),
            Values::Wide(values) => restock(values, &docs, &stock_bucket),
        }
        next
    }
}

impl FacetRows {
    /// What a search reads of each document of a segment whose documents
    /// have the rows `rows` (`u32::MAX`: none), `tie_order` each row's
    /// place in the tie order.
    pub fn for_segment(&self, rows: Box<[u32]>, tie_order: &[u32]) -> SegmentDocs {
        let len = match &self.packed {
            Packed::Narrow(by_row) => by_row.len(),
            Packed::Wide(by_row) => by_row.len(),
        };
        let rows = rows_of(rows, len);
        let values = match &self.packed {
            Packed::Narrow(by_row) => Values::Narrow(values(by_row, &rows)),
            Packed::Wide(by_row) => Values::Wide(values(by_row, &rows)),
        };
        SegmentDocs::new(rows, tie_order, values)
    }
}

/// `rows` with each row past `len` none.
fn rows_of(mut rows: Box<[u32]>, len: usize) -> Box<[u32]> {
    for row in rows.iter_mut().filter(|row| **row as usize >= len) {
        *row = u32::MAX;
    }
    rows
}

/// Whether the documents with a row are in tie order.
fn in_tie_order(rows: &[u32], tie: impl Fn(u32) -> u32) -> bool {
    rows.iter()
        .filter(|&&row| row != u32::MAX)
        .map(|&row| tie(row))
        .is_sorted_by(|a, b| a < b)
}

impl SegmentDocs {
    fn new(rows: Box<[u32]>, tie_order: &[u32], values: Values) -> SegmentDocs {
        let tie = |row: u32| tie_order.get(row as usize).copied().unwrap_or(u32::MAX);
        let ties: Arc<[u32]> = rows.iter().map(|&row| tie(row)).collect();
        let ordered = in_tie_order(&rows, tie);
        let complete = rows.iter().all(|&row| row != u32::MAX);
        SegmentDocs {
            complete,
            alive: (!complete).then(|| alive_bits(&rows)),
            values: Arc::new(values),
            rows: rows.into(),
            ties,
            ordered,
        }
    }

    /// A segment whose documents have the rows `rows` (`u32::MAX`: none;
    /// past `len` rows: none), `value(row)` each row's facet values, kept
    /// narrow when `narrow`.
    pub(super) fn made(
        rows: Box<[u32]>,
        len: usize,
        tie_order: &[u32],
        narrow: bool,
        value: impl Fn(u32) -> FacetRow<u32>,
    ) -> SegmentDocs {
        let rows = rows_of(rows, len);
        fn each<R: Rank>(rows: &[u32], value: impl Fn(u32) -> FacetRow<u32>) -> Box<[FacetRow<R>]> {
            (rows.iter())
                .map(|&row| match row {
                    u32::MAX => blank(),
                    row => value(row).narrowed(),
                })
                .collect()
        }
        let values = match narrow {
            true => Values::Narrow(each(&rows, value)),
            false => Values::Wide(each(&rows, value)),
        };
        SegmentDocs::new(rows, tie_order, values)
    }

    /// This segment with the documents `alive` says no longer are (deleted
    /// since) without a row: the rows copied, the tie places and values
    /// shared (those of a document without a row are never read).
    pub(super) fn with_deletes(&self, alive: impl Fn(u32) -> bool) -> SegmentDocs {
        let rows: Box<[u32]> = (self.rows.iter().enumerate())
            .map(|(doc, &row)| if alive(doc as u32) { row } else { u32::MAX })
            .collect();
        let complete = rows.iter().all(|&row| row != u32::MAX);
        // Fewer documents in tie order are still in it; fewer out of it
        // may be in it now.
        let ties = &self.ties;
        let ordered = self.ordered
            || (rows.iter().zip(ties.iter()))
                .filter(|(row, _)| **row != u32::MAX)
                .map(|(_, &tie)| tie)
                .is_sorted_by(|a, b| a < b);
        SegmentDocs {
            complete,
            alive: (!complete).then(|| alive_bits(&rows)),
            values: self.values.clone(),
            rows: rows.into(),
            ties: self.ties.clone(),
            ordered,
        }
    }
}

#[cfg(test)]
#[path = "docs_tests.rs"]
mod tests;
