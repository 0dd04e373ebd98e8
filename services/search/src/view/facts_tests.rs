use prost::Message;
use storefront_domain::catalog::{ProductFacts, summary};
use storefront_domain::interned::Interned;
use storefront_proto::Timestamp;
use storefront_proto::catalog::v1::{Product, Variant};
use storefront_proto::common::v1::{LocalizedString, Money, ResourceMeta};

use super::facts;
use crate::build::tests::product;
use crate::view::IndexedProduct;

/// The facts as the build made them before: of the summary decoded.
fn decoded(bytes: &[u8]) -> ProductFacts {
    let p: Product = IndexedProduct::decode(bytes).unwrap().into();
    ProductFacts::of(&p)
}

#[test]
fn facts_read_in_place_are_those_of_the_decoded_product() {
    let mut strings = Interned::default();
    for p in (0..700).map(product).chain([Product::default()]) {
        let bytes = summary(&p).encode_to_vec();
        let read = facts(&bytes, &mut strings).unwrap();
        assert_eq!(read, decoded(&bytes));
        assert_eq!(read, ProductFacts::of(&p), "{}", p.key);
    }
}

#[test]
fn a_field_written_twice_reads_as_prost_reads_it() {
    // Concatenated encodings are one message merged: scalars and strings
    // keep the last, messages merge, maps and repeated fields add up.
    let first = product(7);
    let money = |code: &str| Money {
        currency_code: code.into(),
        cent_amount: 12,
        fraction_digits: 2,
    };
    let second = Product {
        meta: Some(ResourceMeta {
            created_at: Some(Timestamp {
                seconds: 0,
                nanos: 9,
            }),
            ..Default::default()
        }),
        name: Some(LocalizedString {
            values: [("en-AU".to_string(), "Later".to_string())].into(),
        }),
        brand: "Kea".into(),
        category_ids: vec!["sale".into()],
        status: 1,
        master_variant: Some(Variant {
            prices: vec![money("EUR"), money("")],
            ..Default::default()
        }),
        variant_attributes: vec!["colour=c0".into()],
        ..Default::default()
    };
    let mut bytes = first.encode_to_vec();
    second.encode(&mut bytes).unwrap();
    let read = facts(&bytes, &mut Interned::default()).unwrap();
    assert_eq!(read, decoded(&bytes));
    assert_eq!(&*read.id, &*first.meta.as_ref().unwrap().id);
    assert_eq!(read.created_at, Some((1_700_000_007, 9)));
    assert_eq!(read.name.as_deref(), Some("Later"));
    assert_eq!(&*read.brand, "Kea");
    assert_eq!(read.category_ids.len(), first.category_ids.len() + 1);
    assert_eq!(
        read.prices.len(),
        3,
        "AUD, NZD, EUR: a code unread is left out"
    );
}

#[test]
fn broken_bytes_are_refused_as_prost_refuses_them() {
    let bytes = summary(&product(8)).encode_to_vec();
    for cut in 1..bytes.len() {
        let short = &bytes[..cut];
        if IndexedProduct::decode(short).is_err() {
            assert!(
                facts(short, &mut Interned::default()).is_err(),
                "cut at {cut}"
            );
        }
    }
    // The status (tag 8) as a string, then the key (2) not UTF-8.
    for wrong in [
        [(8 << 3) | 2, 1, b'x'].as_slice(),
        &[(2 << 3) | 2, 2, 0xff, 0xfe],
    ] {
        assert!(IndexedProduct::decode(wrong).is_err());
        assert!(facts(wrong, &mut Interned::default()).is_err());
    }
}
