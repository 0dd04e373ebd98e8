//! A follow step that wrote no document moved only stock and prices (the
//! live change a shop makes most): the facet values of the rows it changed
//! are patched into the segments it had, not built again for every row
//! (that took 20-55 ms a step at 100,000 products and 176-314 ms at
//! 1,000,000, two steps a second while changes flow). A step that wrote
//! documents but moved nothing else facets count by keeps the segments it
//! had and reads only the new segments' documents (`kept`).

use std::sync::Arc;

use storefront_domain::catalog::ProductSchema;
use storefront_domain::currencies::MAX_CURRENCIES;
use storefront_domain::listing::{Key, Listing};
use storefront_platform::error::ServiceError;

use storefront_domain::listing::Column;

use super::docs::{SegmentDocs, set};
use super::{FacetRow, Layout, NO_BUCKET, bucket, narrow, stock_bucket, stock_slots};

/// Whether every row's facet values but its stock and price read in
/// `after` as in `before`: the brand, category and attribute columns
/// unchanged (shared, not copied by an edit) and the stock column's values
/// the same (so each row's stock rank means what it did). The pairs and
/// the layout then hold as they were made.
pub fn holds_but_stock_and_prices(
    before: &Listing<ProductSchema>,
    after: &Listing<ProductSchema>,
) -> Result<bool, ServiceError> {
    let shared = |field| {
        Ok::<_, ServiceError>(std::ptr::eq(
            before.column(field, 0)?,
            after.column(field, 0)?,
        ))
    };
    let stock = |at: &Listing<ProductSchema>| {
        Ok::<_, ServiceError>(at.column("inStock", 0)?.distinct.clone())
    };
    Ok(shared("brand")?
        && shared("category")?
        && shared("attributes")?
        && stock(before)? == stock(after)?)
}

/// Each row's stock and price buckets read one row at a time (as
/// `packed` reads every row).
struct StockBuckets<'l> {
    in_stock: &'l [u32],
    none: usize,
    prices: Vec<&'l Column>,
}

impl<'l> StockBuckets<'l> {
    fn new(listing: &'l Listing<ProductSchema>) -> Result<Self, ServiceError> {
        Ok(Self {
            in_stock: &listing.column("inStock", 0)?.rank,
            none: stock_slots(listing)? - 1,
            prices: (0..listing.contexts().min(MAX_CURRENCIES))
                .map(|c| listing.column("price", c))
                .collect::<Result<Vec<_>, _>>()?,
        })
    }

    fn of(&self, row: u32) -> [u8; MAX_CURRENCIES] {
        std::array::from_fn(|c| {
            let Some(price) = self.prices.get(c) else {
                return u8::MAX;
            };
            let cents = price.distinct.get(price.rank[row as usize] as usize);
            let bucket = match cents {
                Some(Key::Integer(cents)) => bucket(*cents),
                _ => NO_BUCKET,
            };
            stock_bucket(self.in_stock[row as usize], self.none, bucket)
        })
    }
}

/// `segments` with the stock and price of `rows` read again from
/// `listing` (of which `holds_but_stock_and_prices` holds).
pub fn restocked(
    segments: &[SegmentDocs],
    listing: &Listing<ProductSchema>,
    rows: &[u32],
) -> Result<Arc<[SegmentDocs]>, ServiceError> {
    let stock_buckets = StockBuckets::new(listing)?;
    let mut changed = vec![0u64; listing.len().div_ceil(64)];
    let mut by_row = std::collections::HashMap::with_capacity(rows.len());
    for &row in rows.iter().filter(|&&row| (row as usize) < listing.len()) {
        set(&mut changed, row);
        by_row.insert(row, stock_buckets.of(row));
    }
    let of = |row: u32| {
        by_row
            .get(&row)
            .copied()
            .unwrap_or([u8::MAX; MAX_CURRENCIES])
    };
    Ok(segments.iter().map(|s| s.restocked(&changed, of)).collect())
}

/// A segment of an index version after a follow step that wrote
/// documents, as the step found it in the version before.
pub enum Kept<'a> {
    /// Held before, no document of it deleted since.
    Same(&'a SegmentDocs),
    /// Held before, some documents deleted since: whether a document is
    /// still alive.
    Deleted(&'a SegmentDocs, Box<dyn Fn(u32) -> bool + 'a>),
    /// Not held before (written by the step, or merged): each document's
    /// row.
    New(Box<[u32]>),
}

/// What a search reads of the segments `kept` says, after a step that
/// wrote documents but left what facets count by as it was
/// (`holds_but_stock_and_prices` of `listing` against the listing
/// `layout` was made with, and the same rows in the same tie order): the
/// segments held are shared, only their deleted documents unset, and only
/// the new segments' documents read (not every row's, as a build does: at
/// 1,000,000 products that was most of such a step). None when a new
/// document's brand and category are a pair the layout lacks.
pub fn kept(
    kept: Vec<Kept<'_>>,
    listing: &Listing<ProductSchema>,
    layout: &Layout,
    tie_order: &[u32],
) -> Result<Option<Vec<SegmentDocs>>, ServiceError> {
    let brand = &listing.column("brand", 0)?.rank;
    let category = &listing.column("category", 0)?.rank;
    let attributes = listing.column("attributes", 0)?;
    let narrow = narrow(layout.pairs.len(), attributes.distinct.len());
    let stock_buckets = StockBuckets::new(listing)?;
    let pairs: foldhash::HashMap<(u32, u32), u32> = (layout.pairs.iter().enumerate())
        .map(|(at, &pair)| (pair, at as u32))
        .collect();
    let mut segments = Vec::with_capacity(kept.len());
    for segment in kept {
        segments.push(match segment {
            Kept::Same(docs) => docs.clone(),
            Kept::Deleted(docs, alive) => docs.with_deletes(alive),
            Kept::New(rows) => {
                let pair = |row: u32| pairs.get(&(brand[row as usize], category[row as usize]));
                let len = listing.len();
                if rows
                    .iter()
                    .any(|&row| (row as usize) < len && pair(row).is_none())
                {
                    return Ok(None);
                }
                SegmentDocs::made(rows, len, tie_order, narrow, |row| FacetRow {
                    brand_category: pair(row).copied().unwrap_or(u32::MAX),
                    attributes: attributes.rank[row as usize],
                    stock_bucket: stock_buckets.of(row),
                })
            }
        });
    }
    Ok(Some(segments))
}
