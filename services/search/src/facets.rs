//! Facets of a search: counts of brands, categories, price ranges, stock
//! and variant attributes over every hit that passed the filters. Each row's facet values
//! are packed together once per index, so counting a hit reads one place.

use std::collections::HashMap;
use std::sync::Arc;

use storefront_domain::catalog::ProductSchema;
use storefront_domain::currencies::MAX_CURRENCIES;
use storefront_domain::listing::{Key, Listing, MISSING};
use storefront_platform::error::ServiceError;
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

/// A value's rank in its listing column, as narrow as the column allows:
/// a search counts facets of every hit, so the rows it reads should be
/// as few cache lines as possible (12 bytes a row when ranks fit in u16: two
/// ranks and a byte per currency).
trait Rank: Copy {
    fn new(rank: u32) -> Self;
    /// The rank as an index; none is past every value's.
    fn slot(self) -> usize;
}

impl Rank for u16 {
    fn new(rank: u32) -> Self {
        u16::try_from(rank).unwrap_or(u16::MAX)
    }
    fn slot(self) -> usize {
        usize::from(self)
    }
}

impl Rank for u8 {
    fn new(rank: u32) -> Self {
        u8::try_from(rank).unwrap_or(u8::MAX)
    }
    fn slot(self) -> usize {
        usize::from(self)
    }
}

impl Rank for u32 {
    fn new(rank: u32) -> Self {
        rank
    }
    fn slot(self) -> usize {
        self as usize
    }
}

/// One row's facet values: its brand and category together (a place in
/// `FacetRows::pairs`: a catalog has few of the pairs it could, so one
/// count serves both), the rank of its set of variant attributes (none
/// when absent), and per currency its stock slot and price bucket
/// together (`stock * BUCKET_SLOTS + bucket`, for the same reason): three
/// counts a hit (`Counts::add`).
#[derive(Debug, Clone, Copy)]
#[cfg_attr(test, derive(PartialEq))]
struct FacetRow<R> {
    brand_category: R,
    attributes: R,
    stock_bucket: [u8; MAX_CURRENCIES],
}

impl FacetRow<u32> {
    /// These values, with ranks as narrow as `R`.
    fn narrowed<R: Rank>(self) -> FacetRow<R> {
        FacetRow {
            brand_category: R::new(self.brand_category),
            attributes: R::new(self.attributes),
            stock_bucket: self.stock_bucket,
        }
    }
}

/// Whether ranks fit in u16 (`Packed::Narrow`) with `pairs` pairs of
/// brand and category and `sets` sets of attributes.
fn narrow(pairs: usize, sets: usize) -> bool {
    pairs.max(sets) < usize::from(u16::MAX)
}

/// Price buckets and one for none.
const BUCKET_SLOTS: usize = PRICE_BUCKETS.len() + 1;

/// Stock values and one for none.
fn stock_slots(listing: &Listing<ProductSchema>) -> Result<usize, ServiceError> {
    Ok(listing.column("inStock", 0)?.distinct.len() + 1)
}

pub struct FacetRows {
    packed: Packed,
    layout: Arc<Layout>,
}

enum Packed {
    /// Fewer than `u16::MAX` pairs and sets of attributes.
    Narrow(Vec<FacetRow<u16>>),
    Wide(Vec<FacetRow<u32>>),
}

fn bucket(cents: i64) -> u8 {
    PRICE_BUCKETS
        .iter()
        .position(|&(from, to)| cents >= from && (to == 0 || cents < to))
        .map_or(NO_BUCKET, |b| b as u8)
}

/// Each row's place in `pairs`, and the pairs.
type PairsOfRows = (Vec<u32>, Vec<(u32, u32)>);

/// Each row's place in the pairs of (brand rank, category rank) the rows
/// have, and those pairs.
fn pairs(listing: &Listing<ProductSchema>) -> Result<PairsOfRows, ServiceError> {
    let brand = &listing.column("brand", 0)?.rank;
    let category = &listing.column("category", 0)?.rank;
    let mut seen: foldhash::HashMap<(u32, u32), u32> = Default::default();
    let mut pairs = Vec::new();
    let at = (brand.iter().zip(category))
        .map(|(&b, &c)| {
            *seen.entry((b, c)).or_insert_with(|| {
                pairs.push((b, c));
                pairs.len() as u32 - 1
            })
        })
        .collect();
    Ok((at, pairs))
}

fn packed<R: Rank>(
    listing: &Listing<ProductSchema>,
    buckets: &[Vec<u8>],
    pair: &[u32],
) -> Result<Vec<FacetRow<R>>, ServiceError> {
    let attributes = &listing.column("attributes", 0)?.rank;
    let in_stock = &listing.column("inStock", 0)?.rank;
    let none = stock_slots(listing)? - 1;
    let prices = (0..buckets.len())
        .map(|c| listing.column("price", c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((0..listing.len())
        .map(|row| FacetRow {
            brand_category: R::new(pair[row]),
            attributes: R::new(attributes[row]),
            stock_bucket: std::array::from_fn(|c| {
                let Some(price) = prices.get(c) else {
                    return u8::MAX;
                };
                let rank = price.rank[row];
                let bucket = buckets[c].get(rank as usize).copied().unwrap_or(NO_BUCKET);
                stock_bucket(in_stock[row], none, bucket)
            }),
        })
        .collect())
}

/// A row's stock slot (its rank in the stock column; `none` past the
/// values) and price bucket together, as `FacetRow::stock_bucket` holds
/// them.
fn stock_bucket(stock_rank: u32, none: usize, bucket: u8) -> u8 {
    let stock = (stock_rank as usize).min(none);
    let slot = stock * BUCKET_SLOTS + usize::from(bucket).min(BUCKET_SLOTS - 1);
    u8::try_from(slot).unwrap_or(u8::MAX)
}

/// Per currency, the bucket of each distinct price.
fn price_buckets(listing: &Listing<ProductSchema>) -> Result<Vec<Vec<u8>>, ServiceError> {
    (0..listing.contexts().min(MAX_CURRENCIES))
        .map(|c| {
            Ok(listing
                .column("price", c)?
                .distinct
                .iter()
                .map(|k| match k {
                    Key::Integer(cents) => bucket(*cents),
                    _ => NO_BUCKET,
                })
                .collect())
        })
        .collect()
}

mod attributes;
mod docs;
mod layout;
mod restock;
pub use docs::{BATCH, SegmentDocs};
pub use layout::Layout;
use layout::Spread;
pub use restock::{Kept, holds_but_stock_and_prices, kept, restocked};

/// Values of no facet (a document without a row).
fn blank<R: Rank>() -> FacetRow<R> {
    FacetRow {
        brand_category: R::new(MISSING),
        attributes: R::new(MISSING),
        stock_bucket: [u8::MAX; MAX_CURRENCIES],
    }
}

impl FacetRows {
    pub fn build(listing: &Listing<ProductSchema>) -> Result<Self, ServiceError> {
        let buckets = price_buckets(listing)?;
        let (at, pairs) = pairs(listing)?;
        let sets = listing.column("attributes", 0)?.distinct.len();
        let narrow = narrow(pairs.len(), sets);
        let column = |field| listing.column(field, 0);
        let columns = [
            column("brand")?,
            column("category")?,
            column("inStock")?,
            column("attributes")?,
        ];
        Ok(Self {
            packed: match narrow {
                true => Packed::Narrow(packed(listing, &buckets, &at)?),
                false => Packed::Wide(packed(listing, &buckets, &at)?),
            },
            layout: Arc::new(Layout::new(pairs, columns)),
        })
    }

    /// What rows count by, for `Counts::new`.
    pub fn layout(&self) -> &Arc<Layout> {
        &self.layout
    }
}

/// One more hit with value `slot`; a slot past the values (none) goes to
/// the last, which is never reported: no branch per hit.
#[inline]
fn bump(counts: &mut [u64], slot: usize) {
    bump_by(counts, slot, 1);
}

#[inline]
fn bump_by(counts: &mut [u64], slot: usize, by: u64) {
    if let Some(last) = counts.len().checked_sub(1) {
        counts[slot.min(last)] += by;
    }
}

/// Counts per value of each facet, in one currency, as hits are found.
pub struct Counts {
    currency: usize,
    /// By pair of brand and category (`FacetRow::brand_category`), and
    /// read out by the layout's columns.
    layout: Arc<Layout>,
    brand_categories: Vec<u64>,
    /// By set of variant attributes (`FacetRow::attributes`).
    attributes: Vec<u64>,
    /// By stock slot and price bucket (`FacetRow::stock_bucket`).
    stock_buckets: Vec<u64>,
}

impl Counts {
    /// No hit counted yet, in `currency`, by the rows' `layout`.
    pub fn new(
        listing: &Listing<ProductSchema>,
        layout: &Arc<Layout>,
        currency: usize,
    ) -> Result<Self, ServiceError> {
        let values =
            |field: &str| Ok::<_, ServiceError>(listing.column(field, currency)?.distinct.len());
        // One slot more each: hits without a value (`bump`).
        Ok(Self {
            currency,
            layout: layout.clone(),
            brand_categories: vec![0; layout.pairs.len() + 1],
            attributes: vec![0; values("attributes")? + 1],
            stock_buckets: vec![0; stock_slots(listing)? * BUCKET_SLOTS],
        })
    }

    #[inline]
    fn add<R: Rank>(&mut self, row: &FacetRow<R>) {
        bump(&mut self.brand_categories, row.brand_category.slot());
        bump(&mut self.attributes, row.attributes.slot());
        let both = row
            .stock_bucket
            .get(self.currency)
            .copied()
            .unwrap_or(u8::MAX);
        bump(&mut self.stock_buckets, usize::from(both));
    }
}

// By row: what the tests check a search's counts (by document) against.
#[cfg(test)]
impl FacetRows {
    /// As `build`, wide whatever the values.
    pub fn wide(listing: &Listing<ProductSchema>) -> Self {
        let mut rows = Self::build(listing).unwrap();
        let (at, _) = pairs(listing).unwrap();
        let buckets = price_buckets(listing).unwrap();
        rows.packed = Packed::Wide(packed(listing, &buckets, &at).unwrap());
        rows
    }

    /// Counts the facet values of row `at` into `counts`.
    pub fn count(&self, counts: &mut Counts, at: u32) {
        match &self.packed {
            Packed::Narrow(rows) => rows.get(at as usize).map(|r| counts.add(r)),
            Packed::Wide(rows) => rows.get(at as usize).map(|r| counts.add(r)),
        };
    }
}

/// The facets of what `counts` counted, most frequent values first.
pub fn facets(category_keys: &HashMap<String, String>, counts: Counts) -> Facets {
    let layout = &*counts.layout;
    let both = &counts.stock_buckets;
    let stock: Vec<u64> = both.chunks(BUCKET_SLOTS).map(|s| s.iter().sum()).collect();
    let buckets = (0..BUCKET_SLOTS).map(|b| both.iter().skip(b).step_by(BUCKET_SLOTS).sum());
    // Pairs spread to their brand and category (a rank past the values,
    // none, to the last slot, never reported).
    let mut brands = vec![0; layout.brands.len() + 1];
    let mut categories = vec![0; layout.categories.len() + 1];
    let pairs = layout.pairs.iter().zip(&counts.brand_categories);
    for (&(b, c), &count) in pairs.filter(|(_, count)| **count > 0) {
        bump_by(&mut brands, b as usize, count);
        bump_by(&mut categories, c as usize, count);
    }
    Facets {
        brands: counted(&layout.brands, &brands, |_| String::new()),
        categories: counted(&layout.categories, &categories, |id| {
            category_keys.get(id).cloned().unwrap_or_default()
        }),
        prices: PRICE_BUCKETS
            .iter()
            .zip(buckets)
            .map(|(&(from, to), count)| PriceRange { from, to, count })
            .collect(),
        in_stock: counted(&layout.in_stock, &stock, |_| String::new()),
        attributes: attributes::counted(&layout.attributes, &counts.attributes),
    }
}

/// Facet values from `counts` (per distinct value of the column `spread`
/// was made of), most frequent first; a set of ids counts for each of its
/// ids.
fn counted(spread: &Spread, counts: &[u64], label: impl Fn(&str) -> String) -> Vec<FacetValue> {
    let by_value = spread.spread(counts);
    let mut values: Vec<FacetValue> = (by_value.iter().enumerate())
        .filter(|(_, count)| **count > 0)
        .map(|(id, &count)| {
            let value = spread.value(id);
            FacetValue {
                label: label(value),
                value: value.to_string(),
                count,
            }
        })
        .collect();
    values.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    values
}

#[cfg(test)]
mod tests;
