//! Answering a search: every text match with its relevance, then the
//! product filters, facets over what remains, then relevance (or the
//! requested sort) and the page. Filters, sorts and facets read the
//! listing index's columns; only the page's documents are loaded.

use std::sync::Arc;
use storefront_common::catalog::{CURRENCIES, price_tail};
use storefront_common::error::ServiceError;
use storefront_common::listing::{self, Column, Key, Ranked, SortKey};
use storefront_proto::common::v1::ListQuery;
use storefront_proto::encoded::{EncodedProduct, Products};
use storefront_proto::search::v1::{FacetValue, Facets, PriceRange, SearchResponse};
use tantivy::collector::{Collector, SegmentCollector, TopDocs};

use tantivy::query::Query;
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

use crate::index::Indexed;

/// Price facet buckets, in cents of the requested currency.
const PRICE_BUCKETS: &[(i64, i64)] = &[
    (0, 2_500),
    (2_500, 5_000),
    (5_000, 10_000),
    (10_000, 20_000),
    (20_000, 0),
];

/// A score as an exactly comparable integer (x 10^6).
fn relevance(score: Score) -> i64 {
    (f64::from(score) * 1e6) as i64
}

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
        Ok(SegmentHits {
            rows: rows.unwrap_or_else(|| Arc::from([])),
            hits: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<Ranked>>) -> tantivy::Result<Vec<Ranked>> {
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

/// The best `limit` products matching `query`, best first.
pub fn top_hits(indexed: &Indexed, query: &dyn Query, limit: usize) -> tantivy::Result<Vec<u32>> {
    let searcher = indexed.reader.searcher();
    let docs = searcher.search(query, &TopDocs::with_limit(limit.max(1)).order_by_score())?;
    Ok(docs
        .iter()
        .filter_map(|(_, a)| {
            indexed
                .rows
                .get(a.segment_ord as usize)?
                .get(a.doc_id as usize)
        })
        .copied()
        .filter(|&r| r != u32::MAX)
        .collect())
}

/// The page's products, encoded, priced in `currency`.
pub fn encoded(
    indexed: &Indexed,
    rows: impl Iterator<Item = u32>,
    currency: usize,
) -> Result<Products, ServiceError> {
    let searcher = indexed.reader.searcher();
    let prices = indexed.listing.column("price", currency)?;
    let code = CURRENCIES[currency];
    let encoded = rows
        .map(|row| {
            let body = indexed
                .summary(&searcher, row)
                .map_err(|e| ServiceError::internal(format!("search document: {e}")))?;
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

/// Facet values from `counts` (per distinct value of `column`).
fn counted(column: &Column, counts: &[u64], label: impl Fn(&str) -> String) -> Vec<FacetValue> {
    let mut per_value: std::collections::HashMap<&str, u64> = Default::default();
    for (value, &count) in column.distinct.iter().zip(counts).filter(|(_, c)| **c > 0) {
        match value {
            Key::Text(s) => *per_value.entry(s).or_default() += count,
            Key::Boolean(b) => {
                *per_value
                    .entry(if *b { "true" } else { "false" })
                    .or_default() += count
            }
            Key::TextSet(ids) => {
                for id in ids.iter() {
                    *per_value.entry(id).or_default() += count;
                }
            }
            _ => {}
        }
    }
    let mut values: Vec<FacetValue> = per_value
        .into_iter()
        .map(|(value, count)| FacetValue {
            label: label(value),
            value: value.to_string(),
            count,
        })
        .collect();
    values.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    values
}

/// Counts by value rank of one column, indexed by a row's rank.
struct Tally<'a> {
    column: &'a Column,
    counts: Vec<u64>,
}

impl<'a> Tally<'a> {
    fn new(column: &'a Column) -> Self {
        Self {
            column,
            counts: vec![0; column.distinct.len()],
        }
    }

    fn add(&mut self, row: u32) {
        if let Some(c) = self.counts.get_mut(self.column.rank[row as usize] as usize) {
            *c += 1;
        }
    }
}

/// Facets over `hits` in one pass: each facet counts value ranks, and a
/// price bucket is a range of price ranks (the distinct prices are sorted).
fn facets(indexed: &Indexed, hits: &[Ranked], currency: usize) -> Result<Facets, ServiceError> {
    let listing = &indexed.listing;
    let prices = listing.column("price", currency)?;
    let rank_of = |cents: i64| {
        prices
            .distinct
            .partition_point(|k| matches!(k, Key::Integer(c) if *c < cents)) as u32
    };
    // Ranks where each bucket ends; the last bucket is open.
    let ends: Vec<u32> = PRICE_BUCKETS
        .iter()
        .map(|&(_, to)| {
            if to == 0 {
                prices.distinct.len() as u32
            } else {
                rank_of(to)
            }
        })
        .collect();
    let mut buckets = vec![0u64; PRICE_BUCKETS.len()];
    let mut brands = Tally::new(listing.column("brand", currency)?);
    let mut categories = Tally::new(listing.column("category", currency)?);
    let mut in_stock = Tally::new(listing.column("inStock", currency)?);
    for hit in hits {
        let price = prices.rank[hit.row as usize];
        if let Some(b) = buckets.get_mut(ends.partition_point(|&end| end <= price)) {
            *b += 1;
        }
        brands.add(hit.row);
        categories.add(hit.row);
        in_stock.add(hit.row);
    }
    Ok(Facets {
        brands: counted(brands.column, &brands.counts, |_| String::new()),
        categories: counted(categories.column, &categories.counts, |id| {
            indexed.category_keys.get(id).cloned().unwrap_or_default()
        }),
        prices: PRICE_BUCKETS
            .iter()
            .zip(buckets)
            .map(|(&(from, to), count)| PriceRange { from, to, count })
            .collect(),
        in_stock: counted(in_stock.column, &in_stock.counts, |_| String::new()),
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
    let facets = facets(indexed, &hits, currency)?;
    let mut relevance = vec![(SortKey::Extra, true)];
    relevance.extend(listing.keys(&[("popularity", true)], currency)?);
    let keys = listing.sort_keys(list, currency, &relevance)?;
    let (info, start, end) = listing::window(list, hits.len() as u64)?;
    let page = listing.rank(hits, &keys, start, end);
    Ok(SearchResponse {
        page: Some(info),
        products: encoded(indexed, page.iter().map(|r| r.row), currency)?,
        facets: Some(facets),
    })
}
