//! The one-pass answer against the plain one: every match collected, then
//! filtered, counted, fully sorted and sliced.

use std::collections::BTreeMap;

use bytes::Bytes;
use prost::Message;
use storefront_domain::currencies::Currencies;

/// The two currencies the tests price in.
const CURRENCIES: [&str; 2] = ["AUD", "NZD"];
use storefront_proto::catalog::v1::{Category, Product, Variant};
use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{
    Filter, FilterOperator, FilterValue, ListQuery, LocalizedString, Money, PageRequest,
    ResourceMeta, SortDirection, SortField,
};
use tantivy::collector::TopDocs;

use super::{Plan, relevance};
use crate::build::{Batch, build};
use crate::facets::{Counts, FacetRows, facets};
use crate::index::Indexed;
use crate::synonyms::Synonyms;
use crate::text_query::{self, Typos};

const WORDS: [&str; 6] = ["cotton", "linen", "shirt", "dress", "classic", "wool"];
const BRANDS: [&str; 4] = ["Aoraki", "Harbour Lane", "Tasman Threads", "Bondi"];

fn localized(en: &str) -> Option<LocalizedString> {
    Some(LocalizedString {
        values: [("en-AU", en), ("de-DE", en)]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    })
}

/// Products whose names repeat words in many combinations (so scores
/// tie), with popularity ties and prices missing in one currency.
pub(crate) fn product(i: u32) -> Product {
    let mut name: Vec<&str> = (0..1 + i % 3)
        .map(|w| WORDS[((i / 3 + w * 5) % 6) as usize])
        .collect();
    // Some names in the other order: pairs of words near in some, apart
    // or reversed in others.
    if i.is_multiple_of(7) {
        name.reverse();
    }
    let prices = CURRENCIES
        .iter()
        .enumerate()
        .filter(|(c, _)| *c == 0 || !i.is_multiple_of(4))
        .map(|(c, code)| Money {
            currency_code: code.to_string(),
            cent_amount: i64::from(i % 37) * 700 + c as i64,
            fraction_digits: 2,
        })
        .collect();
    Product {
        meta: Some(ResourceMeta {
            id: format!("p-{:04}", (i * 7919) % 1000),
            ..Default::default()
        }),
        key: format!("k-{i}"),
        name: localized(&name.join(" ")),
        description: localized(&format!("{} by {}", name.join(" "), BRANDS[0])),
        brand: BRANDS[(i % 4) as usize].to_string(),
        category_ids: vec![format!("c-{}", i % 3)],
        popularity: i % 10,
        in_stock: !i.is_multiple_of(5),
        master_variant: Some(Variant {
            prices,
            ..Default::default()
        }),
        ..Default::default()
    }
}

pub(crate) fn index() -> Indexed {
    index_of((0..400).map(product).collect())
}

fn index_of(products: Vec<Product>) -> Indexed {
    let bodies: Vec<Bytes> = products
        .iter()
        .map(|p| Bytes::from(p.encode_to_vec()))
        .collect();
    index_from(Batch::Encoded(bodies))
}

/// The index of the products of `batch`, in three categories.
fn index_from(batch: Batch) -> Indexed {
    let categories: Vec<Category> = (0..3)
        .map(|c| Category {
            meta: Some(ResourceMeta {
                id: format!("c-{c}"),
                ..Default::default()
            }),
            key: format!("cat-{c}"),
            name: localized(&format!("Category {c}")),
            ..Default::default()
        })
        .collect();
    let currencies = std::sync::Arc::new(Currencies::demo());
    build(std::iter::once(batch), &categories, currencies).unwrap()
}

/// `n` products, product `i` named `name(i)`, described alike.
fn index_named(n: u32, name: impl Fn(u32) -> &'static str) -> Indexed {
    let products = (0..n).map(|i| Product {
        name: localized(name(i)),
        description: localized("a product"),
        ..product(i)
    });
    index_of(products.collect())
}

/// The first `limit` matches, by relevance.
fn first_page(limit: u32) -> ListQuery {
    ListQuery {
        page: Some(PageRequest {
            limit,
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The encoded summaries of `rows`, in order.
fn summaries(indexed: &Indexed, rows: &[u32]) -> Vec<Bytes> {
    rows.iter().map(|&r| indexed.summary(r).unwrap()).collect()
}

/// The encoded summaries of an answer's page, in order.
fn bodies(products: storefront_proto::encoded::Products) -> Vec<Bytes> {
    products.encoded.into_iter().map(|p| p.body).collect()
}

/// The encoded summaries of `rows`, sorted: a group of a page in any order.
fn sorted_summaries(indexed: &Indexed, rows: std::ops::Range<u32>) -> Vec<Bytes> {
    let mut out: Vec<Bytes> = rows.map(|row| indexed.summary(row).unwrap()).collect();
    out.sort();
    out
}

fn filter(field: &str, op: FilterOperator, kind: Kind) -> Filter {
    Filter {
        field: field.to_string(),
        operator: op as i32,
        value: Some(FilterValue { kind: Some(kind) }),
    }
}

fn queries() -> Vec<ListQuery> {
    let page = |limit, offset| Some(PageRequest { limit, offset });
    let sort = |field: &str, desc: bool| SortField {
        field: field.to_string(),
        direction: if desc {
            SortDirection::Desc
        } else {
            SortDirection::Asc
        } as i32,
    };
    let brand = filter("brand", FilterOperator::Eq, Kind::Text(BRANDS[1].into()));
    let stocked = filter("inStock", FilterOperator::Eq, Kind::Boolean(true));
    let cheap = filter("price", FilterOperator::Lt, Kind::Integer(9_000));
    let mut out = Vec::new();
    for (limit, offset) in [(0, 0), (5, 0), (7, 3), (100, 40), (20, 5_000)] {
        for filters in [
            vec![],
            vec![brand.clone()],
            vec![stocked.clone(), cheap.clone()],
        ] {
            for sorts in [vec![], vec![sort("price", true), sort("name", false)]] {
                out.push(ListQuery {
                    page: page(limit, offset),
                    sort: sorts,
                    filters: filters.clone(),
                });
            }
        }
    }
    out
}

/// The plain answer: product ids of the page, total, facets.
/// How many pairs of consecutive words of `text` the English name of
/// row `row` has within one word of each other, in order: read from the
/// name itself.
fn near_pairs(indexed: &Indexed, text: &str, row: u32) -> u8 {
    let mut stem = crate::analyzer::stemming(0);
    let mut stems = |text: &str| {
        let mut stream = stem.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    };
    let words = text_query::words(indexed, indexed.fields.en, text).unwrap();
    let words: Vec<String> = words.iter().flat_map(|w| stems(w)).collect();
    let product = Product::decode(indexed.summary(row).unwrap()).unwrap();
    let name = stems(&product.name.unwrap().values["en-AU"]);
    let near = |a: &String, b: &String| {
        (0..name.len()).any(|i| &name[i] == a && name[i + 1..].iter().take(2).any(|w| w == b))
    };
    words
        .windows(2)
        .filter(|two| near(&two[0], &two[1]))
        .count() as u8
}

fn plain(
    indexed: &Indexed,
    (text, typos, synonyms): (&str, Typos, &Synonyms),
    list: &ListQuery,
    currency: usize,
) -> (Vec<u32>, u64, storefront_proto::search::v1::Facets) {
    let lang = indexed.fields.for_locale("en-AU");
    let query = text_query::build(indexed, lang, synonyms, text, typos)
        .unwrap()
        .unwrap();
    let searcher = indexed.searcher.clone();
    let docs = searcher
        .search(
            query.query.as_ref(),
            &TopDocs::with_limit(10_000).order_by_score(),
        )
        .unwrap();
    let listing = &indexed.listing;
    let rows = listing.row_filter(list, currency).unwrap();
    let by_row = FacetRows::build(listing).unwrap();
    let mut counts = Counts::new(listing, by_row.layout(), currency).unwrap();
    let mut hits: Vec<(u8, i64, u32)> = Vec::new();
    for (score, addr) in docs {
        let docs = &indexed.segments[addr.segment_ord as usize];
        let row = docs.row(addr.doc_id).unwrap();
        if rows.test(row) {
            by_row.count(&mut counts, row);
            hits.push((near_pairs(indexed, text, row), relevance(score), row));
        }
    }
    let total = hits.len() as u64;
    let (_, start, end) = storefront_domain::listing::window(list, total).unwrap();
    let page: Vec<u32> = if list.sort.is_empty() {
        hits.sort_by_key(|&(pairs, score, row)| {
            (
                std::cmp::Reverse(pairs),
                std::cmp::Reverse(score),
                indexed.tie_order[row as usize],
                row,
            )
        });
        hits[start..end].iter().map(|&(_, _, row)| row).collect()
    } else {
        let keys = listing.sort_keys(list, currency, &[]).unwrap();
        let all = hits
            .iter()
            .map(|&(_, extra, row)| storefront_domain::listing::Ranked { row, extra })
            .collect();
        let ranked = listing.rank(all, &keys, 0, total as usize);
        ranked[start..end].iter().map(|r| r.row).collect()
    };
    let facets = facets(&indexed.category_keys, counts);
    (page, total, facets)
}

/// Four words within typos (two, two, one and one: six, six, three and
/// three clauses) of names that have all three of their words.
const MANY_TYPOS: &str = "classicxx classicyy woool cottnn";

#[test]
fn one_pass_answers_as_every_match_sorted_would() {
    let indexed = index();
    let lang = indexed.fields.for_locale("en-AU");
    let mut compared = BTreeMap::new();
    // Words of names and descriptions, of brands only, of categories
    // only; words within typos.
    let exact = [
        "shirt",
        "cotton linen",
        "linen cotton",
        "cotton shirt",
        "wool linen cotton",
        "classic",
        "wool dress",
        "harbour",
        "category",
    ];
    let texts = exact
        .map(|text| (text, Typos::Exact))
        .into_iter()
        .chain(["linnen", "cottn linen", "classsic"].map(|text| (text, Typos::Forgiven)))
        // More clauses of constant score than a flat form holds.
        .chain([(MANY_TYPOS, Typos::Forgiven)]);
    let none = Synonyms::default();
    // With multi-word synonyms: matched as a whole, their words scored
    // wherever they are in a match.
    let synonyms = Synonyms::new(&[
        vec!["dress".to_string(), "classic wool".into()],
        vec!["shirt".to_string(), "linen cotton".into()],
    ]);
    let with = ["dress", "wool dress", "classic wool", "linen cotton shirt"]
        .map(|text| (text, Typos::Exact))
        .into_iter()
        .chain(["dresss", "cottn shirt"].map(|text| (text, Typos::Forgiven)));
    let texts = texts
        .map(|(text, typos)| (text, typos, &none))
        .chain(with.map(|(text, typos)| (text, typos, &synonyms)));
    for (text, typos, synonyms) in texts {
        let query = text_query::build(&indexed, lang, synonyms, text, typos)
            .unwrap()
            .unwrap();
        for list in queries() {
            let modes = (0..CURRENCIES.len()).flat_map(|c| [(c, false), (c, true)]);
            for (currency, each) in modes {
                let mut plan = Plan::new(&indexed, &list, currency).unwrap();
                // Words near: scored one by one, or by a pruned pass; or
                // every match scored one by one.
                plan.seek_max = Some([0, u64::MAX][currency % 2]);
                plan.each = Some(each);
                let matched = plan.run(Some(&query)).unwrap();
                let answer = plan.answer(matched).unwrap();
                let (rows, total, facets) =
                    plain(&indexed, (text, typos, synonyms), &list, currency);
                let info = answer.page.unwrap();
                assert_eq!(info.total, total, "{text} {list:?}");
                let got = bodies(answer.products);
                assert_eq!(
                    got,
                    summaries(&indexed, &rows),
                    "{text} {list:?} currency {currency}"
                );
                assert_eq!(answer.facets.unwrap(), facets, "{text} {list:?}");
                *compared.entry(text).or_insert(0) += usize::from(total > 0);
            }
        }
    }
    // Multi-word synonyms keep the flat form (pruned by block-max WAND),
    // and words within typos have one (scored match by match).
    for (text, typos) in [
        ("dress", Typos::Exact),
        ("wool dress", Typos::Exact),
        ("classic wool", Typos::Exact),
        ("linnen", Typos::Forgiven),
        ("cottn shirt", Typos::Forgiven),
    ] {
        let query = text_query::build(&indexed, lang, &synonyms, text, typos);
        assert!(query.unwrap().unwrap().flat.is_some(), "{text}");
    }
    let many = text_query::build(&indexed, lang, &none, MANY_TYPOS, Typos::Forgiven);
    assert!(many.unwrap().unwrap().flat.is_none());
    // Every text matched something under most queries.
    assert!(compared.values().all(|&n| n > 20), "{compared:?}");
}

/// A word within typos whose matches all score alike: the page is the
/// first of them in tie order, found without scoring the rest of the
/// segment in tie order (a later segment's may tie better: read whole),
/// by the typo clauses' matches the count read, and it is the page every
/// match sorted would give, at each offset.
#[test]
fn a_page_within_typos_stops_scoring_once_no_match_can_reach_it() {
    let indexed = index_named(300, |i| {
        if i % 3 == 0 {
            "linen shirt"
        } else {
            "linen dress"
        }
    });
    let lang = indexed.fields.en;
    let none = Synonyms::default();
    let query = text_query::build(&indexed, lang, &none, "linnen", Typos::Forgiven)
        .unwrap()
        .unwrap();
    for (limit, offset) in [(5, 0), (20, 0), (20, 100), (50, 250)] {
        let list = ListQuery {
            page: Some(PageRequest { limit, offset }),
            ..Default::default()
        };
        let plan = Plan::new(&indexed, &list, 0).unwrap();
        let matched = plan.run(Some(&query)).unwrap();
        assert_eq!(matched.total, 300);
        // The page scored by the clauses' matches as the count read them.
        let apart = super::count::with_scratch(|s| s.constants(0).map(<[_]>::len));
        assert!(apart.is_some_and(|n| n > 0), "{apart:?}");
        let scored = plan.scored.load(std::sync::atomic::Ordering::Relaxed);
        let keep = u64::from(limit) + offset;
        assert!(scored >= keep, "{scored} scored for {keep}");
        assert!(keep == 300 || scored < 300, "{scored} scored for {keep}");
        let answer = plan.answer(matched).unwrap();
        let (rows, total, _) = plain(&indexed, ("linnen", Typos::Forgiven, &none), &list, 0);
        assert_eq!(answer.page.unwrap().total, total);
        let got = bodies(answer.products);
        assert_eq!(
            got,
            summaries(&indexed, &rows),
            "limit {limit} offset {offset}"
        );
    }
}

#[test]
fn bad_queries_are_refused_before_any_match_is_read() {
    let indexed = index();
    let unknown = ListQuery {
        sort: vec![SortField {
            field: "colour".into(),
            direction: SortDirection::Asc as i32,
        }],
        ..Default::default()
    };
    let too_many = ListQuery {
        page: Some(PageRequest {
            limit: 101,
            offset: 0,
        }),
        ..Default::default()
    };
    let wrong_type = ListQuery {
        filters: vec![filter("price", FilterOperator::Gt, Kind::Text("x".into()))],
        ..Default::default()
    };
    for list in [unknown, too_many, wrong_type] {
        assert!(Plan::new(&indexed, &list, 0).is_err(), "{list:?}");
    }
    // Nothing searchable: an empty page, zero facet counts.
    let list = ListQuery::default();
    let plan = Plan::new(&indexed, &list, 0).unwrap();
    let answer = plan.answer(plan.run(None).unwrap()).unwrap();
    assert_eq!(answer.page.unwrap().total, 0);
    assert!(answer.products.encoded.is_empty());
}

/// Every score under `below(r)` has a relevance under `r`, and `below`
/// is close (it turns away almost everything that cannot make the cut).
/// (A score's relevance is its score to the step, so the bar is within a
/// step of it.)
#[test]
fn scores_below_the_bar_cannot_tie_it() {
    let mut rng = fastrand::Rng::with_seed(3);
    for _ in 0..100_000 {
        let score = rng.f32() * 40.0;
        let worst = relevance(score);
        let bar = super::below(worst);
        assert!(
            relevance(bar) < worst || worst <= 0,
            "{score} {worst} {bar}"
        );
        // Within one step of relevance of the score it was made from.
        let step = (1.0 / super::STEPS) as f32;
        assert!(
            worst <= 0 || (bar <= score && score - bar < step + 1e-5),
            "{score} {bar}"
        );
    }
    assert_eq!(super::below(0), f32::NEG_INFINITY);
}

#[test]
fn merged_into_one_segment_answers_as_before() {
    let built = index();
    // A product written again (its description changed): one segment
    // more than the build's (one per indexing thread that got documents),
    // so the merge is real whichever way the build went.
    let mut again = product(10);
    again.description = localized("written again");
    let id = again.meta.clone().unwrap().id;
    let indexed = crate::follow::apply(&built, &[id], vec![reread(&built, &again)], 2).unwrap();
    assert!(indexed.searcher.segment_readers().len() >= 2);
    let merged = crate::build::merged(&indexed).unwrap().unwrap();
    assert_eq!(merged.searcher.segment_readers().len(), 1);
    // Each segment written, and the merge, in tie order (the index sorts
    // by `tie_key`), so a search takes only strictly better matches.
    assert!(indexed.segments.iter().all(|s| s.ordered()));
    assert!(merged.segments[0].ordered());
    assert!(crate::build::merged(&merged).unwrap().is_none());
    assert_eq!(answers(&merged), answers(&indexed));
}

/// The answers to three texts, each with every list query of `queries`.
fn answers(at: &Indexed) -> Vec<storefront_proto::encoded::SearchResponse> {
    let lang = at.fields.for_locale("en-AU");
    let mut all = Vec::new();
    for text in ["shirt", "cotton linen", "wool dress"] {
        for list in queries() {
            let query = text_query::build(at, lang, &Synonyms::default(), text, Typos::Exact)
                .unwrap()
                .unwrap();
            let plan = Plan::new(at, &list, 0).unwrap();
            all.push(plan.answer(plan.run(Some(&query)).unwrap()).unwrap());
        }
    }
    all
}

/// The index of `products`, exported in that order and said to be in tie
/// order, compressed against the dictionary of `by_rows`: both hold one
/// product in the same bytes, so their answers compare whole.
fn flagged_in_tie_order(by_rows: &Indexed, products: &[&Product]) -> Indexed {
    let dictionary = by_rows.summaries.dictionary().clone();
    let mut records = storefront_domain::compact::Records::new(dictionary.clone());
    for p in products {
        records.push(&p.encode_to_vec(), &mut Vec::new());
    }
    let compressed = (0..products.len())
        .map(|at| {
            let (lz4, length) = records.compressed(at).unwrap();
            storefront_proto::catalog::v1::CompressedProduct {
                lz4: Bytes::copy_from_slice(lz4),
                length,
                tail: Bytes::new(),
            }
        })
        .collect();
    index_from(Batch::Compressed {
        dictionary: dictionary.bytes().clone(),
        products: compressed,
        tie_order: true,
    })
}

/// A flagged export is indexed as it comes, unsorted by tantivy: rows
/// that are not in tie order leave segments out of order (the strict bar
/// is then not used), and every answer is still the sorted index's.
#[test]
fn a_flagged_export_is_indexed_as_it_comes() {
    let products: Vec<Product> = (0..400).map(product).collect();
    let by_rows = index_of(products.clone());
    let unsorted = flagged_in_tie_order(&by_rows, &products.iter().collect::<Vec<_>>());
    assert!(by_rows.segments.iter().all(|s| s.ordered()));
    assert!(!unsorted.segments.iter().all(|s| s.ordered()));
    assert_eq!(answers(&unsorted), answers(&by_rows));
}

/// An export in tie order is indexed as it comes (tantivy sorts nothing)
/// and answers as the same products in row order, sorted by the index;
/// what is written after the build (a change, the merge) is sorted.
#[test]
fn an_export_in_tie_order_answers_as_one_the_index_sorted() {
    let products: Vec<Product> = (0..400).map(product).collect();
    let by_rows = index_of(products.clone());
    let mut order: Vec<&Product> = products.iter().collect();
    order.sort_by_key(|p| std::cmp::Reverse(p.popularity));
    let in_order = flagged_in_tie_order(&by_rows, &order);
    assert!(in_order.segments.iter().all(|s| s.ordered()));
    assert!(in_order.live.index.settings().sort_by_field.is_some());
    let mut again = product(10);
    again.description = localized("written again");
    let id = again.meta.clone().unwrap().id;
    let follow = |at: &Indexed| {
        crate::follow::apply(at, std::slice::from_ref(&id), vec![reread(at, &again)], 2).unwrap()
    };
    let (by_rows, in_order) = (follow(&by_rows), follow(&in_order));
    assert!(in_order.searcher.segment_readers().len() >= 2);
    assert!(in_order.segments.iter().all(|s| s.ordered()));
    let merged = crate::build::merged(&in_order).unwrap().unwrap();
    assert!(merged.segments[0].ordered());
    let expected = answers(&by_rows);
    assert_eq!(answers(&in_order), expected);
    assert_eq!(answers(&merged), expected);
}

/// A stock and price change leaves the product's document as it was: the
/// step writes nothing to tantivy (the same segments, nothing deleted),
/// and the listing and summary answer with the new stock and price.
#[test]
fn a_stock_and_price_change_writes_no_document() {
    let indexed = index();
    let mut changed = product(11);
    let id = changed.meta.clone().unwrap().id;
    changed.in_stock = !changed.in_stock;
    changed.master_variant.as_mut().unwrap().prices[0].cent_amount += 1_000;
    let batch = reread(&indexed, &changed);
    let next = crate::follow::apply(&indexed, std::slice::from_ref(&id), vec![batch], 2).unwrap();
    let segments = |at: &Indexed| -> Vec<_> {
        at.searcher
            .segment_readers()
            .iter()
            .map(|r| (r.segment_id(), r.num_deleted_docs()))
            .collect()
    };
    assert_eq!(segments(&next), segments(&indexed), "no document written");
    let row = next.row(&id).unwrap() as usize;
    let held: Product =
        crate::view::IndexedProduct::decode(next.summaries.get(row).unwrap().as_slice())
            .unwrap()
            .into();
    assert_eq!(held.in_stock, changed.in_stock);
    assert_eq!(held.master_variant, changed.master_variant);
    assert_eq!(next.catalog_version, 2);
    // Written when the text changes.
    changed.brand = "Another".into();
    let batch = reread(&next, &changed);
    let written = crate::follow::apply(&next, &[id], vec![batch], 3).unwrap();
    assert_ne!(segments(&written), segments(&next));
}

/// `product` as the catalog exports it to `indexed` when it changed.
pub(crate) fn reread(
    indexed: &Indexed,
    product: &Product,
) -> storefront_proto::encoded::ProductBatch {
    let dictionary = indexed.summaries.dictionary().clone();
    let mut records = storefront_domain::compact::Records::new(dictionary.clone());
    records.push(&product.encode_to_vec(), &mut Vec::new());
    let (lz4, length) = records.compressed(0).unwrap();
    storefront_proto::encoded::ProductBatch {
        dictionary: dictionary.bytes().clone(),
        compressed: vec![storefront_proto::catalog::v1::CompressedProduct {
            lz4: Bytes::copy_from_slice(lz4),
            length,
            tail: Bytes::new(),
        }],
        ..Default::default()
    }
}

/// A change and a delete in the middle (the last row moves into the
/// deleted one's place), followed as the search service follows the
/// catalog: every row keeps exactly one live document, the changed one
/// is found by its new name, the deleted one is gone.
#[test]
fn a_change_and_a_delete_leave_one_document_per_row() {
    let indexed = index();
    let id = |i: u32| product(i).meta.unwrap().id;
    let mut changed = product(10);
    changed.name = localized("zanzibar lamp");
    let batch = reread(&indexed, &changed);
    let (deleted, moved) = (indexed.row(&id(3)).unwrap(), indexed.len() as u32 - 1);
    let next = crate::follow::apply(&indexed, &[id(3), id(10)], vec![batch], 2).unwrap();
    assert_eq!(next.len(), indexed.len() - 1);
    assert_eq!(next.searcher.num_docs(), next.len() as u64);
    let count = |query: &dyn tantivy::query::Query| {
        next.searcher
            .search(query, &tantivy::collector::Count)
            .unwrap()
    };
    for row in 0..next.len() as u64 {
        let term = tantivy::Term::from_field_u64(next.fields.ord, row);
        let query = tantivy::query::TermQuery::new(term, tantivy::schema::IndexRecordOption::Basic);
        assert_eq!(count(&query), 1, "row {row}");
    }
    assert_eq!(next.row(&id(3)), None);
    assert_eq!(next.row(&id(399)), Some(deleted), "row {moved} moved");
    let lang = next.fields.for_locale("en-AU");
    let zanzibar = text_query::build(&next, lang, &Synonyms::default(), "zanzibar", Typos::Exact)
        .unwrap()
        .unwrap();
    let found = next
        .searcher
        .search(
            zanzibar.query.as_ref(),
            &TopDocs::with_limit(5).order_by_score(),
        )
        .unwrap();
    assert_eq!(found.len(), 1);
}

/// The estimate that decides where a search runs: a known word counts its
/// documents in every field it is in (so at least its hits), a typo the
/// name words within it, a word near nothing nothing.
#[test]
fn postings_are_estimated_before_any_is_read() {
    let indexed = index();
    let lang = indexed.fields.en;
    let estimate = |text: &str| {
        let words = text_query::words(&indexed, lang, text).unwrap();
        text_query::postings(&indexed, lang, &words).unwrap()
    };
    let plan_hits = |text: &str| {
        let list = ListQuery::default();
        let plan = Plan::new(&indexed, &list, 0).unwrap();
        let query = text_query::build(&indexed, lang, &Synonyms::default(), text, Typos::Forgiven)
            .unwrap()
            .unwrap();
        plan.run(Some(&query)).unwrap().total
    };
    let linen = plan_hits("linen");
    assert!(linen > 0);
    // In the name and the description of each: twice its hits.
    assert_eq!(estimate("linen"), 2 * linen);
    assert_eq!(
        estimate("linen shirt"),
        estimate("linen") + estimate("shirt")
    );
    let typo = estimate("linnen");
    assert!(typo >= plan_hits("linnen") && typo > 0, "{typo}");
    assert_eq!(estimate("zzzzqx"), 0);
}

/// Brands are indexed unstemmed: a brand word whose stem differs
/// ("threads", stem "thread") still finds that brand's products, and
/// counts as a word the catalog has.
#[test]
fn brand_words_match_as_the_brand_is_spelled() {
    let indexed = index();
    let lang = indexed.fields.en;
    let list = ListQuery::default();
    let plan = Plan::new(&indexed, &list, 0).unwrap();
    for text in ["threads", "Tasman Threads"] {
        let query = text_query::build(&indexed, lang, &Synonyms::default(), text, Typos::Exact)
            .unwrap()
            .unwrap();
        let matched = plan.run(Some(&query)).unwrap();
        assert_eq!(matched.total, 100, "{text}");
    }
    let words = vec!["threads".to_string()];
    assert!(!text_query::any_unknown(&indexed, lang, &words).unwrap());
    assert_eq!(text_query::postings(&indexed, lang, &words).unwrap(), 100);
}

/// Consecutive words making a multi-word synonym entry match as typed or
/// as any other entry of its group: "classic wool" with the group
/// {dress, classic wool} finds exactly what "classic wool" and "dress"
/// find, and "wool classic" (not the entry) only its own.
#[test]
fn words_making_a_multi_word_entry_match_its_group() {
    let indexed = index();
    let lang = indexed.fields.en;
    let synonyms = Synonyms::new(&[vec!["dress".to_string(), "classic wool".into()]]);
    let rows = |text: &str, synonyms: &Synonyms| {
        let query = text_query::build(&indexed, lang, synonyms, text, Typos::Exact)
            .unwrap()
            .unwrap();
        let mut rows = super::top_hits(&indexed, query.query.as_ref(), 1000).unwrap();
        rows.sort_unstable();
        rows
    };
    let none = Synonyms::default();
    let mut expected = rows("classic wool", &none);
    expected.extend(rows("dress", &none));
    expected.sort_unstable();
    expected.dedup();
    assert!(expected.len() > rows("classic wool", &none).len());
    assert_eq!(rows("classic wool", &synonyms), expected);
    assert_eq!(rows("wool classic", &synonyms), rows("wool classic", &none));
}

/// A two-word search scores all of both words' terms as one union (the
/// same sums on what has both words) but pages only what has both, even
/// where a product with one of them scores above every one that has both.
#[test]
fn two_words_page_only_what_has_both() {
    let mut products: Vec<Product> = (0..40).map(product).collect();
    for (i, p) in products.iter_mut().enumerate() {
        let (name, description) = match i {
            0..10 => ("wool wool wool", "wool"),
            10..20 => ("linen scarf", "a scarf in wool"),
            _ => ("vase", "a vase"),
        };
        p.name = localized(name);
        p.description = localized(description);
    }
    let indexed = index_of(products);
    let lang = indexed.fields.for_locale("en-AU");
    let query = text_query::build(
        &indexed,
        lang,
        &Synonyms::default(),
        "wool linen",
        Typos::Exact,
    )
    .unwrap()
    .unwrap();
    assert!(query.flat.is_some());
    let list = ListQuery::default();
    let plan = Plan::new(&indexed, &list, 0).unwrap();
    let answer = plan.answer(plan.run(Some(&query)).unwrap()).unwrap();
    assert_eq!(answer.page.unwrap().total, 10);
    let mut got: Vec<Bytes> = answer
        .products
        .encoded
        .into_iter()
        .map(|p| p.body)
        .collect();
    let mut both: Vec<Bytes> = (10..20).map(|row| indexed.summary(row).unwrap()).collect();
    got.sort();
    both.sort();
    assert_eq!(got, both);
}

/// Products whose names have more pairs of the query's consecutive words
/// within one word, in order, rank first, even where others score higher
/// (shorter names): proximity before relevance.
#[test]
fn words_near_in_the_name_rank_first() {
    let indexed = index_named(40, |i| match i {
        0..5 => "linen shirt for summer in a long name of many words",
        5..10 => "linen summer shirt in a long name of many words",
        10..20 => "summer shirt linen",
        20..30 => "linen scarf and shirt",
        _ => "vase",
    });
    let lang = indexed.fields.for_locale("en-AU");
    let list = first_page(25);
    let mut plan = Plan::new(&indexed, &list, 0).unwrap();
    let rows = |range| sorted_summaries(&indexed, range);
    // (text, matches, the rows each group of the page must hold)
    let cases = [
        ("linen shirt", 30, vec![0..10, 10..30]),
        ("linen shirt summer", 20, vec![0..5, 5..10, 10..20]),
    ];
    // Words near: scored one by one, by a pruned pass, or as chosen; or
    // every match scored one by one.
    let modes = [
        (Some(0), Some(false)),
        (Some(u64::MAX), Some(false)),
        (None, None),
        (None, Some(true)),
    ];
    for ((text, total, groups), (seek_max, each)) in cases
        .into_iter()
        .flat_map(|case| modes.map(|mode| (case.clone(), mode)))
    {
        plan.seek_max = seek_max;
        plan.each = each;
        let query = text_query::build(&indexed, lang, &Synonyms::default(), text, Typos::Exact)
            .unwrap()
            .unwrap();
        // By relevance alone, a product with the words apart comes first.
        let best = super::top_hits(&indexed, query.query.as_ref(), 1).unwrap();
        assert!((10..20).contains(&best[0]), "{text}: {best:?}");
        let answer = plan.answer(plan.run(Some(&query)).unwrap()).unwrap();
        assert_eq!(answer.page.as_ref().unwrap().total, total, "{text}");
        let got: Vec<Bytes> = answer
            .products
            .encoded
            .iter()
            .map(|p| p.body.clone())
            .collect();
        let mut at = 0;
        for group in groups {
            let expected = rows(group);
            let end = (at + expected.len()).min(got.len());
            let mut page = got[at..end].to_vec();
            page.sort();
            if end - at == expected.len() {
                assert_eq!(page, expected, "{text}");
            } else {
                assert!(page.iter().all(|p| expected.contains(p)), "{text}");
            }
            at = end;
        }
        let none = Synonyms::default();
        let (rows, _, _) = plain(&indexed, (text, Typos::Exact, &none), &list, 0);
        let ids: Vec<Bytes> = rows.iter().map(|&r| indexed.summary(r).unwrap()).collect();
        assert_eq!(got, ids, "{text}");
    }
}

/// The last word, when no product has it, is the start of a name word
/// ("linen sh" finds what "linen shirt" finds); one letter is not, nor an
/// earlier word, nor a word some product has.
#[test]
fn a_last_word_no_product_has_is_the_start_of_a_name_word() {
    let indexed = index();
    let lang = indexed.fields.en;
    let list = ListQuery::default();
    let plan = Plan::new(&indexed, &list, 0).unwrap();
    let total = |text: &str| {
        let query = text_query::build(&indexed, lang, &Synonyms::default(), text, Typos::Exact)
            .unwrap()
            .unwrap();
        plan.run(Some(&query)).unwrap().total
    };
    assert!(total("linen shirt") > 0);
    assert_eq!(total("linen sh"), total("linen shirt"));
    assert_eq!(total("cott"), total("cotton"));
    assert_eq!(total("linen s"), 0);
    assert_eq!(total("sh linen"), 0);
    let words = |text: &str| text_query::words(&indexed, lang, text).unwrap();
    assert!(text_query::postings(&indexed, lang, &words("linen sh")).unwrap() > 0);
}

/// A word as typed ranks above a name word only sharing its stem, in each
/// language's stemmer (English `running`/`runs`, German `Schale`/`Schal`),
/// matching as many as before; on every path a page may take.
#[test]
fn a_word_as_typed_ranks_above_one_sharing_its_stem() {
    let indexed = index_named(50, |i| match i {
        0..10 => "runs mug",
        10..20 => "running shoe",
        20..30 => "keramik schale",
        30..40 => "woll schal",
        _ => "vase",
    });
    let list = first_page(10);
    let mut plan = Plan::new(&indexed, &list, 0).unwrap();
    let rows = |range| sorted_summaries(&indexed, range);
    let cases = [
        ("en-AU", "running", 10..20),
        ("en-AU", "runs", 0..10),
        ("de-DE", "Schale", 20..30),
        ("de-DE", "schal", 30..40),
    ];
    let modes = [(Some(false), None), (Some(true), None), (None, Some(0))];
    for ((locale, text, first), (each, seek_max)) in cases
        .into_iter()
        .flat_map(|case| modes.map(|mode| (case.clone(), mode)))
    {
        plan.each = each;
        plan.seek_max = seek_max;
        let lang = indexed.fields.for_locale(locale);
        let query = text_query::build(&indexed, lang, &Synonyms::default(), text, Typos::Exact)
            .unwrap()
            .unwrap();
        let answer = plan.answer(plan.run(Some(&query)).unwrap()).unwrap();
        // Both forms match, as their stem does.
        assert_eq!(answer.page.as_ref().unwrap().total, 20, "{text}");
        let mut got: Vec<Bytes> = (answer.products.encoded.iter())
            .map(|p| p.body.clone())
            .collect();
        got.sort();
        assert_eq!(got, rows(first), "{locale} {text}");
    }
    let none = Synonyms::default();
    let (page, _, _) = plain(&indexed, ("running", Typos::Exact, &none), &list, 0);
    assert!(page.iter().all(|row| (10..20).contains(row)), "{page:?}");
}

/// A word's union is kept from its second search on (per segment) and
/// answers as read, a word within typos with its clauses read apart; a
/// change's segment is read, and its deleted documents are not counted
/// from the unions kept before it.
#[test]
fn words_searched_again_answer_from_their_kept_unions() {
    let indexed = index();
    let none = Synonyms::default();
    let list = first_page(20);
    let typed = |at: &Indexed, text: &str, typos| {
        let lang = at.fields.for_locale("en-AU");
        let query = text_query::build(at, lang, &none, text, typos)
            .unwrap()
            .unwrap();
        let plan = Plan::new(at, &list, 0).unwrap();
        let answer = plan.answer(plan.run(Some(&query)).unwrap()).unwrap();
        let (rows, total, facets) = plain(at, (text, typos, &none), &list, 0);
        assert_eq!(answer.page.unwrap().total, total, "{text}");
        assert_eq!(answer.facets.unwrap(), facets, "{text}");
        assert_eq!(bodies(answer.products), summaries(at, &rows), "{text}");
        total
    };
    let answer = |at: &Indexed, text: &str| typed(at, text, Typos::Exact);
    let kept = |at: &Indexed| at.live.word_matches.len().0;
    let found = |at: &Indexed| at.live.word_matches.len().1;
    let segments = indexed.searcher.segment_readers().len();
    let total = answer(&indexed, "cotton linen");
    assert!(total > 0);
    assert_eq!(kept(&indexed), 0, "read once: remembered, not kept");
    assert_eq!(answer(&indexed, "cotton linen"), total);
    assert_eq!(kept(&indexed), 2 * segments);
    assert_eq!(found(&indexed), 0);
    assert_eq!(answer(&indexed, "cotton linen"), total, "from the kept");
    assert_eq!(found(&indexed), 2 * segments, "both words, every segment");
    assert_eq!(answer(&indexed, "linen"), answer(&indexed, "linen"));
    assert_eq!(kept(&indexed), 2 * segments, "linen kept once");
    // A word within typos, kept with its typo clauses' bitsets.
    let total = typed(&indexed, "cottn linen", Typos::Forgiven);
    assert!(total > 0);
    assert_eq!(typed(&indexed, "cottn linen", Typos::Forgiven), total);
    assert_eq!(kept(&indexed), 3 * segments, "cottn kept, linen as it was");
    let before = found(&indexed);
    assert_eq!(typed(&indexed, "cottn linen", Typos::Forgiven), total);
    assert_eq!(
        found(&indexed),
        before + 2 * segments,
        "cottn from the kept"
    );
    // One product renamed to have both words, another that had both
    // renamed to neither: deleted where the kept unions hold them.
    let id = |i: u32| product(i).meta.unwrap().id;
    let had = (0..400)
        .find(|&i| {
            let name = product(i).name.unwrap().values["en-AU"].clone();
            name.contains("cotton") && name.contains("linen")
        })
        .unwrap();
    let mut gained = product(if had == 10 { 11 } else { 10 });
    gained.name = localized("zanzibar cotton linen");
    let mut lost = product(had);
    lost.name = localized("zanzibar lamp");
    lost.description = localized("a lamp");
    let ids = [id(had), gained.meta.clone().unwrap().id];
    let batches = vec![reread(&indexed, &lost), reread(&indexed, &gained)];
    let next = crate::follow::apply(&indexed, &ids, batches, 2).unwrap();
    assert!(next.searcher.segment_readers().len() > segments);
    let before = found(&next);
    answer(&next, "cotton linen");
    // The old segments' unions, which hold the deleted document, found.
    assert!(found(&next) >= before + 2 * segments);
    assert_eq!(
        answer(&next, "cotton linen"),
        answer(&indexed, "cotton linen")
    );
}
