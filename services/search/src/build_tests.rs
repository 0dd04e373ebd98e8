use bytes::Bytes;
use prost::Message;
use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts, ProductSchema, attribute};
use storefront_domain::currencies::Currencies;
use storefront_domain::listing::Listing;
use storefront_proto::Timestamp;
use storefront_proto::catalog::v1::{Product, Variant};
use storefront_proto::common::v1::{LocalizedString, Money, ResourceMeta};

use super::{Batch, build};

fn localized(text: String) -> Option<LocalizedString> {
    Some(LocalizedString {
        values: [
            ("en-AU".to_string(), text.clone()),
            ("de-DE".to_string(), text),
        ]
        .into(),
    })
}

/// Products differing in every field a listing indexes, some without a
/// name, a price in one currency or any attribute.
pub(crate) fn product(i: u32) -> Product {
    let money = |code: &str, cents: i64| Money {
        currency_code: code.into(),
        cent_amount: cents,
        fraction_digits: 2,
    };
    let mut prices = vec![money("AUD", i64::from(i % 41) * 100)];
    if !i.is_multiple_of(3) {
        prices.push(money("NZD", i64::from(i % 29) * 110));
    }
    Product {
        meta: Some(ResourceMeta {
            id: format!("p-{:05}", (i * 7_919) % 10_007),
            created_at: Some(Timestamp {
                seconds: 1_700_000_000 + i64::from(i % 17),
                nanos: 0,
            }),
            ..Default::default()
        }),
        key: format!("key-{i}"),
        name: if i.is_multiple_of(11) {
            None
        } else {
            localized(format!("Shirt {}", i % 13))
        },
        description: localized(format!("Described {i}")),
        brand: format!("Brand {}", i % 5),
        category_ids: (0..i % 3).map(|c| format!("c-{c}")).collect(),
        status: (i % 2) as i32,
        featured: i.is_multiple_of(4),
        popularity: i % 9,
        in_stock: !i.is_multiple_of(6),
        master_variant: Some(Variant {
            prices,
            ..Default::default()
        }),
        // As the export lists them (a summary has no variants).
        variant_attributes: if i.is_multiple_of(5) {
            Vec::new()
        } else {
            let mut listed = vec![
                attribute("size", "S"),
                attribute("colour", &format!("c{}", i % 4)),
            ];
            listed.sort();
            listed
        },
        ..Default::default()
    }
}

#[test]
fn the_listing_read_back_from_summaries_is_the_one_of_the_products() {
    let products: Vec<Product> = (0..700).map(product).collect();
    let bodies: Vec<Bytes> = products
        .iter()
        .map(|p| Bytes::from(p.encode_to_vec()))
        .collect();
    let currencies = std::sync::Arc::new(Currencies::demo());
    // Two batches: rows follow the export across them.
    let (first, second) = bodies.split_at(300);
    let batches = [first.to_vec(), second.to_vec()].map(Batch::Encoded);
    let indexed = build(batches.into_iter(), &[], currencies.clone()).unwrap();
    let facts: Vec<ProductFacts> = products.iter().map(ProductFacts::of).collect();
    let expected = Listing::<ProductSchema>::build(&facts, PRODUCT_FIELDS, currencies.codes());
    assert_eq!(indexed.listing.len(), products.len());
    for field in PRODUCT_FIELDS {
        for context in 0..currencies.len() {
            let (built, wanted) = (
                indexed.listing.column(field, context).unwrap(),
                expected.column(field, context).unwrap(),
            );
            for row in 0..products.len() as u32 {
                assert_eq!(built.value(row), wanted.value(row), "{field} of row {row}");
            }
        }
    }
}
