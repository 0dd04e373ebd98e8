//! Answering a search: every text match with its relevance, then the
//! product filters, facets over what remains, then relevance (or the
//! requested sort) and the page. Filters, sorts and facets read the
//! listing index's columns; only the page's documents are loaded.

use std::collections::BinaryHeap;
use std::sync::Arc;

use storefront_common::catalog::{CURRENCIES, price_tail};
use storefront_common::error::ServiceError;
use storefront_common::listing::{self, Key, Ranked};
use storefront_proto::common::v1::ListQuery;
use storefront_proto::encoded::{EncodedProduct, Products};
use storefront_proto::search::v1::SearchResponse;
use tantivy::collector::{Collector, SegmentCollector, TopDocs};

use tantivy::query::Query;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

use crate::facets::facets;
use crate::index::Indexed;

/// A score as an exactly comparable integer (x 10^6).
fn relevance(score: Score) -> i64 {
    (f64::from(score) * 1e6) as i64
}

/// The hits room is made for up front: one per this many documents.
const EXPECTED_SHARE: usize = 8;

/// Every matching document as (row, relevance): no heap, no document load.
struct AllHits<'a>(&'a Indexed);

struct SegmentHits {
    rows: Arc<[u32]>,
    hits: Vec<Ranked>,
}

impl Collector for AllHits<'_> {
    type Fruit = Vec<Ranked>;
    type Child = SegmentHits;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        _: &SegmentReader,
    ) -> tantivy::Result<SegmentHits> {
        let rows = self.0.rows.get(segment as usize).cloned();
        // A one-word search matches about a tenth of a catalog: room for
        // that up front, rather than a dozen doublings that copy the hits
        // (2% of a search's CPU in a profile at 100,000 products).
        let expected = rows.as_ref().map_or(0, |r| r.len() / EXPECTED_SHARE);
        Ok(SegmentHits {
            rows: rows.unwrap_or_else(|| Arc::from([])),
            hits: Vec::with_capacity(expected),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, mut fruits: Vec<Vec<Ranked>>) -> tantivy::Result<Vec<Ranked>> {
        // One segment (the index is merged into one): no copy.
        if fruits.len() == 1 {
            return Ok(fruits.pop().unwrap_or_default());
        }
        Ok(fruits.concat())
    }
}

impl SegmentCollector for SegmentHits {
    type Fruit = Vec<Ranked>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(&row) = self.rows.get(doc as usize).filter(|&&r| r != u32::MAX) {
            self.hits.push(Ranked {
                row,
                extra: relevance(score),
            });
        }
    }

    fn harvest(self) -> Vec<Ranked> {
        self.hits
    }
}

/// Every product matching `query`, with its relevance.
pub fn all_hits(indexed: &Indexed, query: &dyn Query) -> tantivy::Result<Vec<Ranked>> {
    indexed.reader.searcher().search(query, &AllHits(indexed))
}

/// The best `limit` products matching `query`, best first: by relevance,
/// then popularity, then id, as a search ranks them, so equal scores
/// never come back in an arbitrary order.
pub fn top_hits(indexed: &Indexed, query: &dyn Query, limit: usize) -> tantivy::Result<Vec<u32>> {
    let searcher = indexed.reader.searcher();
    let tie_order = indexed.tie_order.clone();
    let ord = searcher
        .schema()
        .get_field_name(indexed.fields.ord)
        .to_string();
    let best_first =
        TopDocs::with_limit(limit.max(1)).tweak_score(move |segment: &SegmentReader| {
            let rows = segment.fast_fields().u64(&ord).ok();
            let tie_order = tie_order.clone();
            move |doc: DocId, score: Score| {
                let row = rows.as_ref().and_then(|c| c.first(doc)).unwrap_or(u64::MAX);
                let tie = tie_order.get(row as usize).copied().unwrap_or(u32::MAX);
                (score, u32::MAX - tie, u32::MAX - row as u32)
            }
        });
    let docs = searcher.search(query, &best_first)?;
    Ok(docs
        .into_iter()
        .map(|((_, _, row), _)| u32::MAX - row)
        .filter(|&row| (row as usize) < indexed.len())
        .collect())
}

/// The page's products, encoded, priced in `currency`.
pub fn encoded(
    indexed: &Indexed,
    rows: impl Iterator<Item = u32>,
    currency: usize,
) -> Result<Products, ServiceError> {
    let prices = indexed.listing.column("price", currency)?;
    let code = CURRENCIES[currency];
    let encoded = rows
        .map(|row| {
            let body = indexed.summary(row).map_err(ServiceError::internal)?;
            let cents = match prices.value(row) {
                Some(Key::Integer(c)) => Some(*c),
                _ => None,
            };
            Ok(EncodedProduct {
                body,
                tail: price_tail(code, cents),
            })
        })
        .collect::<Result<_, ServiceError>>()?;
    Ok(Products {
        products: Vec::new(),
        encoded,
    })
}

/// The `hits` that pass the query's filters (validated even when there
/// are no hits).
pub fn filtered(
    indexed: &Indexed,
    mut hits: Vec<Ranked>,
    list: &ListQuery,
    currency: usize,
) -> Result<Vec<Ranked>, ServiceError> {
    indexed.listing.retain(&mut hits, list, currency)?;
    Ok(hits)
}

/// Facets, orders and pages filtered `hits`.
pub fn answer(
    indexed: &Indexed,
    hits: Vec<Ranked>,
    list: &ListQuery,
    currency: usize,
) -> Result<SearchResponse, ServiceError> {
    let listing = &indexed.listing;
    let facets = facets(
        listing,
        &indexed.facets,
        &indexed.category_keys,
        &hits,
        currency,
    )?;
    // Validated as for any listing, whichever way the page is ranked.
    let keys = listing.sort_keys(list, currency, &[])?;
    let (info, start, end) = listing::window(list, hits.len() as u64)?;
    let page = if list.sort.is_empty() {
        by_relevance(&indexed.tie_order, &hits, start, end)
    } else {
        let page = listing.rank(hits, &keys, start, end);
        page.into_iter().map(|r| r.row).collect()
    };
    Ok(SearchResponse {
        page: Some(info),
        products: encoded(indexed, page.into_iter(), currency)?,
        facets: Some(facets),
    })
}

/// Rows `start..end` of `hits` by relevance, then popularity, then id:
/// the best `end` kept in a heap, a hit's tie-break read only when its
/// relevance ties the worst one kept.
fn by_relevance(tie_order: &[u32], hits: &[Ranked], start: usize, end: usize) -> Vec<u32> {
    if start >= end {
        return Vec::new();
    }
    // Smaller is better: relevance descending, then the tie order.
    let lead = |h: &Ranked| u64::MAX - ((h.extra as u64) ^ (1 << 63));
    let mut heap: BinaryHeap<(u64, u32, u32)> = BinaryHeap::with_capacity(end + 1);
    for h in hits {
        let lead = lead(h);
        if heap.len() == end && heap.peek().is_some_and(|worst| lead > worst.0) {
            continue;
        }
        let entry = (lead, tie_order[h.row as usize], h.row);
        if heap.len() < end {
            heap.push(entry);
        } else if let Some(mut worst) = heap.peek_mut()
            && entry < *worst
        {
            *worst = entry;
        }
    }
    let mut best = heap.into_sorted_vec();
    best.drain(start.min(best.len())..)
        .map(|(_, _, row)| row)
        .collect()
}
