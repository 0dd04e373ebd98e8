//! Answering a search in one pass over the text matches: each match is
//! filtered, counted into the facets and offered to the page (a heap of
//! the best by relevance, or the matches kept for a requested sort) as
//! tantivy finds it, so no list of every match is built and read again.
//! Filters, sorts and facets read the listing index's columns; only the
//! page's documents are loaded.

use std::collections::BinaryHeap;

use storefront_domain::catalog::{CURRENCIES, price_tail};
use storefront_domain::listing::{self, Key, Ranked, RowFilter, SortKey};
use storefront_domain::query;
use storefront_platform::error::ServiceError;
use storefront_proto::common::v1::ListQuery;
use storefront_proto::encoded::{EncodedProduct, Products};
use storefront_proto::search::v1::SearchResponse;
use tantivy::collector::TopDocs;
use tantivy::query::{EnableScoring, Query};
use tantivy::{DocId, Score, SegmentReader};

use crate::facets::{BATCH, Counts, facets};
use crate::index::Indexed;

/// A score as an exactly comparable integer (x 10^6).
fn relevance(score: Score) -> i64 {
    (f64::from(score) * 1e6) as i64
}

fn internal(e: tantivy::TantivyError) -> ServiceError {
    ServiceError::internal(format!("search index: {e}"))
}

/// A search's filters, order and page, checked before any match is read
/// (so a bad one is refused even when nothing matches).
pub struct Plan<'a> {
    indexed: &'a Indexed,
    list: &'a ListQuery,
    currency: usize,
    filter: RowFilter<'a>,
    /// The requested sort; empty: by relevance.
    keys: Vec<(SortKey, bool)>,
    /// Matches a relevance-ordered page needs kept: offset + limit.
    keep: usize,
}

/// What one pass over the matches found.
pub struct Matched {
    pub total: u64,
    counts: Counts,
    best: Best,
}

enum Best {
    /// The best by relevance.
    Relevance(Leaders),
    /// Every match, for the requested sort to rank.
    All(Vec<Ranked>),
}

impl<'a> Plan<'a> {
    pub fn new(
        indexed: &'a Indexed,
        list: &'a ListQuery,
        currency: usize,
    ) -> Result<Self, ServiceError> {
        let listing = &indexed.listing;
        let filter = listing.row_filter(list, currency)?;
        let keys = listing.sort_keys(list, currency, &[])?;
        let (limit, offset) = query::page_bounds(list)?;
        // Never more than there are products, whatever the offset.
        let keep = offset
            .saturating_add(u64::from(limit))
            .min(indexed.len() as u64) as usize;
        Ok(Self {
            indexed,
            list,
            currency,
            filter,
            keys,
            keep,
        })
    }

    fn nothing(&self) -> Result<Matched, ServiceError> {
        Ok(Matched {
            total: 0,
            counts: Counts::new(&self.indexed.listing, self.currency)?,
            best: if self.keys.is_empty() {
                Best::Relevance(Leaders::new(self.keep))
            } else {
                Best::All(Vec::new())
            },
        })
    }

    /// The products matching `text_query` (None: nothing searchable) that
    /// pass the filters, counted and offered to the page in one pass.
    pub fn run(&self, text_query: Option<&dyn Query>) -> Result<Matched, ServiceError> {
        let mut matched = self.nothing()?;
        let Some(text_query) = text_query else {
            return Ok(matched);
        };
        let searcher = self.indexed.searcher.clone();
        let weight = text_query
            .weight(EnableScoring::enabled_from_searcher(&searcher))
            .map_err(internal)?;
        for (reader, segment) in searcher
            .segment_readers()
            .iter()
            .zip(self.indexed.segments.iter())
        {
            let alive = reader.alive_bitset();
            let keep = |doc: DocId, row: u32| {
                alive.is_none_or(|a| a.is_alive(doc)) && self.filter.test(row)
            };
            // Hits are taken a batch at a time (see `SegmentDocs::take`).
            let mut batch: Vec<(DocId, Score)> = Vec::with_capacity(BATCH);
            let mut flush = |batch: &mut Vec<(DocId, Score)>| {
                let Matched {
                    total,
                    counts,
                    best,
                } = &mut matched;
                *total += segment.take(batch, counts, keep, |row, tie, score| match best {
                    Best::Relevance(leaders) => {
                        if score >= leaders.below {
                            leaders.offer(tie, row, score);
                        }
                    }
                    Best::All(all) => all.push(Ranked {
                        row,
                        extra: relevance(score),
                    }),
                });
                batch.clear();
            };
            weight
                .for_each(reader, &mut |doc, score| {
                    batch.push((doc, score));
                    if batch.len() == BATCH {
                        flush(&mut batch);
                    }
                })
                .map_err(internal)?;
            flush(&mut batch);
        }
        Ok(matched)
    }

    /// The response: facets, the page in its order, its products.
    pub fn answer(&self, matched: Matched) -> Result<SearchResponse, ServiceError> {
        let (info, start, end) = listing::window(self.list, matched.total)?;
        let page: Vec<u32> = match matched.best {
            Best::Relevance(leaders) => {
                let mut best = leaders.heap.into_sorted_vec();
                best.truncate(end);
                best.drain(start.min(best.len())..)
                    .map(|(_, _, row)| row)
                    .collect()
            }
            Best::All(all) => self
                .indexed
                .listing
                .rank(all, &self.keys, start, end)
                .into_iter()
                .map(|r| r.row)
                .collect(),
        };
        let facets = facets(
            &self.indexed.listing,
            &self.indexed.category_keys,
            matched.counts,
        )?;
        Ok(SearchResponse {
            page: Some(info),
            products: encoded(self.indexed, page.into_iter(), self.currency)?,
            facets: Some(facets),
            ..Default::default()
        })
    }
}

/// The best `keep` matches by relevance, then popularity, then id, worst
/// on top: (relevance descending as a u64, place in the tie order, row),
/// smaller is better.
struct Leaders {
    heap: BinaryHeap<(u64, u32, u32)>,
    keep: usize,
    /// Scores below this cannot make the cut (the worst kept is better):
    /// most matches are turned away by one comparison of raw scores.
    below: Score,
}

impl Leaders {
    fn new(keep: usize) -> Self {
        Self {
            heap: BinaryHeap::new(),
            keep,
            below: if keep == 0 {
                Score::INFINITY
            } else {
                Score::NEG_INFINITY
            },
        }
    }

    #[inline]
    fn offer(&mut self, tie: u32, row: u32, score: Score) {
        let lead = u64::MAX - ((relevance(score) as u64) ^ (1 << 63));
        let entry = (lead, tie, row);
        if self.heap.len() < self.keep {
            self.heap.push(entry);
        } else if let Some(mut worst) = self.heap.peek_mut()
            && entry < *worst
        {
            *worst = entry;
        } else {
            return;
        }
        if self.heap.len() == self.keep
            && let Some(&(lead, _, _)) = self.heap.peek()
        {
            self.below = below(((u64::MAX - lead) ^ (1 << 63)) as i64);
        }
    }
}

/// A score under which `relevance` is surely below `worst` (one step of
/// f32 under it, far more than the rounding of the conversion).
fn below(worst: i64) -> Score {
    let at = (worst as f64 / 1e6) as Score;
    if at > 0.0 && at.is_finite() {
        Score::from_bits(at.to_bits() - 1)
    } else {
        Score::NEG_INFINITY
    }
}

/// The best `limit` products matching `query`, best first: by relevance,
/// then popularity, then id, as a search ranks them, so equal scores
/// never come back in an arbitrary order.
pub fn top_hits(indexed: &Indexed, query: &dyn Query, limit: usize) -> tantivy::Result<Vec<u32>> {
    let searcher = indexed.searcher.clone();
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

#[cfg(test)]
mod tests;
