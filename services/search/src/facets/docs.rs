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
fn alive(rows: &[u32]) -> Arc<[u64]> {
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

    /// Whether its rows are `other`'s (shared, not made again).
    #[cfg(test)]
    pub fn shares_rows_with(&self, other: &SegmentDocs) -> bool {
        Arc::ptr_eq(&self.rows, &other.rows)
    }

    /// The row of document `doc` (None: a document without one).
    #[cfg(test)]
    pub fn row(&self, doc: u32) -> Option<u32> {
        self.entry(doc).map(|(row, _)| row)
    }
}

impl FacetRows {
    /// What a search reads of each document of a segment whose documents
    /// have the rows `rows` (`u32::MAX`: none), `tie_order` each row's
    /// place in the tie order.
    pub fn for_segment(&self, mut rows: Box<[u32]>, tie_order: &[u32]) -> SegmentDocs {
        let len = match &self.packed {
            Packed::Narrow(by_row) => by_row.len(),
            Packed::Wide(by_row) => by_row.len(),
        };
        for row in rows.iter_mut().filter(|row| **row as usize >= len) {
            *row = u32::MAX;
        }
        let tie = |row: u32| tie_order.get(row as usize).copied().unwrap_or(u32::MAX);
        let ties: Arc<[u32]> = rows.iter().map(|&row| tie(row)).collect();
        let ordered = rows
            .iter()
            .filter(|&&row| row != u32::MAX)
            .map(|&row| tie(row))
            .is_sorted_by(|a, b| a < b);
        let complete = rows.iter().all(|&row| row != u32::MAX);
        SegmentDocs {
            complete,
            alive: (!complete).then(|| alive(&rows)),
            values: Arc::new(match &self.packed {
                Packed::Narrow(by_row) => Values::Narrow(values(by_row, &rows)),
                Packed::Wide(by_row) => Values::Wide(values(by_row, &rows)),
            }),
            rows: rows.into(),
            ties,
            ordered,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts};
    use storefront_domain::listing::Listing;

    use super::super::tests::product;
    use super::super::{Counts, FacetRows, facets};

    /// A segment's documents read their own row's tie place and values,
    /// in the segment's order; a document without a row, or one not
    /// kept, is neither counted nor taken.
    #[test]
    fn segment_documents_read_their_own_rows() {
        let products: Vec<ProductFacts> = (0..50).map(product).collect();
        let listing = Listing::build(&products, PRODUCT_FIELDS, &super::super::tests::codes());
        let narrow = FacetRows::build(&listing).unwrap();
        let wide = FacetRows::wide(&listing);
        let tie_order: Vec<u32> = (0..50).map(|r| 1000 + 3 * r).collect();
        let rows = [7, u32::MAX, 0, 49, 12, 60];
        for by_row in [&narrow, &wide] {
            let docs = by_row.for_segment(rows.into(), &tie_order);
            assert!(!docs.complete && !docs.ordered(), "row 7 before row 0");
            let hits: Vec<(u32, f32)> = (0..7).map(|d| (d, d as f32 / 2.0)).collect();
            let mut by_doc = Counts::new(&listing, by_row.layout(), 1).unwrap();
            let mut taken = Vec::new();
            let kept = docs.take(
                &hits,
                &mut by_doc,
                |row| row != 12,
                |row, tie, score| taken.push((row, tie, score)),
            );
            assert_eq!(kept, 3);
            // Counted without scores, the same.
            let mut unscored = Counts::new(&listing, by_row.layout(), 1).unwrap();
            let keep = |row| row != 12;
            let docs_only: Vec<u32> = (0..7).collect();
            assert_eq!(docs.count(&docs_only, &mut unscored, Some(&keep)), 3);
            assert_eq!(
                facets(&HashMap::new(), unscored),
                facets(&HashMap::new(), {
                    let mut c = Counts::new(&listing, by_row.layout(), 1).unwrap();
                    for row in [7, 0, 49] {
                        by_row.count(&mut c, row);
                    }
                    c
                })
            );
            let expect = [(7, 1021, 0.0), (0, 1000, 1.0), (49, 1147, 1.5)];
            assert_eq!(taken, expect);
            let mut expected = Counts::new(&listing, by_row.layout(), 1).unwrap();
            for row in [7, 0, 49] {
                by_row.count(&mut expected, row);
            }
            let no_labels = HashMap::new();
            assert_eq!(facets(&no_labels, by_doc), facets(&no_labels, expected));
        }
    }

    /// A segment with documents without a row (deleted) counts by values
    /// alone, those masked out, as it counts by rows.
    #[test]
    fn segments_with_deleted_documents_count_by_values_as_by_rows() {
        let products: Vec<ProductFacts> = (0..80).map(product).collect();
        let listing = Listing::build(&products, PRODUCT_FIELDS, &super::super::tests::codes());
        let by_row = FacetRows::build(&listing).unwrap();
        let tie_order: Vec<u32> = (0..80).collect();
        // 70 documents, every third deleted, the last two past the rows.
        let rows: Vec<u32> = (0..70)
            .map(|d| if d % 3 == 0 { u32::MAX } else { d })
            .chain([90, 91])
            .collect();
        let docs = by_row.for_segment(rows.into(), &tie_order);
        assert!(!docs.complete);
        // Every document matched, and bits past the segment's end.
        let bits = [u64::MAX, u64::MAX, u64::MAX];
        let mut by_values = Counts::new(&listing, by_row.layout(), 0).unwrap();
        let counted = docs.count_all(&bits, &mut by_values);
        let mut expected = Counts::new(&listing, by_row.layout(), 0).unwrap();
        let all: Vec<u32> = (0..72).collect();
        let mut by_rows = 0;
        for batch in all.chunks(super::BATCH) {
            by_rows += docs.count(batch, &mut expected, None);
        }
        assert_eq!(counted, by_rows);
        assert_eq!(counted, 46);
        let no_labels = HashMap::new();
        assert_eq!(facets(&no_labels, by_values), facets(&no_labels, expected));
    }

    /// A segment whose every document has a row counts by the values
    /// alone, as by rows; one in tie order says so.
    #[test]
    fn complete_segments_count_by_values_alone() {
        let products: Vec<ProductFacts> = (0..50).map(product).collect();
        let listing = Listing::build(&products, PRODUCT_FIELDS, &super::super::tests::codes());
        let by_row = FacetRows::build(&listing).unwrap();
        let tie_order: Vec<u32> = (0..50).map(|r| 49 - r).collect();
        let docs = by_row.for_segment((0..50).rev().collect(), &tie_order);
        assert!(docs.complete && docs.ordered());
        let mut by_doc = Counts::new(&listing, by_row.layout(), 0).unwrap();
        let all: Vec<u32> = (0..50).collect();
        assert_eq!(docs.count(&all, &mut by_doc, None), 50);
        let mut expected = Counts::new(&listing, by_row.layout(), 0).unwrap();
        for row in 0..50 {
            by_row.count(&mut expected, row);
        }
        let no_labels = HashMap::new();
        assert_eq!(facets(&no_labels, by_doc), facets(&no_labels, expected));
        let unordered = by_row.for_segment((0..50).collect(), &tie_order);
        assert!(unordered.complete && !unordered.ordered());
    }
}
