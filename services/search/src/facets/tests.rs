//! Facet counts against what the products say, narrow and wide.

use std::collections::HashMap;

use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts, attribute};
use storefront_domain::currencies::Code;
use storefront_domain::listing::Listing;

use super::{Counts, FacetRows, Packed, bucket, facets};

#[test]
fn prices_fall_in_half_open_buckets() {
    assert_eq!(
        [0, 2_499, 2_500, 9_999, 19_999, 20_000, 10_000_000, -1].map(bucket),
        [0, 0, 1, 2, 3, 4, 4, u8::MAX]
    );
}

pub(super) fn product(i: u32) -> ProductFacts {
    ProductFacts {
        id: format!("p-{i:04}").into(),
        key: format!("k-{i}").into(),
        name: None,
        brand: format!("brand-{}", i % 7).into(),
        category_ids: (0..i % 3)
            .map(|c| format!("cat-{}", (i + c) % 5).into())
            .collect(),
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
        attributes: attributes(i).into_iter().map(Into::into).collect(),
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
    assert!(matches!(narrow.packed, Packed::Narrow(_)));
    let wide = FacetRows::wide(&listing);
    let no_labels = HashMap::new();
    let hits: Vec<u32> = (0..listing.len() as u32).filter(|r| r % 5 != 1).collect();
    let count = |rows: &FacetRows, currency| {
        let mut counts = Counts::new(&listing, rows.layout(), currency).unwrap();
        for &row in &hits {
            rows.count(&mut counts, row);
        }
        facets(&no_labels, counts)
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
                .filter(|&&h| *products[h as usize].brand == *brand.value)
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
                let expected = hits.iter().filter(|&&h| {
                    products[h as usize]
                        .attributes
                        .contains(&member.as_str().into())
                });
                assert_eq!(value.count, expected.count() as u64, "{member:?}");
            }
        }
    }
}
