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

#[test]
fn a_version_journals_what_it_changed_as_a_replica_replays_it() {
    let base = catalog(200);
    let all = products(&base);
    let mut cheaper = all[3].clone();
    cheaper.variants[0].prices[0].cent_amount = 7;
    let gone = meta_id(all[5].meta.as_ref()).to_string();
    // A checkout's hold as the stock writer makes it: the product as the
    // version has it, its variants' stock alone changed.
    let mut held = all[8].clone();
    for v in &mut held.variants {
        v.availability = Some(crate::units::availability(0, 1));
    }
    let next = base
        .apply(vec![
            Change::Put {
                product: Box::new(cheaper),
                expected: None,
            },
            Change::Delete {
                id: gone.clone(),
                expected: None,
            },
            Change::Stocked(Box::new(held)),
            Change::Operations(vec!["op-1".into()]),
        ])
        .unwrap();
    let held = next
        .product(next.product_row(meta_id(all[8].meta.as_ref())).unwrap())
        .unwrap();
    assert_eq!(
        version_of(&held),
        version_of(&all[8]),
        "a hold keeps the version"
    );
    assert!(!held.in_stock, "derived from the variants");
    assert_eq!(held.master_variant.as_ref(), held.variants.first());

    let entry = next.journal_entry().unwrap();
    let entry = JournalEntry::decode(entry.as_slice()).unwrap();
    assert_eq!(entry.deletes, [gone]);
    assert_eq!(entry.operations, ["op-1"]);
    assert!(entry.switch_to.is_none());
    let now = |p: &Product| next.product(next.product_row(meta_id(p.meta.as_ref())).unwrap());
    let mut expected = vec![now(&all[3]).unwrap(), now(&all[8]).unwrap()];
    expected.sort_by(|a, b| meta_id(a.meta.as_ref()).cmp(meta_id(b.meta.as_ref())));
    assert_eq!(entry.puts, expected);

    let replayed = base
        .replay(entry.puts, &entry.deletes, entry.operations, next.version)
        .unwrap();
    assert_eq!(products(&replayed), products(&next));
    for (sort, desc) in [("price", false), ("inStock", false), ("name", true)] {
        assert_eq!(page(&replayed, sort, desc), page(&next, sort, desc));
    }
    assert!(replayed.ops.contains("op-1"));
}
