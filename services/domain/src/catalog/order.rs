//! Orders of a catalog's products other than their rows.

use std::sync::Arc;

use storefront_proto::error::ServiceError;

use super::{ProductFacts, ProductSchema};
use crate::listing::Listing;

/// Product ids in id order with their rows: sorted eight bytes at a time
/// (`listing::sorted_texts`), not compared whole (a million random ids
/// compared whole missed the cache at every compare).
pub fn ids_in_order(facts: &[ProductFacts]) -> Vec<(Arc<str>, u32)> {
    crate::listing::sorted_texts(facts.len(), |row| &facts[row as usize].id)
        .into_iter()
        .map(|row| ((&*facts[row as usize].id).into(), row))
        .collect()
}

/// The rows in tie order, the order search breaks equal relevance by:
/// more popular first (the popularity column's descending order), then by
/// row.
pub fn tie_rows(listing: &Listing<ProductSchema>) -> Result<Vec<u32>, ServiceError> {
    let popularity = listing.column("popularity", 0)?;
    let mut order: Vec<u32> = popularity.rows(true, 0).collect();
    let rank = &popularity.rank;
    for equal in order.chunk_by_mut(|&a, &b| rank[a as usize] == rank[b as usize]) {
        equal.sort_unstable();
    }
    Ok(order)
}
