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

/// Counts per distinct value of `column` over `hits`, as facet values.
fn counted(column: &Column, hits: &[Ranked], label: impl Fn(&str) -> String) -> Vec<FacetValue> {
    let mut counts = vec![0u64; column.distinct.len()];
    for hit in hits {
        if let Some(c) = counts.get_mut(column.rank[hit.row as usize] as usize) {
            *c += 1;
        }
    }
    let mut per_value: std::collections::HashMap<String, u64> = Default::default();
    for (value, count) in column.distinct.iter().zip(counts).filter(|(_, c)| *c > 0) {
        match value {
            Key::Text(s) => *per_value.entry(s.to_string()).or_default() += count,
            Key::Boolean(b) => *per_value.entry(b.to_string()).or_default() += count,
            Key::TextSet(ids) => {
                for id in ids.iter() {
                    *per_value.entry(id.to_string()).or_default() += count;
                }
            }
            _ => {}
        }
    }
    let mut values: Vec<FacetValue> = per_value
        .into_iter()
        .map(|(value, count)| FacetValue {
            label: label(&value),
            value,
            count,
        })
        .collect();
    values.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    values
}

fn facets(indexed: &Indexed, hits: &[Ranked], currency: usize) -> Result<Facets, ServiceError> {
    let listing = &indexed.listing;
    let prices = listing.column("price", currency)?;
    let mut buckets = vec![0u64; PRICE_BUCKETS.len()];
    for hit in hits {
        if let Some(Key::Integer(price)) = prices.value(hit.row) {
            let bucket = PRICE_BUCKETS
                .iter()
                .position(|&(from, to)| *price >= from && (to == 0 || *price < to));
            if let Some(b) = bucket {
                buckets[b] += 1;
            }
        }
    }
    Ok(Facets {
        brands: counted(listing.column("brand", currency)?, hits, |_| String::new()),
        categories: counted(listing.column("category", currency)?, hits, |id| {
            indexed.category_keys.get(id).cloned().unwrap_or_default()
        }),
        prices: PRICE_BUCKETS
            .iter()
            .zip(buckets)
            .map(|(&(from, to), count)| PriceRange { from, to, count })
            .collect(),
        in_stock: counted(listing.column("inStock", currency)?, hits, |_| {
            String::new()
        }),
    })
}

/// Filters, facets, orders and pages `hits`.
pub fn answer(
    indexed: &Indexed,
    mut hits: Vec<Ranked>,
    list: &ListQuery,
    currency: usize,
) -> Result<SearchResponse, ServiceError> {
    let listing = &indexed.listing;
    listing.retain(&mut hits, list, currency)?;
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
