//! The transcoder against the models: for every product the model path
//! (prost decoding, `Product::from_proto`, `serde_json`) accepts, the
//! transcoder writes the very same bytes; where the model path refuses,
//! the transcoder refuses or at least never panics.

use prost::Message as _;
use storefront_proto::Timestamp;
use storefront_proto::catalog::v1::{Availability, Media, Product, Variant};
use storefront_proto::common::v1::{LocalizedString, Money, PageInfo, ResourceMeta};
use storefront_proto::encoded::{EncodedProduct, Products};
use storefront_proto::search::v1 as search_pb;

use super::*;
use crate::model::catalog::Product as Model;
use crate::model::common::Paged;
use crate::model::search::{Facets, SearchResult, Suggestions};

fn text(pairs: &[(&str, &str)]) -> Option<LocalizedString> {
    Some(LocalizedString {
        values: pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    })
}

fn money(code: &str, cents: i64) -> Money {
    Money {
        currency_code: code.into(),
        cent_amount: cents,
        fraction_digits: 2,
    }
}

fn media(id: &str, kind: i32) -> Media {
    Media {
        id: id.into(),
        r#type: kind,
        url: format!("https://cdn.example/{id}.jpg"),
        alt: text(&[("en-NZ", "kia ora \"alt\""), ("en-AU", "g'day\n")]),
        width: 800,
        height: 600,
        position: 2,
    }
}

/// A product with every field set, strings that need escaping, maps out
/// of order, negative and large numbers.
pub(super) fn full(status: i32) -> Product {
    Product {
        meta: Some(ResourceMeta {
            id: "p-1".into(),
            version: -3,
            created_at: Some(Timestamp {
                seconds: 1_740_000_000,
                nanos: 120_000_000,
            }),
            last_modified_at: Some(Timestamp {
                seconds: 1_750_000_000,
                nanos: 0,
            }),
        }),
        key: "tab\there \u{2028} é 😀 \u{1}".into(),
        // Escapes past the first 16 bytes, at a 16-byte boundary and in
        // the tail after the last whole 16 bytes.
        name: text(&[
            ("en-NZ", "Shirt"),
            ("en-AU", "Shirt \\ slash"),
            ("de-DE", "sixteen bytes!!!\"then a quote"),
            ("fr-FR", "0123456789abcdef0123456789abcde\u{7}"),
            ("es-ES", "0123456789abcdef0123456789abcdef0123456789ab\r"),
        ]),
        description: None,
        slug: text(&[]),
        brand: "Kiwi & Co".into(),
        category_ids: vec!["root".into(), "child".into()],
        status,
        featured: true,
        popularity: u32::MAX,
        in_stock: true,
        price: None,
        master_variant: Some(Variant {
            id: 1,
            sku: "SKU-1".into(),
            attributes: [("size", "M"), ("colour", "navy")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            price: None,
            prices: vec![money("AUD", 4995), money("NZD", i64::MIN)],
            // Held units are the checkouts' business: shown by neither path.
            availability: Some(Availability {
                in_stock: true,
                quantity: 7,
                held: 2,
            }),
            media: vec![media("v", 2)],
        }),
        variants: Vec::new(),
        media: vec![media("a", 1), media("b", 2), media("c", 0)],
        // For search's index only: in neither representation.
        variant_attributes: vec!["colour\u{1f}Navy".into()],
    }
}

/// What the catalog appends per request: the price in one currency.
pub(super) fn tail() -> Vec<u8> {
    Product {
        price: Some(money("AUD", 4995)),
        master_variant: Some(Variant {
            price: Some(money("AUD", 4995)),
            ..Default::default()
        }),
        ..Default::default()
    }
    .encode_to_vec()
}

pub(super) fn encoded(body: Vec<u8>, tail: Vec<u8>) -> EncodedProduct {
    EncodedProduct {
        body: body.into(),
        tail,
    }
}

/// The model path's JSON, or None where it refuses the bytes.
pub(super) fn by_model(p: &EncodedProduct) -> Option<Vec<u8>> {
    let decoded = p.decode().ok()?;
    let model = Model::from_proto(decoded, false).ok()?;
    Some(serde_json::to_vec(&model).unwrap())
}

pub(super) fn by_transcoder(p: &EncodedProduct) -> Result<Vec<u8>, ApiError> {
    let mut out = Vec::new();
    one(&mut out, p, None)?;
    Ok(out)
}

#[test]
fn every_field_is_written_as_the_model_writes_it() {
    for status in [0, 1, 2, 3, 9, -1] {
        let p = encoded(full(status).encode_to_vec(), tail());
        let want = by_model(&p).expect("the model accepts it");
        let got = by_transcoder(&p).unwrap();
        assert_eq!(
            String::from_utf8(got).unwrap(),
            String::from_utf8(want).unwrap()
        );
    }
}

#[test]
fn defaults_absent_from_the_wire_are_written_as_the_model_writes_them() {
    let minimal = Product {
        meta: Some(ResourceMeta::default()),
        price: Some(Money::default()),
        master_variant: Some(Variant {
            price: Some(Money::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let p = encoded(minimal.encode_to_vec(), Vec::new());
    assert_eq!(by_transcoder(&p).unwrap(), by_model(&p).unwrap());
}

#[test]
fn a_product_the_model_refuses_is_refused() {
    let mut no_master = full(1);
    no_master.master_variant = None;
    no_master.price = Some(money("AUD", 1));
    let mut no_meta = full(1);
    no_meta.meta = None;
    for (product, tail) in [
        (full(1), Vec::new()),
        (no_master, Vec::new()),
        (no_meta, tail()),
    ] {
        let p = encoded(product.encode_to_vec(), tail);
        assert!(by_model(&p).is_none());
        assert_eq!(
            by_transcoder(&p).unwrap_err().status,
            axum::http::StatusCode::BAD_GATEWAY
        );
    }
}

/// `body` truncated (even rounds) or with a few bytes changed, and
/// whether a length-delimited key (wire type 2) was given another wire
/// type with the same field number (prost's map leniency, below).
pub(super) fn damaged(body: &[u8], round: usize, rng: &mut fastrand::Rng) -> (Vec<u8>, bool) {
    let mut bytes = body.to_vec();
    if round.is_multiple_of(2) {
        bytes.truncate(rng.usize(..bytes.len()));
    } else {
        for _ in 0..rng.usize(1..4) {
            let i = rng.usize(..bytes.len());
            bytes[i] = rng.u8(..);
        }
    }
    let retyped = body
        .iter()
        .zip(&bytes)
        .any(|(&was, &now)| was != now && was & 7 == 2 && was >> 3 == now >> 3);
    (bytes, retyped)
}

/// Damaged bytes: whatever the model accepts is written as it writes it,
/// and whatever it refuses is refused. One leniency of prost is not
/// copied: it reads a map field whatever wire type its key says (as if
/// length-delimited), where the transcoder refuses a key whose wire type
/// is not its field's (a 502 for a reply no service of ours sends).
#[test]
fn damaged_bytes_never_panic_and_never_disagree() {
    let body = full(1).encode_to_vec();
    let mut rng = fastrand::Rng::with_seed(7);
    let (mut agreed, mut lenient) = (0, 0);
    for round in 0..20_000 {
        let (bytes, retyped) = damaged(&body, round, &mut rng);
        let p = encoded(bytes, tail());
        let got = by_transcoder(&p);
        match by_model(&p) {
            Some(_) if got.is_err() && retyped => lenient += 1,
            Some(want) => {
                assert_eq!(got.unwrap(), want, "round {round}");
                agreed += 1;
            }
            None => assert!(got.is_err(), "round {round}: the model refuses it"),
        }
    }
    assert!(lenient < 10, "{lenient} rounds differ by the map leniency");
    assert!(agreed > 100, "the model accepted only {agreed} variations");
}

pub(super) fn products(n: usize) -> Products {
    Products {
        products: Vec::new(),
        encoded: (0..n)
            .map(|i| {
                let mut p = full(1);
                p.key = format!("key-{i}");
                encoded(p.encode_to_vec(), tail())
            })
            .collect(),
    }
}

fn models(products: &Products) -> Vec<Model> {
    products
        .encoded
        .iter()
        .map(|p| Model::from_proto(p.decode().unwrap(), false).unwrap())
        .collect()
}

#[test]
fn envelopes_are_the_models_envelopes() {
    let list = products(3);
    let page = PageInfo {
        limit: 3,
        offset: 6,
        count: 3,
        total: 40,
    };
    // Written, then from the products' JSON held: the same bytes.
    let held = ProductJson::new(1 << 20);
    let want = serde_json::to_vec(&Paged::new(Some(page), models(&list)).unwrap()).unwrap();
    for _ in 0..2 {
        assert_eq!(
            paged(Some(page), &list, Compressed::default(), None, &held)
                .unwrap()
                .as_bytes(),
            want
        );
    }
    assert_eq!(held.held().0, 3);
    let wrong_count = PageInfo { count: 2, ..page };
    assert_eq!(
        paged(Some(wrong_count), &list, Compressed::default(), None, &held)
            .unwrap_err()
            .status,
        axum::http::StatusCode::BAD_GATEWAY
    );

    let facets = Facets::from(search_pb::Facets {
        brands: vec![search_pb::FacetValue {
            value: "Aoraki".into(),
            count: 3,
            label: String::new(),
        }],
        ..Default::default()
    });
    let result = SearchResult {
        limit: 3,
        offset: 6,
        count: 3,
        total: 40,
        results: models(&list),
        facets: Facets::from(search_pb::Facets {
            brands: vec![search_pb::FacetValue {
                value: "Aoraki".into(),
                count: 3,
                label: String::new(),
            }],
            ..Default::default()
        }),
        dropped_words: Vec::new(),
        did_you_mean: String::new(),
    };
    let got = search(
        Some(page),
        &list,
        Compressed::default(),
        &facets,
        (&[], ""),
        None,
        &held,
    )
    .unwrap();
    assert_eq!(got.as_bytes(), serde_json::to_vec(&result).unwrap());
    let relaxed = SearchResult {
        dropped_words: vec!["unicorn".into(), "say \"hi\"".into()],
        did_you_mean: "mug \u{e9}".into(),
        ..result
    };
    let got = search(
        Some(page),
        &list,
        Compressed::default(),
        &facets,
        (&relaxed.dropped_words, &relaxed.did_you_mean),
        None,
        &held,
    )
    .unwrap();
    assert_eq!(got.as_bytes(), serde_json::to_vec(&relaxed).unwrap());

    let completions = vec!["shirt".to_string(), "shirts \"x\"".to_string()];
    let want = Suggestions {
        completions: completions.clone(),
        products: models(&list),
    };
    let got = suggestions(&completions, &list, None, &held).unwrap();
    assert_eq!(got.as_bytes(), serde_json::to_vec(&want).unwrap());
    let empty = suggestions(&[], &products(0), None, &held).unwrap();
    assert_eq!(empty.as_bytes(), br#"{"completions":[],"products":[]}"#);
}

/// Two encodings of one product merge their maps: entries then arrive out
/// of key order and with a key twice (the later value wins), the case the
/// writer sorts for.
#[test]
fn maps_merged_out_of_order_keep_the_last_value_in_key_order() {
    let mut later = Product {
        name: text(&[("en-AU", "later AU"), ("en-NZ", "later NZ")]),
        ..Default::default()
    }
    .encode_to_vec();
    later.extend_from_slice(&tail());
    let mut body = full(1);
    body.name = text(&[("en-NZ", "first NZ"), ("zz-ZZ", "only")]);
    let p = encoded(body.encode_to_vec(), later);
    let want = by_model(&p).unwrap();
    let got = by_transcoder(&p).unwrap();
    assert_eq!(
        String::from_utf8(got).unwrap(),
        String::from_utf8(want).unwrap()
    );
}

/// `localeProjection`: the transcoder's one entry per localised field is
/// the model's after `Product::project`, for locales of every rank (own,
/// its language, the default, none of those) and maps merged out of order.
#[test]
fn a_projection_writes_what_the_projected_model_writes() {
    let mut later = Product {
        name: text(&[("en-NZ", "later NZ"), ("de-DE", "später")]),
        ..Default::default()
    }
    .encode_to_vec();
    later.extend_from_slice(&tail());
    let mut body = full(1);
    body.name = text(&[
        ("en-NZ", "first NZ"),
        ("zz-ZZ", "only"),
        ("de-AT", "Österreich"),
    ]);
    for p in [
        encoded(full(1).encode_to_vec(), tail()),
        encoded(body.encode_to_vec(), later),
    ] {
        for locale in ["de-DE", "de-CH", "en-NZ", "en-US", "fr-FR", "zz-ZZ"] {
            let mut model = Model::from_proto(p.decode().unwrap(), false).unwrap();
            model.project(locale);
            let want = serde_json::to_vec(&model).unwrap();
            let mut got = Vec::new();
            one(&mut got, &p, Some(locale)).unwrap();
            assert_eq!(
                String::from_utf8(got).unwrap(),
                String::from_utf8(want).unwrap(),
                "{locale}"
            );
        }
    }
}
