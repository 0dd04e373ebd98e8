use super::load::{FeedError, FeedLimits, Loader};
use super::*;
use crate::generate;

fn exported(parts: &Parts) -> Vec<u8> {
    let mut out = Vec::new();
    write(
        &parts.categories,
        &parts.products,
        &parts.collections,
        &mut out,
    )
    .unwrap();
    out
}

/// Every problem of `feed`, as `catalog check` prints them.
fn problems(feed: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut report = |e: FeedError| found.push(e.to_string());
    let mut loader = Loader::new(&mut report, FeedLimits::default());
    loader.read(feed.as_bytes()).unwrap();
    drop(loader);
    found
}

#[test]
fn export_import_export_is_the_same_bytes() {
    // Several batches, so that they are put back in line order.
    let generated = generate::generate(2_500, 9);
    let first = exported(&generated);
    let imported = read(first.as_slice(), FeedLimits::default()).unwrap();
    assert_eq!(imported.facts, generated.facts);
    assert_eq!(imported.categories, generated.categories);
    assert_eq!(imported.collections, generated.collections);
    let second = exported(&imported);
    assert!(first == second, "a round trip changed the feed");
    let text = String::from_utf8(first).unwrap();
    let records = 52 + 2_500 + generated.collections.len();
    let header = format!("{{\"type\":\"header\",\"version\":1,\"records\":{records}}}\n");
    assert!(text.starts_with(&header), "{}", &text[..80]);
    assert_eq!(text.lines().count(), 1 + records);
}

const CATEGORY: &str = r#"{"type":"category","id":"c-1","key":"home","name":{"en-AU":"Home"}}"#;

fn product(id: &str, sku: &str, tail: &str) -> String {
    format!(
        r#"{{"type":"product","id":"{id}","key":"k-{id}","name":{{"en-AU":"Mug"}},"categoryId":"c-1","variants":[{{"id":1,"sku":"{sku}","prices":[{{"currencyCode":"AUD","centAmount":1295}}],"availability":{{"quantity":3}}}}]{tail}}}"#
    )
}

#[test]
fn a_good_feed_reads_with_defaults_derived() {
    let feed = format!(
        "{{\"type\":\"header\",\"version\":1}}\n{CATEGORY}\n\n{}\n{}\n",
        product("p-1", "S-1", ""),
        r#"{"type":"collection","id":"col-1","key":"picks","name":{"en-AU":"Picks"},"productIds":["p-1"]}"#
    );
    let parts = read(feed.as_bytes(), FeedLimits::default()).unwrap();
    let p = parts.products.decode(0).unwrap();
    assert_eq!(p.category_ids, ["c-1"]);
    assert!(p.in_stock);
    assert_eq!(p.slug.unwrap().values["en-AU"], "mug-k-p-1");
    assert_eq!(p.master_variant.unwrap().sku, "S-1");
    assert_eq!(parts.collections[0].product_ids, ["p-1"]);
}

#[test]
fn every_kind_of_problem_is_found_with_its_line() {
    let feed = [
        CATEGORY.to_string(),
        "not json".to_string(),
        r#"{"type":"product","id":"p-0"}"#.to_string(),
        product("p-1", "S-1", ""),
        product("p-1", "S-1", ""),
        product("p-2", "S-2", "").replace(r#""currencyCode":"AUD","#, ""),
        product("p-3", "S-3", "").replace("c-1", "nowhere"),
        product("p-4", "S-4", "").replace("en-AU", "english"),
        product("p-5", "S-5", "").replace(r#""quantity":3"#, r#""quantity":-2"#),
        product("p-6", "S-6", "").replace(r#"[{"currencyCode":"AUD","centAmount":1295}]"#, "[]"),
        product("p-7", "S-7", r#","colour":"red""#),
        r#"{"type":"widget"}"#.to_string(),
    ]
    .join("\n");
    let found = problems(&feed);
    let expected = [
        "line 2: record: not a JSON object",
        "line 3: key: is required",
        "line 5: id: a second product with this value (first on line 4)",
        "line 5: variants[0].sku: a second variant with this value (first on line 4)",
        "line 6: variants[0].prices[0].currencyCode: is required",
        "line 7: categoryId: is not a category on an earlier line",
        "line 8: name.english: is not a locale (xx-XX, e.g. en-AU)",
        "line 9: variants[0].availability.quantity: stock cannot be negative",
        "line 10: variants[0].prices: needs at least one price",
        "line 11: colour: is not a field of this record",
        "line 12: type: must be header, category, product or collection",
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (found, expected) in found.iter().zip(expected) {
        assert!(found.starts_with(expected), "{found} / {expected}");
    }
}

fn category(id: &str, parent: &str) -> String {
    format!(
        r#"{{"type":"category","id":"{id}","key":"k-{id}","name":{{"en-AU":"C {id}"}},"parentId":"{parent}"}}"#
    )
}

/// A chain of `n` categories, each the child of the one before.
fn chain(n: usize) -> String {
    (0..n)
        .map(|i| {
            let parent = if i == 0 {
                String::new()
            } else {
                format!("c{}", i - 1)
            };
            category(&format!("c{i}"), &parent) + "\n"
        })
        .collect()
}

#[test]
fn categories_nest_at_most_the_configured_depth() {
    assert!(problems(&chain(12)).is_empty());
    let found = problems(&chain(14));
    assert_eq!(
        found[0],
        "line 13: parentId: nests deeper than 12 levels (CATALOG_MAX_CATEGORY_DEPTH)"
    );
    // Its child names a parent the catalog does not have.
    assert!(
        found[1].starts_with("line 14: parentId: is not a category"),
        "{found:?}"
    );
    let deeper = FeedLimits {
        max_depth: 14,
        ..FeedLimits::default()
    };
    assert!(read(chain(14).as_bytes(), deeper).is_ok());
}

#[test]
fn a_cycle_or_a_parent_of_itself_is_refused() {
    let feed = [category("a", "b"), category("b", "a"), category("c", "c")].join("\n");
    let found = problems(&feed);
    assert_eq!(found.len(), 3, "{found:?}");
    assert!(
        found
            .iter()
            .all(|p| p.contains("parentId: is not a category on an earlier line"))
    );
}

#[test]
fn a_tree_past_one_answer_is_refused_with_its_line() {
    // 100,000 categories at one level: far more than one answer holds.
    let wide: String = (0..100_000)
        .map(|i| category(&format!("w{i}"), "") + "\n")
        .collect();
    let found = problems(&wide);
    assert_eq!(
        found.len(),
        1,
        "reported once: {:?}",
        &found[..found.len().min(3)]
    );
    assert!(found[0].contains("navigation tree over"), "{}", found[0]);
    // What fits is read, and its tree is within the bound.
    let fits: String = (0..10_000)
        .map(|i| category(&format!("w{i}"), "") + "\n")
        .collect();
    let parts = read(fits.as_bytes(), FeedLimits::default()).unwrap();
    assert_eq!(parts.categories.len(), 10_000);
}

/// Issue 44 item 4: a feed says how many records follow its header, and
/// one that ends before (an upload cut between lines) is refused whole.
#[test]
fn a_feed_cut_short_is_refused_whole() {
    let generated = generate::generate(300, 5);
    let whole = exported(&generated);
    let text = std::str::from_utf8(&whole).unwrap();
    let header = text.lines().next().unwrap();
    let total = text.lines().count() - 1;
    assert_eq!(
        header,
        format!(r#"{{"type":"header","version":1,"records":{total}}}"#)
    );
    let required = FeedLimits {
        count_required: true,
        ..FeedLimits::default()
    };
    assert!(read(whole.as_slice(), required.clone()).is_ok());
    let cut: Vec<&str> = text.lines().take(total - 30).collect();
    let refused = read(cut.join("\n").as_bytes(), FeedLimits::default());
    let Err(ReadError::Refused(refused)) = refused else {
        panic!("a cut feed is refused");
    };
    let problem = refused.errors[0].to_string();
    assert!(
        problem.starts_with("line 1: records: the header declares"),
        "{problem}"
    );
    // Without a count, an import (and `catalog check`) refuses the feed;
    // a file read at start may leave it out.
    let bare: Vec<&str> = text.lines().skip(1).collect();
    assert!(read(bare.join("\n").as_bytes(), required).is_err());
    assert!(read(bare.join("\n").as_bytes(), FeedLimits::default()).is_ok());
}

/// Prices are bounded where they come in, so that no cart of bounded
/// lines can overflow its total (issue 44 item 10).
#[test]
fn a_price_past_the_largest_amount_is_refused() {
    let priced = |cents: i64| {
        let line = product("p-1", "S-1", "").replace("1295", &cents.to_string());
        format!("{CATEGORY}\n{line}\n")
    };
    assert!(problems(&priced(100_000_000_000)).is_empty());
    let found = problems(&priced(100_000_000_001));
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0].contains("centAmount: must be at most 100000000000"),
        "{}",
        found[0]
    );
}

/// A line over the limit is refused as it is read and the next line is
/// read as usual (its rest skipped, never kept: issue 44 item 5).
#[test]
fn an_over_long_line_is_refused_and_the_next_one_read() {
    let long = format!(
        r#"{{"type":"category","id":"x","key":"{}"}}"#,
        "k".repeat(9 << 20)
    );
    let feed = format!("{long}\n{CATEGORY}\n");
    let found = problems(&feed);
    assert_eq!(
        found.len(),
        1,
        "{:?}",
        found
            .iter()
            .map(|f| &f[..60.min(f.len())])
            .collect::<Vec<_>>()
    );
    assert!(
        found[0].starts_with("line 1: record: the line is longer than"),
        "{}",
        &found[0][..80]
    );
}

/// An id is 1 to `MAX_ID_CHARS` characters (not bytes) without control
/// characters (C0, DEL, C1), as `char::is_control` has them.
#[test]
fn ids_are_counted_in_characters_and_refuse_control_characters() {
    use storefront_proto::names::MAX_ID_CHARS;
    let problem = |id: &str| {
        let mut p = convert::Problems::default();
        p.id("key", id);
        p.0.into_iter().map(|f| f.message).collect::<Vec<_>>()
    };
    let long = format!("is longer than {MAX_ID_CHARS} characters");
    assert_eq!(problem(""), ["is required"]);
    assert!(problem(&"a".repeat(MAX_ID_CHARS)).is_empty());
    assert_eq!(problem(&"a".repeat(MAX_ID_CHARS + 1)), [long.as_str()]);
    // Twice as many bytes as characters: counted by characters.
    assert!(problem(&"ä".repeat(MAX_ID_CHARS)).is_empty());
    assert_eq!(problem(&"ä".repeat(MAX_ID_CHARS + 1)), [long.as_str()]);
    for control in ['\0', '\n', '\u{1f}', '\u{7f}', '\u{80}', '\u{85}', '\u{9f}'] {
        let id = format!("sku-{control}-1");
        assert_eq!(problem(&id), ["contains control characters"], "{id:?}");
    }
    for fine in ["SKU-ä-1", "sku\u{a0}1", "ключ-1", "鍵-1", "sku-\u{2028}"] {
        assert!(problem(fine).is_empty(), "{fine:?}");
        let is_control = fine.chars().any(char::is_control);
        assert!(!is_control, "{fine:?}");
    }
}

/// A feed's batch stores each product without a copy of its master
/// variant (`product_to_store`): its first variant is lent to the summary
/// as it is encoded, and the summary's attributes are those its facts
/// hold. Stored, it reads back as the product with its master, byte for
/// byte, with the same facts.
#[test]
fn a_product_to_store_is_stored_as_the_product_with_its_master() {
    use storefront_domain::catalog::ProductFacts;
    use storefront_proto::catalog::v1::Product;
    let generated = generate::generate(300, 4);
    let currencies = generated.currencies.clone();
    let now = storefront_domain::time::now();
    let mut priced = 0;
    for row in 0..generated.products.len() as u32 {
        let product = generated.products.decode(row).unwrap();
        let convert = |to_store: bool| {
            let record = convert::product_record(&product);
            let ids = product.category_ids.clone();
            let mut problems = convert::Problems::default();
            let made = if to_store {
                convert::product_to_store(record, ids, &mut problems, now, &currencies)
            } else {
                convert::product(record, ids, &mut problems, now, &currencies)
            };
            assert!(problems.0.is_empty(), "{:?}", problems.0);
            made
        };
        let (mut whole, mut to_store) = (convert(false), convert(true));
        assert!(to_store.master_variant.is_none());
        assert_eq!(ProductFacts::of(&to_store), ProductFacts::of(&whole));
        // A price picked on the first variant stays on it, as on a product
        // with its master; the summary's master has none either way.
        if row % 2 == 0 {
            storefront_domain::catalog::price_in(&mut whole, "AUD");
            storefront_domain::catalog::price_in(&mut to_store, "AUD");
            priced += 1;
        }
        let stored = |p: Product, listed: bool| {
            let mut products = StoredProducts::new(&p);
            let scratch = &mut crate::store::Scratch::default();
            if listed {
                // As a batch stores it: the attributes its facts hold.
                let facts = ProductFacts::of(&p);
                products.push_listed(p, &facts.attributes, scratch);
            } else {
                products.push(p, scratch);
            }
            (products.summary(0).unwrap(), products.encoded(0).unwrap())
        };
        let same = stored(to_store, true) == stored(whole.clone(), false);
        assert!(
            same,
            "row {row}: stored apart from the product with its master"
        );
        let (summary, encoded) = stored(whole.clone(), false);
        let back = <Product as prost::Message>::decode(encoded.as_slice()).unwrap();
        assert_eq!(
            back.master_variant.as_ref().map(|v| &v.sku),
            Some(&whole.variants[0].sku)
        );
        // The summary as prost writes it: every field in order, the
        // attributes its variants have.
        let listed = <Product as prost::Message>::decode(summary.as_slice()).unwrap();
        let attributes = storefront_domain::catalog::variant_attributes(&whole);
        assert_eq!(listed.variant_attributes, attributes);
        assert!(!attributes.is_empty());
        assert_eq!(prost::Message::encode_to_vec(&listed), summary);
    }
    assert!(priced > 0);
}

/// A price's minor units are its currency's, as the catalog's currencies
/// have them; a currency outside them is refused.
#[test]
fn prices_take_their_currencys_minor_units() {
    use storefront_domain::currencies::Currencies;
    let currencies = Currencies::from_pairs([("JPY", 0), ("KWD", 3), ("AUD", 2)].into_iter());
    let generated = generate::generate(1, 2);
    let product = generated.products.decode(0).unwrap();
    let now = storefront_domain::time::now();
    let priced = |code: &str| {
        let mut record = convert::product_record(&product);
        for v in &mut record.variants {
            v.prices = vec![record::PriceRecord {
                currency_code: code.to_string(),
                cent_amount: 1500,
            }];
        }
        let mut problems = convert::Problems::default();
        let made = convert::product(record, Vec::new(), &mut problems, now, &currencies);
        let digits: Vec<u32> = made
            .variants
            .iter()
            .map(|v| v.prices[0].fraction_digits)
            .collect();
        (
            digits,
            problems
                .0
                .into_iter()
                .map(|p| p.message)
                .collect::<Vec<_>>(),
        )
    };
    for (code, units) in [("JPY", 0), ("KWD", 3), ("AUD", 2)] {
        let (digits, problems) = priced(code);
        assert!(problems.is_empty(), "{code}: {problems:?}");
        assert!(
            !digits.is_empty() && digits.iter().all(|&d| d == units),
            "{code}: {digits:?}"
        );
    }
    let (_, problems) = priced("USD");
    assert!(
        problems.iter().all(|p| p == "must be one of JPY, KWD, AUD"),
        "{problems:?}"
    );
    assert!(!problems.is_empty());
}
