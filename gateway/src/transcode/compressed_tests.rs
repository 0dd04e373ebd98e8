//! Products that arrive compressed are written as the same products
//! arriving encoded, held or not; a damaged block, a length past any
//! summary's or a missing dictionary is the downstream's fault (502), and
//! JSON held for one dictionary is never another's.

use axum::http::StatusCode;
use prost::Message as _;
use storefront_domain::compact::{Dictionary, Records};
use storefront_proto::catalog::v1::CompressedProduct;
use storefront_proto::common::v1::PageInfo;

use super::tests::{full, products, tail};
use super::{Compressed, ProductJson, paged};
use crate::error::ApiError;

/// `products(n)` compressed against `dictionary`, each with its tail.
fn compressed(n: usize, dictionary: &Dictionary) -> Vec<CompressedProduct> {
    let mut records = Records::new(dictionary.clone());
    let mut scratch = Vec::new();
    for p in &products(n).encoded {
        records.push(&p.body, &mut scratch);
    }
    (0..n)
        .map(|i| {
            let (lz4, length) = records.compressed(i).unwrap();
            CompressedProduct {
                lz4: bytes::Bytes::copy_from_slice(lz4),
                length,
                tail: tail().into(),
            }
        })
        .collect()
}

fn page(n: usize) -> Option<PageInfo> {
    Some(PageInfo {
        limit: n as u32,
        offset: 0,
        count: n as u32,
        total: 99,
    })
}

fn json(
    held: &ProductJson,
    products: &[CompressedProduct],
    dictionary: Option<&Dictionary>,
) -> Result<Vec<u8>, ApiError> {
    let compressed = Compressed {
        products,
        dictionary,
    };
    let none = Default::default();
    let written = paged(page(products.len()), &none, compressed, None, held)?;
    Ok(written.into_bytes())
}

fn typical() -> Dictionary {
    Dictionary::new(full(2).encode_to_vec())
}

#[test]
fn compressed_products_read_as_encoded_ones() {
    let dictionary = typical();
    let list = compressed(4, &dictionary);
    let plain = ProductJson::new(0);
    let want = paged(page(4), &products(4), Compressed::default(), None, &plain)
        .unwrap()
        .into_bytes();
    assert!(list.iter().all(|c| (c.lz4.len() as u32) < c.length));
    assert_eq!(json(&plain, &list, Some(&dictionary)).unwrap(), want);
    let held = ProductJson::new(1 << 20);
    for _ in 0..3 {
        assert_eq!(json(&held, &list, Some(&dictionary)).unwrap(), want);
    }
    assert_eq!(held.held().0, 4, "kept from the second time on");

    // The same blocks against another dictionary are other bytes: never
    // the JSON held for the first.
    let other = Dictionary::new(vec![b'x'; dictionary.bytes().len()]);
    assert_ne!(other.id(), dictionary.id());
    assert_ne!(json(&held, &list, Some(&other)).ok(), Some(want));
}

#[test]
fn a_damaged_compressed_product_is_a_bad_gateway() {
    let dictionary = typical();
    let held = ProductJson::new(1 << 20);
    let refused = |list: &[CompressedProduct], dictionary: Option<&Dictionary>| {
        let error = json(&held, list, dictionary).unwrap_err();
        assert_eq!(error.status, StatusCode::BAD_GATEWAY);
    };
    let mut cut = compressed(2, &dictionary);
    let half = cut[1].lz4.len() / 2;
    cut[1].lz4.truncate(half);
    refused(&cut, Some(&dictionary));
    let mut longer = compressed(2, &dictionary);
    longer[0].length += 1;
    refused(&longer, Some(&dictionary));
    let mut huge = compressed(1, &dictionary);
    huge[0].length = u32::MAX;
    refused(&huge, Some(&dictionary));
    refused(&compressed(2, &dictionary), None);
    assert_eq!(held.held().0, 0, "no refusal is held");
}
