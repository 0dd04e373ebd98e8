//! A collection indexed for listing, built once per version of the data:
//! the same answers as [`crate::query::run`] (same filters, order, totals
//! and errors), but a page costs the page, not the collection.
//!
//! Without filters a page is a slice of a precomputed order. With filters
//! the matching records are a bitmap (see `filter`), counted for `total`;
//! the page then either walks the sort order skipping records outside the
//! bitmap or ranks only the matched records, whichever touches fewer.
//! Records are named by their position (`row`) in the slice indexed.

mod column;
mod distinct;
mod edit;
mod filter;
mod rank;
mod replace;
mod replace_all;
mod spare;
#[cfg(test)]
mod tests;

use std::marker::PhantomData;
use std::sync::Arc;

use roaring::RoaringBitmap;
use storefront_proto::common::v1::{ListQuery, PageInfo, SortDirection};

pub use self::column::{Column, Key, MISSING};
pub use self::distinct::sorted_texts;
use self::filter::Predicate;
use crate::query::{self, Schema, Value};
use storefront_proto::error::ServiceError;

/// What records are ordered by: an indexed column, or a value the caller
/// supplies per record (a search's relevance).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortKey {
    Column(usize),
    Extra,
}

/// Words of a packed sort tuple: a caller's value (64 bits), up to
/// `MAX_SORT_KEYS` column ranks and the id rank (32 bits each), whatever
/// their order, fit in five.
const PACKED: usize = 5;

/// A record to rank with its caller-supplied value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranked {
    pub row: u32,
    pub extra: i64,
}

struct Indexed {
    name: &'static str,
    /// The context the column was built with; None when the field does
    /// not depend on it.
    context: Option<usize>,
    column: Column,
}

/// One column to build: field name, field, context index, context.
type Job<'c, S> = (
    &'static str,
    <S as Schema>::Field,
    Option<usize>,
    &'c <S as Schema>::Context,
);

/// Versions share what they did not change: cloning a listing is a few
/// `Arc`s, and an edit copies only the columns it changes.
pub struct Listing<S: Schema> {
    len: u32,
    /// Each record's rank by id: the tie break of every order.
    id_rank: Arc<Vec<u32>>,
    columns: Vec<Arc<Indexed>>,
    schema: PhantomData<fn() -> S>,
}

impl<S: Schema> Clone for Listing<S> {
    fn clone(&self) -> Self {
        Self {
            len: self.len,
            id_rank: self.id_rank.clone(),
            columns: self.columns.clone(),
            schema: PhantomData,
        }
    }
}

impl<S: Schema> Listing<S> {
    /// Indexes `fields` of `records`; fields for which `S::varies` holds
    /// are indexed once per context, the others with the first one. The
    /// columns are built on every core at once.
    pub fn build(records: &[S::Record], fields: &[&'static str], contexts: &[S::Context]) -> Self
    where
        S::Record: Sync,
        S::Field: Send + Sync,
        S::Context: Sync,
    {
        let by_id = distinct::sorted_texts(records.len(), |i| S::id(&records[i as usize]));
        let mut id_rank = vec![0; records.len()];
        for (rank, &row) in by_id.iter().enumerate() {
            id_rank[row as usize] = rank as u32;
        }
        let mut jobs: Vec<Job<'_, S>> = Vec::new();
        for &name in fields {
            let Some((field, _)) = S::resolve(name) else {
                continue;
            };
            if S::varies(field) {
                jobs.extend(
                    contexts
                        .iter()
                        .enumerate()
                        .map(|(i, c)| (name, field, Some(i), c)),
                );
            } else if let Some(c) = contexts.first() {
                jobs.push((name, field, None, c));
            }
        }
        let columns = crate::cores::map_on_cores(jobs.len(), |j| {
            let (name, field, context, ctx) = jobs[j];
            let values: Vec<Value<'_>> = records.iter().map(|r| S::value(r, field, ctx)).collect();
            Arc::new(Indexed {
                name,
                context,
                column: Column::build(&values, &by_id),
            })
        });
        Self {
            len: records.len() as u32,
            id_rank: Arc::new(id_rank),
            columns,
            schema: PhantomData,
        }
    }

    pub fn len(&self) -> usize {
        self.len as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many contexts the fields that vary were indexed in.
    pub fn contexts(&self) -> usize {
        self.columns
            .iter()
            .filter_map(|c| c.context)
            .max()
            .map_or(0, |last| last + 1)
    }

    fn position(&self, name: &str, context: usize) -> Result<usize, ServiceError> {
        self.columns
            .iter()
            .position(|c| c.name == name && c.context.is_none_or(|i| i == context))
            .ok_or_else(|| ServiceError::internal(format!("'{name}' is not indexed")))
    }

    /// The column of field `name` in `context`.
    pub fn column(&self, name: &str, context: usize) -> Result<&Column, ServiceError> {
        Ok(&self.columns[self.position(name, context)?].column)
    }

    /// The records passing every filter of `query` (None: every record).
    pub fn matching(
        &self,
        query: &ListQuery,
        context: usize,
    ) -> Result<Option<RoaringBitmap>, ServiceError> {
        let predicates = self.predicates(query, context)?;
        Ok(filter::select(predicates, self.len))
    }

    /// The filters of `query`, to test records one at a time: for
    /// candidates found otherwise (a search's matches), cheaper than
    /// `matching`.
    pub fn row_filter(
        &self,
        query: &ListQuery,
        context: usize,
    ) -> Result<RowFilter<'_>, ServiceError> {
        Ok(RowFilter(self.predicates(query, context)?))
    }

    fn predicates(
        &self,
        query: &ListQuery,
        context: usize,
    ) -> Result<Vec<Predicate<'_>>, ServiceError> {
        let compiled = query::compile_filters::<S>(query)?;
        query
            .filters
            .iter()
            .zip(&compiled)
            .map(|(f, c)| Ok(Predicate::new(self.column(&f.field, context)?, c)))
            .collect()
    }

    /// The query's sort (validated as `query::run` does), or `default`.
    pub fn sort_keys(
        &self,
        query: &ListQuery,
        context: usize,
        default: &[(SortKey, bool)],
    ) -> Result<Vec<(SortKey, bool)>, ServiceError> {
        query::compile_sort::<S>(query, &[])?;
        if query.sort.is_empty() {
            return Ok(default.to_vec());
        }
        let sort = &query.sort;
        sort.iter()
            .enumerate()
            .filter(|(i, s)| !sort[..*i].iter().any(|t| t.field == s.field))
            .map(|(_, s)| {
                let column = self.position(&s.field, context)?;
                Ok((
                    SortKey::Column(column),
                    s.direction() == SortDirection::Desc,
                ))
            })
            .collect()
    }

    /// The default sort `(field, descending)` as keys.
    pub fn keys(
        &self,
        fields: &[(&str, bool)],
        context: usize,
    ) -> Result<Vec<(SortKey, bool)>, ServiceError> {
        fields
            .iter()
            .map(|&(name, desc)| Ok((SortKey::Column(self.position(name, context)?), desc)))
            .collect()
    }

    /// About how many records a page of `query` touches: callers run the
    /// expensive ones off the async workers. Errors count as cheap (they
    /// are answered before any record is touched).
    pub fn estimate(&self, query: &ListQuery, context: usize) -> u64 {
        let len = u64::from(self.len);
        // A window past the end costs no more than the whole set (and the
        // products below then fit in a u64 whatever offset a client sends).
        let window = query
            .page
            .map_or(0, |p| p.offset)
            .saturating_add(u64::from(query::MAX_LIMIT))
            .min(len);
        let Ok(predicates) = self.predicates(query, context) else {
            return 0;
        };
        let matched = predicates.iter().map(|p| p.count(len)).min().unwrap_or(len);
        let first_group = query.sort.first().and_then(|s| {
            let column = self.column(&s.field, context).ok()?;
            Some(len / column.distinct.len().max(1) as u64)
        });
        let ranked = if query.sort.len() > 1 {
            first_group.unwrap_or(len)
        } else {
            0
        };
        if predicates.is_empty() {
            return window.min(len) + ranked;
        }
        // Bitmaps held are intersected almost for free; a range without
        // them costs its records (the smallest one is materialised), then
        // the page ranks the matches or walks the order.
        let ranges = predicates
            .iter()
            .filter(|p| !p.has_bitmaps())
            .map(|p| {
                p.count(len)
                    .min(matched.saturating_mul(predicates.len() as u64))
            })
            .min()
            .unwrap_or(0);
        ranges + matched.min(window * len / matched.max(1)) + ranked
    }

    /// One page of `query`: its envelope and the rows on it, in order.
    pub fn page(
        &self,
        query: &ListQuery,
        context: usize,
        default_sort: &[(&str, bool)],
    ) -> Result<(PageInfo, Vec<u32>), ServiceError> {
        let set = self.matching(query, context)?;
        let keys = self.sort_keys(query, context, &self.keys(default_sort, context)?)?;
        let total = set.as_ref().map_or(u64::from(self.len), RoaringBitmap::len);
        let (info, start, end) = window(query, total)?;
        if start == end {
            return Ok((info, Vec::new()));
        }
        let rows = match set {
            None if keys.len() == 1 => match keys[0] {
                (SortKey::Column(c), desc) => {
                    let column = &self.columns[c].column;
                    column.rows(desc, start).take(end - start).collect()
                }
                (SortKey::Extra, _) => Vec::new(),
            },
            None => self.walk(&keys, None, start, end),
            // Walking visits about end * len / |set| records, ranking |set|.
            Some(set) if (end as u64).saturating_mul(u64::from(self.len)) < total * total => {
                self.walk(&keys, Some(&set), start, end)
            }
            Some(set) => {
                let ranked = set.iter().map(|row| Ranked { row, extra: 0 }).collect();
                self.rank(ranked, &keys, start, end)
                    .into_iter()
                    .map(|r| r.row)
                    .collect()
            }
        };
        Ok((info, rows))
    }
}

/// A query's filters over a listing's columns, tested per record.
pub struct RowFilter<'a>(Vec<Predicate<'a>>);

impl RowFilter<'_> {
    /// Whether there is no filter: every record passes.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether record `row` passes every filter.
    #[inline]
    pub fn test(&self, row: u32) -> bool {
        self.0.iter().all(|p| p.test(row))
    }
}

/// The page's envelope and its bounds within `total` matches.
pub fn window(query: &ListQuery, total: u64) -> Result<(PageInfo, usize, usize), ServiceError> {
    let (limit, offset) = query::page_bounds(query)?;
    let start = offset.min(total) as usize;
    let end = (start + limit as usize).min(total as usize);
    let info = PageInfo {
        limit,
        offset,
        count: (end - start) as u32,
        total,
    };
    Ok((info, start, end))
}
