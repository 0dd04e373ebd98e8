//! Facets of a search: counts of brands, categories, price ranges, stock
//! and variant attributes over every hit that passed the filters. Each row's facet values
//! are packed together once per index, so counting a hit reads one place.

use std::collections::HashMap;

use storefront_domain::catalog::ProductSchema;
use storefront_domain::currencies::MAX_CURRENCIES;
use storefront_domain::listing::{Column, Key, Listing, MISSING};
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
/// as few cache lines as possible (14 bytes a row when ranks fit in u16: three
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

/// One row's facet values: value ranks in their listing columns (none
/// when absent), and per currency its stock slot and price bucket
/// together (`stock * BUCKET_SLOTS + bucket`): nearly every match has one
/// of their few values, so one count serves both (`Counts::add`).
#[derive(Debug, Clone, Copy)]
struct FacetRow<R> {
    brand: R,
    category: R,
    /// The rank of the product's set of variant attributes.
    attributes: R,
    stock_bucket: [u8; MAX_CURRENCIES],
}

/// Price buckets and one for none.
const BUCKET_SLOTS: usize = PRICE_BUCKETS.len() + 1;

/// Stock values and one for none.
fn stock_slots(listing: &Listing<ProductSchema>) -> Result<usize, ServiceError> {
    Ok(listing.column("inStock", 0)?.distinct.len() + 1)
}

pub struct FacetRows(Packed);

enum Packed {
    /// Every brand and category rank below `u16::MAX`.
    Narrow(Vec<FacetRow<u16>>),
    Wide(Vec<FacetRow<u32>>),
}

fn bucket(cents: i64) -> u8 {
    PRICE_BUCKETS
        .iter()
        .position(|&(from, to)| cents >= from && (to == 0 || cents < to))
        .map_or(NO_BUCKET, |b| b as u8)
}

fn packed<R: Rank>(
    listing: &Listing<ProductSchema>,
    buckets: &[Vec<u8>],
) -> Result<Vec<FacetRow<R>>, ServiceError> {
    let brand = &listing.column("brand", 0)?.rank;
    let category = &listing.column("category", 0)?.rank;
    let attributes = &listing.column("attributes", 0)?.rank;
    let in_stock = &listing.column("inStock", 0)?.rank;
    let none = stock_slots(listing)? - 1;
    let prices = (0..buckets.len())
        .map(|c| listing.column("price", c))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((0..listing.len())
        .map(|row| FacetRow {
            brand: R::new(brand[row]),
            category: R::new(category[row]),
            attributes: R::new(attributes[row]),
            stock_bucket: std::array::from_fn(|c| {
                let Some(price) = prices.get(c) else {
                    return u8::MAX;
                };
                let rank = price.rank[row];
                let bucket = buckets[c].get(rank as usize).copied().unwrap_or(NO_BUCKET);
                let stock = (in_stock[row] as usize).min(none);
                let slot = stock * BUCKET_SLOTS + usize::from(bucket).min(BUCKET_SLOTS - 1);
                u8::try_from(slot).unwrap_or(u8::MAX)
            }),
        })
        .collect())
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
pub use docs::{BATCH, SegmentDocs};

/// Values of no facet (a document without a row).
fn blank<R: Rank>() -> FacetRow<R> {
    FacetRow {
        brand: R::new(MISSING),
        category: R::new(MISSING),
        attributes: R::new(MISSING),
        stock_bucket: [u8::MAX; MAX_CURRENCIES],
    }
}

impl FacetRows {
    pub fn build(listing: &Listing<ProductSchema>) -> Result<Self, ServiceError> {
        let buckets = price_buckets(listing)?;
        let widest = ["brand", "category", "attributes"]
            .iter()
            .map(|field| Ok(listing.column(field, 0)?.distinct.len()))
            .collect::<Result<Vec<_>, ServiceError>>()?;
        Ok(Self(if widest.iter().all(|&n| n < usize::from(u16::MAX)) {
            Packed::Narrow(packed(listing, &buckets)?)
        } else {
            Packed::Wide(packed(listing, &buckets)?)
        }))
    }
}

/// One more hit with value `slot`; a slot past the values (none) goes to
/// the last, which is never reported: no branch per hit.
#[inline]
fn bump(counts: &mut [u64], slot: usize) {
    if let Some(last) = counts.len().checked_sub(1) {
        counts[slot.min(last)] += 1;
    }
}

/// Counts per value of each facet, in one currency, as hits are found.
pub struct Counts {
    currency: usize,
    brands: Vec<u64>,
    categories: Vec<u64>,
    /// By set of variant attributes (`FacetRow::attributes`).
    attributes: Vec<u64>,
    /// By stock slot and price bucket (`FacetRow::stock_bucket`).
    stock_buckets: Vec<u64>,
}

impl Counts {
    /// No hit counted yet, in `currency`.
    pub fn new(listing: &Listing<ProductSchema>, currency: usize) -> Result<Self, ServiceError> {
        let values =
            |field: &str| Ok::<_, ServiceError>(listing.column(field, currency)?.distinct.len());
        // One slot more each: hits without a value (`bump`).
        Ok(Self {
            currency,
            brands: vec![0; values("brand")? + 1],
            categories: vec![0; values("category")? + 1],
            attributes: vec![0; values("attributes")? + 1],
            stock_buckets: vec![0; stock_slots(listing)? * BUCKET_SLOTS],
        })
    }

    #[inline]
    fn add<R: Rank>(&mut self, row: &FacetRow<R>) {
        bump(&mut self.brands, row.brand.slot());
        bump(&mut self.categories, row.category.slot());
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
    /// Counts the facet values of row `at` into `counts`.
    pub fn count(&self, counts: &mut Counts, at: u32) {
        match &self.0 {
            Packed::Narrow(rows) => rows.get(at as usize).map(|r| counts.add(r)),
            Packed::Wide(rows) => rows.get(at as usize).map(|r| counts.add(r)),
        };
    }
}

/// The facets of what `counts` counted, most frequent values first.
pub fn facets(
    listing: &Listing<ProductSchema>,
    category_keys: &HashMap<String, String>,
    counts: Counts,
) -> Result<Facets, ServiceError> {
    let currency = counts.currency;
    let brand = listing.column("brand", currency)?;
    let category = listing.column("category", currency)?;
    let in_stock = listing.column("inStock", currency)?;
    let both = &counts.stock_buckets;
    let stock: Vec<u64> = both.chunks(BUCKET_SLOTS).map(|s| s.iter().sum()).collect();
    let buckets = (0..BUCKET_SLOTS).map(|b| both.iter().skip(b).step_by(BUCKET_SLOTS).sum());
    Ok(Facets {
        brands: counted(brand, &counts.brands, |_| String::new()),
        categories: counted(category, &counts.categories, |id| {
            category_keys.get(id).cloned().unwrap_or_default()
        }),
        prices: PRICE_BUCKETS
            .iter()
            .zip(buckets)
            .map(|(&(from, to), count)| PriceRange { from, to, count })
            .collect(),
        in_stock: counted(in_stock, &stock, |_| String::new()),
        attributes: attributes::counted(
            listing.column("attributes", currency)?,
            &counts.attributes,
        ),
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
    use std::collections::HashMap;

    use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts, attribute};
    use storefront_domain::currencies::Code;
    use storefront_domain::listing::Listing;

    use super::{Counts, FacetRows, Packed, bucket, facets, packed, price_buckets};

    #[test]
    fn prices_fall_in_half_open_buckets() {
        assert_eq!(
            [0, 2_499, 2_500, 9_999, 19_999, 20_000, 10_000_000, -1].map(bucket),
            [0, 0, 1, 2, 3, 4, 4, u8::MAX]
        );
    }

    pub(super) fn product(i: u32) -> ProductFacts {
        ProductFacts {
            id: format!("p-{i:04}"),
            key: format!("k-{i}"),
            name: None,
            brand: format!("brand-{}", i % 7),
            category_ids: (0..i % 3).map(|c| format!("cat-{}", (i + c) % 5)).collect(),
            status: 0,
            featured: i.is_multiple_of(2),
            popularity: i,
            in_stock: i.is_multiple_of(3),
            created_at: None,
            prices: [
                Some(i64::from(i) * 97),
                (!i.is_multiple_of(4)).then_some(i64::from(i) * 131),
            ]
            .into_iter()
            .zip(codes())
            .filter_map(|(cents, code)| Some((code, cents?)))
            .collect(),
            attributes: attributes(i),
        }
    }

    /// A colour (two for every fifth product) and a size.
    fn attributes(i: u32) -> Vec<String> {
        let mut all = vec![
            attribute("colour", &format!("c{}", i % 3)),
            attribute("size", &format!("s{}", i % 4)),
        ];
        if i.is_multiple_of(5) {
            all.push(attribute("colour", &format!("c{}", (i + 1) % 3)));
        }
        all.sort();
        all
    }

    /// The currencies the tests price in.
    pub(super) fn codes() -> [Code; 2] {
        ["AUD", "NZD"].map(|c| Code::parse(c).expect("a code"))
    }

    fn price(p: &ProductFacts, currency: usize) -> Option<i64> {
        let code = codes()[currency];
        p.prices.iter().find(|(c, _)| *c == code).map(|&(_, v)| v)
    }

    /// Narrow (u16) and wide (u32) rows count the same; both count what
    /// the products say.
    #[test]
    fn narrow_and_wide_rows_count_the_same() {
        let products: Vec<ProductFacts> = (0..400).map(product).collect();
        let listing = Listing::build(&products, PRODUCT_FIELDS, &codes());
        let narrow = FacetRows::build(&listing).unwrap();
        assert!(matches!(narrow.0, Packed::Narrow(_)));
        let buckets = price_buckets(&listing).unwrap();
        let wide = FacetRows(Packed::Wide(packed(&listing, &buckets).unwrap()));
        let no_labels = HashMap::new();
        let hits: Vec<u32> = (0..listing.len() as u32).filter(|r| r % 5 != 1).collect();
        let count = |rows: &FacetRows, currency| {
            let mut counts = Counts::new(&listing, currency).unwrap();
            for &row in &hits {
                rows.count(&mut counts, row);
            }
            facets(&listing, &no_labels, counts).unwrap()
        };
        for currency in 0..codes().len() {
            let a = count(&narrow, currency);
            let b = count(&wide, currency);
            assert_eq!(a, b);
            let priced = hits
                .iter()
                .filter(|&&h| price(&products[h as usize], currency).is_some())
                .count() as u64;
            assert_eq!(a.prices.iter().map(|p| p.count).sum::<u64>(), priced);
            // Stock and price bucket are counted as one slot: each apart.
            for range in &a.prices {
                let expected = hits.iter().filter(|&&h| {
                    price(&products[h as usize], currency)
                        .is_some_and(|c| c >= range.from && (range.to == 0 || c < range.to))
                });
                assert_eq!(range.count, expected.count() as u64, "{range:?}");
            }
            for value in &a.in_stock {
                let stocked = value.value == "true";
                let expected = hits
                    .iter()
                    .filter(|&&h| products[h as usize].in_stock == stocked);
                assert_eq!(value.count, expected.count() as u64, "{value:?}");
            }
            assert_eq!(a.in_stock.len(), 2);
            for brand in &a.brands {
                let expected = hits
                    .iter()
                    .filter(|&&h| products[h as usize].brand == brand.value)
                    .count() as u64;
                assert_eq!(brand.count, expected, "{}", brand.value);
            }
            assert_eq!(a.brands.len(), 7);
            assert_eq!(a.categories.len(), 5);
            // Attributes by name, each value counting the hits with it in
            // some variant: colour first (its top value has more hits).
            let names: Vec<&str> = a.attributes.iter().map(|f| f.name.as_str()).collect();
            assert_eq!(names, ["colour", "size"]);
            for facet in &a.attributes {
                assert_eq!(
                    facet.values.len(),
                    [3, 4][usize::from(facet.name == "size")]
                );
                for value in &facet.values {
                    let member = attribute(&facet.name, &value.value);
                    let expected = hits
                        .iter()
                        .filter(|&&h| products[h as usize].attributes.contains(&member));
                    assert_eq!(value.count, expected.count() as u64, "{member:?}");
                }
            }
        }
    }
}
