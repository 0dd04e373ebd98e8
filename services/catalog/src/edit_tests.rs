use storefront_proto::common::v1::{ListQuery, PageRequest, SortField};

use super::*;
use crate::store::{Parts, StoredProducts};

fn catalog(size: usize) -> Catalog {
    Catalog::new(crate::generate::generate(size, 3))
}

/// Every product of `c` in row order.
fn products(c: &Catalog) -> Vec<Product> {
    (0..c.products.len() as u32)
        .map(|r| c.product(r).unwrap())
        .collect()
}

/// What a page of `c` shows: ids in order, and the total.
fn page(c: &Catalog, sort: &str, desc: bool) -> (u64, Vec<String>) {
    let q = ListQuery {
        page: Some(PageRequest {
            limit: 50,
            offset: 0,
        }),
        sort: vec![SortField {
            field: sort.into(),
            direction: i32::from(desc) + 1,
        }],
        filters: Vec::new(),
    };
    let (info, rows) = c.listing.page(&q, 0, &[("key", false)]).unwrap();
    let ids = rows
        .iter()
        .map(|&r| meta_id(c.product(r).unwrap().meta.as_ref()).to_string())
        .collect();
    (info.total, ids)
}

#[test]
fn an_edited_catalog_answers_as_one_built_from_its_products() {
    let base = catalog(600);
    let all = products(&base);
    let mut cheaper = all[10].clone();
    cheaper.variants[0].prices[0].cent_amount = 1;
    let mut fresh = all[20].clone();
    fresh.meta.as_mut().unwrap().id = "00000000-new".into();
    for (i, v) in fresh.variants.iter_mut().enumerate() {
        v.sku = format!("NEW-{i}");
    }
    let last_id = meta_id(all[599].meta.as_ref()).to_string();
    let sku = all[30].variants[0].sku.clone();
    let edited = base
        .apply(vec![
            Change::Put {
                product: Box::new(cheaper),
                expected: Some(version_of(&all[10])),
            },
            Change::Put {
                product: Box::new(fresh),
                expected: None,
            },
            Change::Delete {
                id: meta_id(all[5].meta.as_ref()).into(),
                expected: None,
            },
            Change::Stock(vec![Stock {
                sku: sku.clone(),
                level: Level::Quantity(0),
            }]),
        ])
        .unwrap();
    assert_eq!(edited.version, base.version + 1);
    assert_eq!(base.products.len(), 600, "the version before is untouched");
    assert_eq!(edited.products.len(), 600);
    assert!(edited.product_row(meta_id(all[5].meta.as_ref())).is_none());
    // The product created last took the deleted one's row.
    assert_eq!(edited.product_row("00000000-new"), Some(5));
    assert_eq!(edited.product_row(&last_id), Some(599));
    let row = edited.product_row("00000000-new").unwrap();
    assert_eq!(edited.skus.get(&sku_key("NEW-0")).copied(), Some(row));
    assert!(
        !edited.skus.contains_key(&sku_key(&all[5].variants[0].sku)),
        "a deleted product's SKUs go"
    );
    let stocked = edited
        .product(edited.product_row(meta_id(all[30].meta.as_ref())).unwrap())
        .unwrap();
    assert_eq!(stocked.variants[0].availability.unwrap().quantity, 0);
    // A stock change moves the version on, as any change does, and
    // keeps when the product was made.
    assert_eq!(version_of(&stocked), version_of(&all[30]) + 1);
    let made = |p: &Product| p.meta.as_ref().and_then(|m| m.created_at);
    assert_eq!(made(&stocked), made(&all[30]));
    let any_in_stock = stocked
        .variants
        .iter()
        .any(|v| v.availability.is_some_and(|a| a.in_stock));
    assert_eq!(stocked.in_stock, any_in_stock, "derived again");
    // The same answers as a catalog built from the edited products.
    let built = {
        let edited_products = products(&edited);
        let facts: Vec<_> = edited_products.iter().map(ProductFacts::of).collect();
        let mut stored = StoredProducts::new(&edited_products[0]);
        for p in edited_products {
            stored.push(p, &mut Scratch::default());
        }
        Catalog::new(Parts {
            products: stored,
            facts,
            ..Parts::empty(edited.currencies.clone())
        })
    };
    for (sort, desc) in [
        ("price", false),
        ("price", true),
        ("inStock", false),
        ("name", true),
        ("createdAt", false),
    ] {
        assert_eq!(
            page(&edited, sort, desc),
            page(&built, sort, desc),
            "{sort} {desc}"
        );
    }
}

#[test]
fn stale_versions_unknown_skus_and_negative_stock_change_nothing() {
    let base = catalog(50);
    let p = base.product(0).unwrap();
    let stale = base.apply(vec![Change::Put {
        product: Box::new(p.clone()),
        expected: Some(99),
    }]);
    assert_eq!(stale.err().unwrap().code, "CONCURRENT_MODIFICATION");
    let levels = vec![
        Stock {
            sku: p.variants[0].sku.clone(),
            level: Level::Delta(-1_000_000),
        },
        Stock {
            sku: "NO-SUCH-SKU".into(),
            level: Level::Quantity(3),
        },
    ];
    let refused = base.apply(vec![Change::Stock(levels)]).err().unwrap();
    let fields: Vec<&str> = refused
        .violations
        .iter()
        .map(|v| v.field.as_str())
        .collect();
    assert_eq!(fields, ["changes[0].delta", "changes[1].sku"]);
    let missing = base.apply(vec![Change::Delete {
        id: "nope".into(),
        expected: None,
    }]);
    assert_eq!(missing.err().unwrap().code, "NOT_FOUND");
}
