use storefront_domain::catalog::price_in;
use storefront_proto::catalog::v1::{Media, ProductStatus};
use storefront_proto::common::v1::LocalizedString;

use super::*;
use crate::edit::Change;

/// The offer as the whole product gives it: decoded whole, priced in
/// `currency`, then cut to what a checkout reads.
fn from_whole(catalog: &Catalog, row: u32, currency: &str) -> Product {
    let mut whole = catalog.product(row).unwrap();
    price_in(&mut whole, currency);
    let variant = |v: Variant| Variant {
        id: v.id,
        sku: v.sku,
        price: v.price,
        prices: (v.prices.into_iter())
            .filter(|p| p.currency_code == currency)
            .collect(),
        availability: v.availability,
        ..Variant::default()
    };
    Product {
        meta: whole.meta,
        status: whole.status,
        price: Some(whole.price.unwrap_or_else(|| default_money(currency))),
        variants: whole.variants.into_iter().map(variant).collect(),
        ..Product::default()
    }
}

fn localized(text: &str) -> Option<LocalizedString> {
    Some(crate::generate::localized(text, text))
}

#[test]
fn an_offer_reads_as_the_whole_product_priced_and_cut() {
    let catalog = Catalog::new(crate::generate::generate(200, 3));
    let codes: Vec<String> = (catalog.currencies.codes().iter())
        .map(|c| c.as_str().to_string())
        .collect();
    assert!(codes.len() > 1, "priced in more than one currency");
    // One product with everything an offer skips, and held stock.
    let mut full = catalog.product(7).unwrap();
    full.description = localized("a long description");
    full.media.push(Media {
        id: "m".into(),
        url: "https://x/m.jpg".into(),
        alt: localized("alt"),
        ..Default::default()
    });
    full.status = ProductStatus::Inactive as i32;
    for v in &mut full.variants {
        v.attributes.insert("size".into(), "M".into());
        v.availability = Some(crate::units::availability(3, 2));
    }
    let catalog = catalog
        .apply(vec![Change::Put {
            product: Box::new(full),
            expected: None,
        }])
        .unwrap();
    for row in 0..catalog.products.len() as u32 {
        for code in codes.iter().map(String::as_str).chain(["XXX"]) {
            let offer = offer(&catalog, row, code).unwrap();
            assert_eq!(
                offer,
                from_whole(&catalog, row, code),
                "row {row} in {code}"
            );
        }
    }
    let seventh = offer(&catalog, 7, &codes[0]).unwrap();
    assert_eq!(seventh.status, ProductStatus::Inactive as i32);
    assert!(seventh.variants.iter().all(|v| v.attributes.is_empty()));
    assert!(
        seventh
            .variants
            .iter()
            .all(|v| v.availability.unwrap().held == 2)
    );
    assert!(seventh.variants.iter().all(|v| v.price.is_some()));
}
