//! The products' JSON held: what comes back is what the transcoder writes
//! for the same bytes, a changed product is written again, the held bytes
//! stay within their bound, and a refusal is never held.

use prost::Message as _;
use storefront_proto::common::v1::Money;

use super::product_json::ProductJson;
use super::tests::{by_transcoder, damaged, encoded, full, tail};
use super::{one, product::Projection};
use storefront_proto::encoded::EncodedProduct;

fn through(held: &ProductJson, p: &EncodedProduct, locale: Projection<'_>) -> Vec<u8> {
    let mut out = b"prefix".to_vec();
    held.write(&mut out, p, locale, one).unwrap();
    out.split_off(6)
}

#[test]
fn held_json_is_the_transcoders_for_the_same_bytes() {
    let held = ProductJson::new(1 << 20);
    let p = encoded(full(1).encode_to_vec(), tail());
    let want = by_transcoder(&p).unwrap();
    assert_eq!(through(&held, &p, None), want, "written");
    assert_eq!(held.held().0, 0, "kept from the second time on");
    assert_eq!(through(&held, &p, None), want, "written again");
    assert_eq!(held.held().0, 1);
    assert_eq!(through(&held, &p, None), want, "held");

    // A projection is another answer, and so is another tail (a price)
    // or another body (a stock level, a rename): none is served stale.
    let mut projected = Vec::new();
    one(&mut projected, &p, Some("en-NZ")).unwrap();
    assert_ne!(projected, want);
    for _ in 0..3 {
        assert_eq!(through(&held, &p, Some("en-NZ")), projected);
    }
    let mut repriced = storefront_proto::catalog::v1::Product::decode(&tail()[..]).unwrap();
    repriced.price = Some(Money {
        currency_code: "AUD".into(),
        cent_amount: 1,
        fraction_digits: 2,
    });
    let repriced = encoded(full(1).encode_to_vec(), repriced.encode_to_vec());
    for _ in 0..3 {
        assert_eq!(
            through(&held, &repriced, None),
            by_transcoder(&repriced).unwrap()
        );
    }
    let mut renamed = full(1);
    renamed.key = "another-key".into();
    let renamed = encoded(renamed.encode_to_vec(), tail());
    for _ in 0..3 {
        assert_eq!(
            through(&held, &renamed, None),
            by_transcoder(&renamed).unwrap()
        );
    }
    assert_eq!(held.held().0, 4);
}

#[test]
fn refused_bytes_are_refused_every_time_and_never_held() {
    let held = ProductJson::new(1 << 20);
    let body = full(1).encode_to_vec();
    let mut rng = fastrand::Rng::with_seed(11);
    let (mut refused, mut accepted) = (0, std::collections::HashSet::new());
    for round in 0..2_000 {
        let (bytes, _) = damaged(&body, round, &mut rng);
        let p = encoded(bytes, tail());
        let want = by_transcoder(&p);
        for _ in 0..2 {
            let mut out = Vec::new();
            let got = held.write(&mut out, &p, None, one);
            match &want {
                Ok(json) => assert_eq!(&out, json, "round {round}"),
                Err(e) => assert_eq!(got.unwrap_err().status, e.status, "round {round}"),
            }
        }
        match want {
            Ok(_) => {
                accepted.insert(p.body);
            }
            Err(_) => refused += 1,
        }
    }
    assert!(refused > 100, "only {refused} damaged products refused");
    // Damage can make one body twice (a cut at the same byte): held once.
    assert_eq!(held.held().0, accepted.len(), "refusals are not held");
}

#[test]
fn held_bytes_stay_within_their_bound_and_zero_holds_nothing() {
    let bound = 512 << 10;
    let held = ProductJson::new(bound);
    let mut product = full(1);
    for n in 0..1_000 {
        product.key = format!("key-{n}");
        let p = encoded(product.encode_to_vec(), tail());
        for _ in 0..2 {
            assert_eq!(through(&held, &p, None), by_transcoder(&p).unwrap());
        }
        assert!(held.held().1 <= bound, "{} bytes held", held.held().1);
    }
    let (entries, bytes) = held.held();
    assert!(
        entries > 10 && bytes > bound / 2,
        "{entries} entries, {bytes} bytes"
    );

    let none = ProductJson::new(0);
    let p = encoded(full(1).encode_to_vec(), tail());
    assert_eq!(through(&none, &p, None), by_transcoder(&p).unwrap());
    assert_eq!(none.held(), (0, 0));
}

/// Products asked for again and again outlast a crawler's walk through
/// ten times as many as fit, whether it sees each product once (none is
/// kept) or twice (kept, and evicted before the popular ones).
#[test]
fn products_asked_for_again_outlast_a_scan() {
    let held = ProductJson::new(1 << 20);
    let product = |n: usize| {
        let mut p = full(1);
        p.key = format!("key-{n}");
        encoded(p.encode_to_vec(), tail())
    };
    let popular: Vec<EncodedProduct> = (0..100).map(product).collect();
    let written = std::cell::Cell::new(0);
    let counted = |out: &mut Vec<u8>, p: &EncodedProduct, locale: Projection<'_>| {
        written.set(written.get() + 1);
        one(out, p, locale)
    };
    for _ in 0..4 {
        for p in &popular {
            held.write(&mut Vec::new(), p, None, counted).unwrap();
        }
    }
    assert_eq!(written.get(), 200, "written twice each, then held");
    let one_json = through(&held, &popular[0], None).len();
    let walked = 10 * (1 << 20) / one_json;
    for n in 1_000..1_000 + walked {
        held.write(&mut Vec::new(), &product(n), None, one).unwrap();
    }
    assert!(held.held().0 <= 100, "a walk seen once is not kept");
    for n in 100_000..100_000 + walked {
        for _ in 0..2 {
            held.write(&mut Vec::new(), &product(n), None, one).unwrap();
        }
        assert!(held.held().1 <= 1 << 20, "{} bytes held", held.held().1);
    }
    written.set(0);
    for p in &popular {
        held.write(&mut Vec::new(), p, None, counted).unwrap();
    }
    assert!(written.get() < 25, "{} of 100 written again", written.get());
}
