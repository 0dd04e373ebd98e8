//! Facets of a search: counts of brands, categories, price ranges and
//! stock over every hit that passed the filters. Each row's facet values
//! are packed together once per index, so counting a hit reads one place.

use std::collections::HashMap;

use storefront_common::catalog::{CURRENCIES, ProductSchema};
use storefront_common::error::ServiceError;
use storefront_common::listing::{Column, Key, Listing, MISSING, Ranked};
use storefront_proto::search::v1::{FacetValue, Facets, PriceRange};

/// Price facet buckets, in cents of the requested currency; `to` 0: open.
pub const PRICE_BUCKETS: &[(i64, i64)] = &[
    (0, 2_500),
    (2_500, 5_000),
    (5_000, 10_000),
    (10_000, 20_000),
    (20_000, 0),
];

/// No bucket (a row without a price in that currency).
const NO_BUCKET: u8 = u8::MAX;

/// One row's facet values: value ranks in their listing columns
/// (`MISSING` when absent) and its price bucket per currency.
#[derive(Debug, Clone, Copy)]
struct FacetRow {
    brand: u32,
    category: u32,
    in_stock: u32,
    buckets: [u8; CURRENCIES.len()],
}

pub struct FacetRows {
    rows: Vec<FacetRow>,
}

fn bucket(cents: i64) -> u8 {
    PRICE_BUCKETS
        .iter()
        .position(|&(from, to)| cents >= from && (to == 0 || cents < to))
        .map_or(NO_BUCKET, |b| b as u8)
}

impl FacetRows {
    pub fn build(listing: &Listing<ProductSchema>) -> Result<Self, ServiceError> {
        let brand = &listing.column("brand", 0)?.rank;
        let category = &listing.column("category", 0)?.rank;
        let in_stock = &listing.column("inStock", 0)?.rank;
        let prices = (0..CURRENCIES.len())
            .map(|c| listing.column("price", c))
            .collect::<Result<Vec<_>, _>>()?;
        // A bucket per distinct price, then per row.
        let buckets: Vec<Vec<u8>> = prices
            .iter()
            .map(|column| {
                column
                    .distinct
                    .iter()
                    .map(|k| match k {
                        Key::Integer(cents) => bucket(*cents),
                        _ => NO_BUCKET,
                    })
                    .collect()
            })
            .collect();
        let rows = (0..listing.len())
            .map(|row| FacetRow {
                brand: brand[row],
                category: category[row],
                in_stock: in_stock[row],
                buckets: std::array::from_fn(|c| {
                    let rank = prices[c].rank[row];
                    buckets[c].get(rank as usize).copied().unwrap_or(NO_BUCKET)
                }),
            })
            .collect();
        Ok(Self { rows })
    }
}

fn add(counts: &mut [u64], rank: u32) {
    if rank != MISSING
        && let Some(c) = counts.get_mut(rank as usize)
    {
        *c += 1;
    }
}

/// Facets over `hits` in one pass over their packed rows.
pub fn facets(
    listing: &Listing<ProductSchema>,
    rows: &FacetRows,
    category_keys: &HashMap<String, String>,
    hits: &[Ranked],
    currency: usize,
) -> Result<Facets, ServiceError> {
    let brand = listing.column("brand", currency)?;
    let category = listing.column("category", currency)?;
    let in_stock = listing.column("inStock", currency)?;
    let mut brands = vec![0; brand.distinct.len()];
    let mut categories = vec![0; category.distinct.len()];
    let mut stock = vec![0; in_stock.distinct.len()];
    let mut buckets = vec![0u64; PRICE_BUCKETS.len()];
    for hit in hits {
        let Some(row) = rows.rows.get(hit.row as usize) else {
            continue;
        };
        add(&mut brands, row.brand);
        add(&mut categories, row.category);
        add(&mut stock, row.in_stock);
        if let Some(b) = buckets.get_mut(usize::from(row.buckets[currency])) {
            *b += 1;
        }
    }
    Ok(Facets {
        brands: counted(brand, &brands, |_| String::new()),
        categories: counted(category, &categories, |id| {
            category_keys.get(id).cloned().unwrap_or_default()
        }),
        prices: PRICE_BUCKETS
            .iter()
            .zip(buckets)
            .map(|(&(from, to), count)| PriceRange { from, to, count })
            .collect(),
        in_stock: counted(in_stock, &stock, |_| String::new()),
    })
}

/// Facet values from `counts` (per distinct value of `column`), most
/// frequent first; a set of ids counts for each of its ids.
fn counted(column: &Column, counts: &[u64], label: impl Fn(&str) -> String) -> Vec<FacetValue> {
    let mut per_value: HashMap<&str, u64> = HashMap::new();
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

#[cfg(test)]
mod tests {
    use super::bucket;

    #[test]
    fn prices_fall_in_half_open_buckets() {
        assert_eq!(
            [0, 2_499, 2_500, 9_999, 19_999, 20_000, 10_000_000, -1].map(bucket),
            [0, 0, 1, 2, 3, 4, 4, u8::MAX]
        );
    }
}
