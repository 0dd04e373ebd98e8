//! What a search reads of a segment's documents: their own rows' tie
//! places and values, counted by values alone as by rows.

use std::collections::HashMap;
use std::sync::Arc;

use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts};
use storefront_domain::listing::Listing;

use super::super::tests::product;
use super::super::{Counts, FacetRow, FacetRows, Rank, blank, facets};
use super::{SegmentDocs, Values};

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

// What other modules' tests read of a segment.
impl SegmentDocs {
    /// Whether its rows are `other`'s (shared, not made again).
    pub fn shares_rows_with(&self, other: &SegmentDocs) -> bool {
        Arc::ptr_eq(&self.rows, &other.rows)
    }

    /// Whether its tie places are `other`'s (shared, not made again).
    pub fn shares_ties_with(&self, other: &SegmentDocs) -> bool {
        Arc::ptr_eq(&self.ties, &other.ties)
    }

    /// The row of document `doc` (None: a document without one).
    pub fn row(&self, doc: u32) -> Option<u32> {
        self.entry(doc).map(|(row, _)| row)
    }

    /// As a segment made again holds it: the tie place and values of a
    /// document without a row none (never read).
    pub fn normalized(&self) -> SegmentDocs {
        fn blanked<R: Rank>(values: &mut [FacetRow<R>], rows: &[u32]) {
            let gone = values
                .iter_mut()
                .zip(rows)
                .filter(|(_, row)| **row == u32::MAX);
            gone.for_each(|(value, _)| *value = blank());
        }
        let mut next = self.clone();
        let ties = self.rows.iter().zip(self.ties.iter());
        next.ties = ties
            .map(|(&row, &tie)| if row == u32::MAX { u32::MAX } else { tie })
            .collect();
        match Arc::make_mut(&mut next.values) {
            Values::Narrow(values) => blanked(values, &self.rows),
            Values::Wide(values) => blanked(values, &self.rows),
        }
        next
    }
}
