//! A follow step that wrote no document moved only stock and prices (the
//! live change a shop makes most): the facet values of the rows it changed
//! are patched into the segments it had, not built again for every row
//! (that took 20-55 ms a step at 100,000 products and 176-314 ms at
//! 1,000,000, two steps a second while changes flow).

use std::sync::Arc;

use storefront_domain::catalog::ProductSchema;
use storefront_domain::currencies::MAX_CURRENCIES;
use storefront_domain::listing::{Key, Listing};
use storefront_platform::error::ServiceError;

use super::docs::{SegmentDocs, set};
use super::{NO_BUCKET, bucket, stock_bucket, stock_slots};

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

/// `segments` with the stock and price of `rows` read again from
/// `listing` (of which `holds_but_stock_and_prices` holds).
pub fn restocked(
    segments: &[SegmentDocs],
    listing: &Listing<ProductSchema>,
    rows: &[u32],
) -> Result<Arc<[SegmentDocs]>, ServiceError> {
    let in_stock = &listing.column("inStock", 0)?.rank;
    let none = stock_slots(listing)? - 1;
    let prices = (0..listing.contexts().min(MAX_CURRENCIES))
        .map(|c| listing.column("price", c))
        .collect::<Result<Vec<_>, _>>()?;
    let stock_buckets = |row: u32| -> [u8; MAX_CURRENCIES] {
        std::array::from_fn(|c| {
            let Some(price) = prices.get(c) else {
                return u8::MAX;
            };
            let cents = price.distinct.get(price.rank[row as usize] as usize);
            let bucket = match cents {
                Some(Key::Integer(cents)) => bucket(*cents),
                _ => NO_BUCKET,
            };
            stock_bucket(in_stock[row as usize], none, bucket)
        })
    };
    let mut changed = vec![0u64; listing.len().div_ceil(64)];
    let mut by_row = std::collections::HashMap::with_capacity(rows.len());
    for &row in rows.iter().filter(|&&row| (row as usize) < listing.len()) {
        set(&mut changed, row);
        by_row.insert(row, stock_buckets(row));
    }
    let of = |row: u32| {
        by_row
            .get(&row)
            .copied()
            .unwrap_or([u8::MAX; MAX_CURRENCIES])
    };
    Ok(segments.iter().map(|s| s.restocked(&changed, of)).collect())
}
