//! Answering a search in one pass over the text matches: each match is
//! filtered, counted into the facets and offered to the page (a heap of
//! the best by relevance, or the matches kept for a requested sort) as
//! tantivy finds it, so no list of every match is built and read again.
//! Filters, sorts and facets read the listing index's columns; only the
//! page's documents are loaded.

use storefront_domain::catalog::price_tail;
use storefront_domain::listing::{self, Key, Ranked, RowFilter, SortKey};
use storefront_domain::query;
use storefront_platform::error::ServiceError;
use storefront_proto::catalog::v1::CompressedProduct;
use storefront_proto::common::v1::ListQuery;
use storefront_proto::encoded::{EncodedProduct, Products};
use storefront_proto::search::v1::SearchResponse;
use tantivy::collector::TopDocs;
use tantivy::query::{EnableScoring, Query};
use tantivy::{DocId, Score, SegmentReader};

use crate::facets::{BATCH, Counts, SegmentDocs, facets};
use crate::index::Indexed;
use crate::text_query::Built;
use lead::Leaders;
#[cfg(test)]
use lead::below;

/// Score steps per unit: scores within one step are equally relevant
/// (popularity decides). Block-max WAND sums a match's field scores in
/// no fixed order, so the same score may differ in its last bits; a step
/// of 0.01 is far above that, and far below what a field's length or a
/// word's frequency changes.
const STEPS: f64 = 100.0;

/// A score as an exactly comparable integer (`STEPS` a unit).
fn relevance(score: Score) -> i64 {
    (f64::from(score) * STEPS) as i64
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
    /// Matches with as many words near scored one by one at most (None:
    /// as `lead::seeks` chooses; tests force either way).
    seek_max: Option<u64>,
    /// Whether all matches of a flat query are scored one by one (None:
    /// as `lead::each` chooses; tests force either way).
    each: Option<bool>,
    /// Whether the page's products go as the index holds them (LZ4).
    compressed: bool,
    /// Matches scored one by one in a pass over every match (tests: how
    /// many the ceiling of constant scores spared).
    #[cfg(test)]
    scored: std::sync::atomic::AtomicU64,
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
            compressed: false,
            seek_max: None,
            each: None,
            #[cfg(test)]
            scored: Default::default(),
        })
    }

    /// The page's products sent as the index holds them when `yes`.
    pub fn compressed(mut self, yes: bool) -> Self {
        self.compressed = yes;
        self
    }

    fn nothing(&self) -> Result<Matched, ServiceError> {
        Ok(Matched {
            total: 0,
            counts: Counts::new(
                &self.indexed.listing,
                &self.indexed.facet_layout,
                self.currency,
            )?,
            best: if self.keys.is_empty() {
                Best::Relevance(Leaders::new(self.keep))
            } else {
                Best::All(Vec::new())
            },
        })
    }

    /// The products matching `text_query` (None: nothing searchable) that
    /// pass the filters: counted, and the page's chosen. By relevance, the
    /// count is one unscored pass and the page a pruned one (block-max
    /// WAND where the query is a union of terms: blocks whose best score
    /// cannot make the page are skipped); for a requested sort every match
    /// is kept in the same pass that counts it.
    pub fn run(&self, text: Option<&Built>) -> Result<Matched, ServiceError> {
        let mut matched = self.nothing()?;
        let Some(text) = text else {
            return Ok(matched);
        };
        let text_query = text.query.as_ref();
        match &mut matched.best {
            Best::Relevance(leaders) => count::with_scratch(|scratch| {
                let prepared = count::Prepared::new(text)?;
                matched.total = self.count(&prepared, &mut matched.counts, scratch)?;
                if matched.total > 0 {
                    self.lead(text, &prepared, leaders, scratch, matched.total)?;
                }
                Ok::<_, ServiceError>(())
            })?,
            Best::All(all) => {
                matched.total = self.keep_all(text_query, &mut matched.counts, all)?;
            }
        }
        Ok(matched)
    }

    /// The segments searched, each with what a search reads of its
    /// documents.
    fn segments(&self) -> impl Iterator<Item = (&SegmentReader, &SegmentDocs)> {
        let searcher = &self.indexed.searcher;
        searcher
            .segment_readers()
            .iter()
            .zip(self.indexed.segments.iter())
    }

    /// Whether the row of a match passes the filters (a deleted document
    /// has no row: `SegmentDocs`).
    fn keeps(&self, row: u32) -> bool {
        self.filter.test(row)
    }

    /// Every match kept, counted into `counts` and pushed to `all` with
    /// its relevance, for a requested sort.
    fn keep_all(
        &self,
        text_query: &dyn Query,
        counts: &mut Counts,
        all: &mut Vec<Ranked>,
    ) -> Result<u64, ServiceError> {
        let searcher = &self.indexed.searcher;
        let weight = text_query
            .weight(EnableScoring::enabled_from_searcher(searcher))
            .map_err(internal)?;
        let mut total = 0;
        for (reader, segment) in self.segments() {
            // Hits are taken a batch at a time (see `SegmentDocs::take`).
            let mut batch: Vec<(DocId, Score)> = Vec::with_capacity(BATCH);
            let mut flush = |batch: &mut Vec<(DocId, Score)>| {
                total += segment.take(
                    batch,
                    counts,
                    |row| self.keeps(row),
                    |row, _, score| {
                        all.push(Ranked {
                            row,
                            extra: relevance(score),
                        })
                    },
                );
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
        Ok(total)
    }

    /// The response: facets, the page in its order, its products.
    pub fn answer(&self, matched: Matched) -> Result<SearchResponse, ServiceError> {
        let (info, start, end) = listing::window(self.list, matched.total)?;
        let page: Vec<u32> = match matched.best {
            Best::Relevance(leaders) => leaders.rows().take(end).skip(start).collect(),
            Best::All(all) => self
                .indexed
                .listing
                .rank(all, &self.keys, start, end)
                .into_iter()
                .map(|r| r.row)
                .collect(),
        };
        let facets = facets(&self.indexed.category_keys, matched.counts);
        let mut reply = SearchResponse {
            page: Some(info),
            facets: Some(facets),
            ..Default::default()
        };
        if self.compressed {
            reply.dictionary_id = self.indexed.summaries.dictionary().id();
            reply.compressed = compressed(self.indexed, page.into_iter(), self.currency)?;
        } else {
            reply.products = encoded(self.indexed, page.into_iter(), self.currency)?;
        }
        Ok(reply)
    }
}

/// The best `limit` products matching `query`, best first: by relevance,
/// then the tie order (popularity, then row), as a search ranks them, so equal scores
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
                (relevance(score), u32::MAX - tie, u32::MAX - row as u32)
            }
        });
    let docs = searcher.search(query, &best_first)?;
    Ok(docs
        .into_iter()
        .map(|((_, _, row), _)| u32::MAX - row)
        .filter(|&row| (row as usize) < indexed.len())
        .collect())
}

/// Row `row`'s price in `currency`, encoded to follow its summary.
fn tail_of(
    indexed: &Indexed,
    currency: usize,
) -> Result<impl Fn(u32) -> Vec<u8> + '_, ServiceError> {
    let prices = indexed.listing.column("price", currency)?;
    let code = indexed.live.currencies.code(currency);
    Ok(move |row| {
        let cents = match prices.value(row) {
            Some(Key::Integer(c)) => Some(*c),
            _ => None,
        };
        price_tail(code, cents)
    })
}

/// The page's products as the index holds them, priced in `currency`.
fn compressed(
    indexed: &Indexed,
    rows: impl Iterator<Item = u32>,
    currency: usize,
) -> Result<Vec<CompressedProduct>, ServiceError> {
    let tail = tail_of(indexed, currency)?;
    rows.map(|row| {
        let (lz4, length) = indexed
            .summaries
            .compressed_shared(row as usize)
            .ok_or_else(|| ServiceError::internal(format!("no product at row {row}")))?;
        Ok(CompressedProduct {
            lz4,
            length,
            tail: tail(row).into(),
        })
    })
    .collect()
}

/// The page's products, encoded, priced in `currency`.
pub fn encoded(
    indexed: &Indexed,
    rows: impl Iterator<Item = u32>,
    currency: usize,
) -> Result<Products, ServiceError> {
    let tail = tail_of(indexed, currency)?;
    let encoded = rows
        .map(|row| {
            let body = indexed.summary(row).map_err(ServiceError::internal)?;
            Ok(EncodedProduct {
                body,
                tail: tail(row),
            })
        })
        .collect::<Result<_, ServiceError>>()?;
    Ok(Products {
        products: Vec::new(),
        encoded,
    })
}

mod count;
mod kept;
mod lead;
mod near;
#[cfg(test)]
pub(crate) mod tests;
