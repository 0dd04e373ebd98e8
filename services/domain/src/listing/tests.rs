//! The index answers exactly what the reference evaluator (`query::run`,
//! a filter-then-sort over every record) answers: pages, totals, errors.

use proptest::prelude::*;
use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{
    Filter, FilterOperator, FilterValue, ListQuery, PageRequest, SortField,
};

use super::*;
use crate::catalog::{PRODUCT_FIELDS, ProductFacts, ProductSchema};
use crate::currencies::Code;

/// The two currencies the listings are built for.
fn codes() -> [Code; 2] {
    ["AUD", "NZD"].map(|c| Code::parse(c).expect("a code"))
}

/// Prices by currency, where given.
fn priced(prices: [Option<i64>; 2]) -> Box<[(Code, i64)]> {
    prices
        .into_iter()
        .zip(codes())
        .filter_map(|(cents, code)| Some((code, cents?)))
        .collect()
}

const BRANDS: &[&str] = &["Acme", "Bolt", "Cedar"];
const CATEGORIES: &[&str] = &["c1", "c2", "c3", "c4"];
/// Variant attributes as the `attributes` column holds them (sorted).
const ATTRIBUTES: &[&str] = &[
    "colour\u{1f}Navy",
    "colour\u{1f}Sand",
    "size\u{1f}L",
    "size\u{1f}M",
];

fn facts() -> impl Strategy<Value = ProductFacts> {
    (
        (0u32..10_000, proptest::option::of(0u8..6), 0usize..3),
        (
            proptest::collection::vec(0usize..4, 0..3),
            0i32..4,
            any::<bool>(),
            0u32..5,
        ),
        (
            any::<bool>(),
            proptest::option::of(0i64..4),
            proptest::option::of(0i64..5),
            proptest::option::of(0i64..5),
        ),
        proptest::collection::btree_set(0usize..4, 0..3),
    )
        .prop_map(
            |(
                (id, name, brand),
                (cats, status, featured, pop),
                (stock, created, aud, nzd),
                attrs,
            )| {
                ProductFacts {
                    id: format!("id-{id:05}").into(),
                    key: format!("key-{}", id % 7).into(),
                    name: name.map(|n| format!("name {n}").into()),
                    brand: BRANDS[brand].into(),
                    category_ids: cats.iter().map(|&c| CATEGORIES[c].into()).collect(),
                    status,
                    featured,
                    popularity: pop,
                    in_stock: stock,
                    created_at: created.map(|d| (1_700_000_000 + d * 86_400, 0)),
                    prices: priced([aud.map(|p| p * 1000), nzd.map(|p| p * 1000)]),
                    attributes: attrs.iter().map(|&a| ATTRIBUTES[a].into()).collect(),
                }
            },
        )
}

fn filter() -> impl Strategy<Value = Filter> {
    let ops = prop_oneof![
        Just(FilterOperator::Eq),
        Just(FilterOperator::Ne),
        Just(FilterOperator::Gt),
        Just(FilterOperator::Gte),
        Just(FilterOperator::Lt),
        Just(FilterOperator::Lte),
    ];
    let value = prop_oneof![
        (
            "(name|brand|key|status)",
            "(name [0-6]|Acme|Bolt|Dune|key-[0-7]|active|inactive)"
        )
            .prop_map(|(f, v)| (f, Kind::Text(v))),
        ("(category)", "c[0-5]").prop_map(|(f, v)| (f, Kind::Text(v))),
        ("(attributes)", 0usize..5).prop_map(|(f, a)| {
            let member = ATTRIBUTES.get(a).map_or("colour\u{1f}Rust", |m| m);
            (f, Kind::Text(member.to_string()))
        }),
        ("(price|popularity)", 0i64..6000).prop_map(|(f, v)| (f, Kind::Integer(v / 1000 * 1000))),
        ("(featured|inStock)", any::<bool>()).prop_map(|(f, v)| (f, Kind::Boolean(v))),
        ("(createdAt)", 0i64..5).prop_map(|(f, d)| (
            f,
            Kind::Timestamp(storefront_proto::Timestamp {
                seconds: 1_700_000_000 + d * 86_400,
                nanos: 0,
            })
        )),
    ];
    (value, ops).prop_map(|((field, kind), op)| Filter {
        field,
        operator: op as i32,
        value: Some(FilterValue { kind: Some(kind) }),
    })
}

fn sort() -> impl Strategy<Value = SortField> {
    (
        "(name|price|createdAt|popularity|featured|inStock|status|brand|key|category)",
        any::<bool>(),
    )
        .prop_map(|(field, desc)| SortField {
            field,
            direction: if desc {
                SortDirection::Desc
            } else {
                SortDirection::Asc
            } as i32,
        })
}

fn list_query() -> impl Strategy<Value = ListQuery> {
    (
        0u32..8,
        // Far offsets too: clients send them (found by the contract run).
        prop_oneof![8 => 0u64..40, 1 => Just(i64::MAX as u64), 1 => Just(u64::MAX)],
        proptest::collection::vec(sort(), 0..3),
        proptest::collection::vec(filter(), 0..3),
    )
        .prop_map(|(limit, offset, sort, filters)| ListQuery {
            page: Some(PageRequest { limit, offset }),
            sort,
            filters,
        })
}

fn reference(
    records: &[ProductFacts],
    q: &ListQuery,
    ctx: usize,
) -> Result<(PageInfo, Vec<String>), String> {
    let default = [(crate::catalog::ProductField::Key, false)];
    query::run::<ProductSchema>(records, q, &codes()[ctx], &default)
        .map(|p| (p.info, p.items.iter().map(|r| r.id.to_string()).collect()))
        .map_err(|e| format!("{e:?}"))
}

fn indexed(
    listing: &Listing<ProductSchema>,
    records: &[ProductFacts],
    q: &ListQuery,
    ctx: usize,
) -> Result<(PageInfo, Vec<String>), String> {
    listing
        .page(q, ctx, &[("key", false)])
        .map(|(info, rows)| {
            (
                info,
                rows.iter()
                    .map(|&r| records[r as usize].id.to_string())
                    .collect(),
            )
        })
        .map_err(|e| format!("{e:?}"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn pages_totals_and_errors_match_the_reference(
        mut records in proptest::collection::vec(facts(), 0..60),
        queries in proptest::collection::vec(list_query(), 1..6),
        ctx in 0usize..2,
    ) {
        records.sort_by(|a, b| a.id.cmp(&b.id));
        records.dedup_by(|a, b| a.id == b.id);
        // Store order differs from id order, as in a real catalog.
        records.reverse();
        let listing = Listing::<ProductSchema>::build(&records, PRODUCT_FIELDS, &codes());
        for q in &queries {
            // The estimate is taken before every page; it must not fail.
            listing.estimate(q, ctx);
            prop_assert_eq!(indexed(&listing, &records, q, ctx), reference(&records, q, ctx));
        }
    }
}

#[test]
fn large_sets_walk_the_order_and_small_ones_are_ranked() {
    // 3,000 records: an unfiltered and a dense filter walk, a sparse one ranks.
    let records: Vec<ProductFacts> = (0..3000)
        .map(|i| ProductFacts {
            id: format!("id-{i:05}").into(),
            key: format!("key-{:05}", 2999 - i).into(),
            name: Some(format!("name {}", i % 97).into()),
            brand: BRANDS[i % 3].into(),
            category_ids: [CATEGORIES[i % 4].into()].into(),
            status: (i % 3) as i32 + 1,
            featured: i % 10 == 0,
            popularity: (i * 7 % 1000) as u32,
            in_stock: i % 8 != 0,
            created_at: Some((1_700_000_000 + i as i64, 0)),
            prices: priced([Some((i as i64 % 300) * 100), None]),
            attributes: [ATTRIBUTES[i % 4].into()].into(),
        })
        .collect();
    let listing = Listing::<ProductSchema>::build(&records, PRODUCT_FIELDS, &codes());
    let text = |f: &str, v: &str| Filter {
        field: f.into(),
        operator: FilterOperator::Eq as i32,
        value: Some(FilterValue {
            kind: Some(Kind::Text(v.into())),
        }),
    };
    let sorts = |fields: &[(&str, bool)]| -> Vec<SortField> {
        fields
            .iter()
            .map(|&(f, d)| SortField {
                field: f.into(),
                direction: if d {
                    SortDirection::Desc
                } else {
                    SortDirection::Asc
                } as i32,
            })
            .collect()
    };
    let cases = [
        (vec![], sorts(&[])),
        (vec![], sorts(&[("price", true)])),
        (vec![], sorts(&[("brand", false), ("price", true)])),
        (
            vec![text("brand", "Bolt")],
            sorts(&[("name", false), ("popularity", true)]),
        ),
        (vec![text("key", "key-01234")], sorts(&[("price", false)])),
        (
            vec![text("category", "c2"), text("brand", "Acme")],
            sorts(&[("createdAt", true)]),
        ),
    ];
    for (filters, sort) in cases {
        for (offset, limit) in [(0, 20), (1500, 50), (2990, 20)] {
            let q = ListQuery {
                page: Some(PageRequest { limit, offset }),
                sort: sort.clone(),
                filters: filters.clone(),
            };
            for ctx in [0, 1] {
                assert_eq!(
                    indexed(&listing, &records, &q, ctx),
                    reference(&records, &q, ctx),
                    "{q:?}"
                );
            }
        }
    }
}

#[test]
fn too_many_sort_keys_and_too_many_filters_are_refused() {
    let listing = Listing::<ProductSchema>::build(&[], PRODUCT_FIELDS, &codes());
    let sort = |f: &str| SortField {
        field: f.into(),
        direction: SortDirection::Asc as i32,
    };
    let many = ListQuery {
        sort: ["name", "price", "brand", "key", "status"]
            .map(sort)
            .to_vec(),
        ..Default::default()
    };
    let e = listing.page(&many, 0, &[("key", false)]).err().unwrap();
    assert_eq!(e.code, "INVALID_SORT_FIELD");
    let filters = ListQuery {
        filters: vec![
            Filter {
                field: "featured".into(),
                operator: FilterOperator::Eq as i32,
                value: Some(FilterValue {
                    kind: Some(Kind::Boolean(true)),
                }),
            };
            query::MAX_FILTERS + 1
        ],
        ..Default::default()
    };
    let e = listing.page(&filters, 0, &[("key", false)]).err().unwrap();
    assert_eq!(e.code, "INVALID_FILTER");
}

proptest! {
    /// The bounded heap for a front page ranks exactly as the full sort,
    /// ties on the first key (relevance or a column) included.
    #[test]
    fn a_front_page_from_the_heap_is_the_sorted_front(
        records in proptest::collection::vec(facts(), 1..400),
        scores in proptest::collection::vec(0i64..5, 400),
        popularity_first in any::<bool>(),
        desc in any::<bool>(),
        start in 0usize..10,
        len in 1usize..20,
    ) {
        let listing = Listing::<ProductSchema>::build(&records, PRODUCT_FIELDS, &codes());
        let rows: Vec<Ranked> = (0..records.len() as u32)
            .map(|row| Ranked { row, extra: scores[row as usize] })
            .collect();
        let mut keys = vec![(SortKey::Extra, desc)];
        keys.extend(listing.keys(&[("popularity", !desc)], 0).unwrap());
        if popularity_first {
            keys.reverse();
        }
        let end = (start + len).min(rows.len());
        prop_assume!(start < end);
        let sorted = listing.rank(rows.clone(), &keys, 0, rows.len());
        let expected = sorted[start..end].to_vec();
        prop_assert_eq!(listing.top(rows, &keys, start, end), expected);
    }
}

proptest! {
    /// Ordering by eight bytes at a time orders texts as comparing them
    /// whole does: zero bytes, heads shared over several chunks, texts
    /// ending inside a chunk or at its end, equal texts.
    #[test]
    fn texts_sort_by_chunks_as_whole_strings_do(
        texts in proptest::collection::vec(
            "(premium-leather-|abcdefgh){0,3}[a\\x00b]{0,3}[a-z\\x00é]{0,12}",
            0..200,
        )
    ) {
        let got = distinct::sorted_texts(texts.len(), |i| texts[i as usize].as_str());
        let mut want: Vec<u32> = (0..texts.len() as u32).collect();
        want.sort_by(|&a, &b| texts[a as usize].cmp(&texts[b as usize]).then(a.cmp(&b)));
        prop_assert_eq!(got, want);
    }
}

/// A change to apply to records and their listing alike.
#[derive(Debug, Clone)]
enum Edit {
    /// Row (modulo the length) takes these facts, keeping its id.
    Replace(usize, ProductFacts),
    /// A record with these facts (and a fresh id) is appended.
    Push(ProductFacts),
    /// Row (modulo the length) leaves; the last row takes its place.
    Remove(usize),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (0usize..1000, facts()).prop_map(|(r, f)| Edit::Replace(r, f)),
        2 => facts().prop_map(Edit::Push),
        2 => (0usize..1000).prop_map(Edit::Remove),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    /// A listing edited record by record answers as the reference does on
    /// the edited records: pages, totals, errors; any mix of replaced,
    /// added and removed records, values appearing and disappearing.
    #[test]
    fn an_edited_listing_answers_as_the_reference(
        mut records in proptest::collection::vec(facts(), 0..40),
        edits in proptest::collection::vec(edit(), 1..25),
        queries in proptest::collection::vec(list_query(), 1..5),
        ctx in 0usize..2,
    ) {
        records.sort_by(|a, b| a.id.cmp(&b.id));
        records.dedup_by(|a, b| a.id == b.id);
        records.reverse();
        let mut listing = Listing::<ProductSchema>::build(&records, PRODUCT_FIELDS, &codes());
        let before = listing.clone();
        let mut fresh = 0;
        for e in edits {
            match e {
                Edit::Replace(r, mut f) if !records.is_empty() => {
                    let row = r % records.len();
                    f.id = records[row].id.clone();
                    listing.replace(row as u32, &f, &codes());
                    records[row] = f;
                }
                Edit::Push(mut f) => {
                    fresh += 1;
                    f.id = format!("id-new-{:03}", (fresh * 37) % 1000).into();
                    if records.iter().any(|r| r.id == f.id) {
                        continue;
                    }
                    let position = records.iter().filter(|r| r.id < f.id).count() as u32;
                    listing.push(&f, &codes(), position);
                    records.push(f);
                }
                Edit::Remove(r) if !records.is_empty() => {
                    let row = r % records.len();
                    listing.swap_remove(row as u32);
                    records.swap_remove(row);
                }
                _ => {}
            }
        }
        prop_assert_eq!(listing.len(), records.len());
        for q in &queries {
            listing.estimate(q, ctx);
            prop_assert_eq!(indexed(&listing, &records, q, ctx), reference(&records, q, ctx));
        }
        // The version edited from is untouched.
        prop_assert_eq!(before.len(), before.columns[0].column.rank.len());
    }
}

#[test]
fn either_order_read_from_any_position_is_the_same_order_cut_there() {
    // Prices with gaps (every fifth product has none), so that the group
    // without a value leads descending and trails ascending.
    let records: Vec<ProductFacts> = (0..50)
        .map(|i| ProductFacts {
            id: format!("id-{i:03}").into(),
            key: format!("key-{i:03}").into(),
            name: None,
            brand: BRANDS[i % 3].into(),
            category_ids: [].into(),
            status: 1,
            featured: false,
            popularity: 0,
            in_stock: true,
            created_at: None,
            prices: priced([(i % 5 != 0).then_some((i as i64 * 7 % 11) * 100), None]),
            attributes: [].into(),
        })
        .collect();
    let listing = Listing::<ProductSchema>::build(&records, PRODUCT_FIELDS, &codes());
    let price = listing.column("price", 0).unwrap();
    let key = |row: &u32| {
        (
            price.value(*row).is_none(),
            price.value(*row).cloned(),
            *row,
        )
    };
    let mut ascending: Vec<u32> = (0..50).collect();
    ascending.sort_by_key(key);
    let mut descending = ascending.clone();
    // Groups last first, each still in id order (ids follow rows here).
    descending.sort_by_key(|row| {
        let (missing, c, row) = key(row);
        (!missing, std::cmp::Reverse(c), row)
    });
    for (desc, order) in [(false, &ascending), (true, &descending)] {
        for from in 0..=order.len() + 1 {
            let read: Vec<u32> = price.rows(desc, from).collect();
            assert_eq!(
                read,
                order[from.min(order.len())..],
                "desc {desc}, from {from}"
            );
        }
    }
}
