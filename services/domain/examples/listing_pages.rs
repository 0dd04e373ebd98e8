//! What the listing's own work costs a page at retail size, without the
//! hops around it: the scale bench's filtered page (a brand, in stock, a
//! category; sorted by price then name: about 1% of the products match)
//! against its plain page (a sort, an offset in the first thousand) as the
//! baseline measured in the same run.
//!
//! `cargo run --release -p storefront-domain --example listing_pages [rows]`
//! (default 100,000).

use std::hint::black_box;
use std::time::{Duration, Instant};

use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts, ProductSchema};
use storefront_domain::currencies::{Code, Currencies};
use storefront_domain::listing::Listing;
use storefront_proto::common::v1::{
    Filter, FilterOperator, FilterValue, ListQuery, PageRequest, SortDirection, SortField,
    filter_value,
};

const PAGES: usize = 20_000;
const BRANDS: usize = 8;
/// Top-level categories: each product is in one, and in one of its leaves.
const TOPS: usize = 12;
const LEAVES: usize = 300;

/// A pseudo-random number per product and purpose, the same every run.
fn mix(i: usize, salt: u64) -> u64 {
    let mut x = (i as u64 ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 31;
    x.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 17
}

fn product(i: usize, codes: &[Code]) -> ProductFacts {
    let top = mix(i, 1) as usize % TOPS;
    let leaf = top * (LEAVES / TOPS) + mix(i, 2) as usize % (LEAVES / TOPS);
    ProductFacts {
        id: format!("{:08x}-0000-4000-8000-{i:012x}", mix(i, 3) as u32).into(),
        key: format!("product-key-{i}").into(),
        name: Some(format!("Sturdy Product Name {}", mix(i, 4) % 100_000).into()),
        brand: format!("brand{}", mix(i, 5) as usize % BRANDS).into(),
        category_ids: [format!("top-{top}").into(), format!("leaf-{leaf}").into()].into(),
        status: 1,
        featured: i.is_multiple_of(10),
        popularity: (mix(i, 6) % 1000) as u32,
        in_stock: !mix(i, 7).is_multiple_of(8),
        created_at: Some((1_700_000_000 + i as i64, 0)),
        prices: codes
            .iter()
            .map(|c| (*c, 500 + (mix(i, 8) % 2_000) as i64 * 50))
            .collect(),
        attributes: [format!("color={}", mix(i, 9) % 12).into()].into(),
    }
}

fn sort(field: &str, desc: bool) -> SortField {
    let direction = if desc {
        SortDirection::Desc
    } else {
        SortDirection::Asc
    };
    SortField {
        field: field.into(),
        direction: direction as i32,
    }
}

fn equal(field: &str, kind: filter_value::Kind) -> Filter {
    Filter {
        field: field.into(),
        operator: FilterOperator::Eq as i32,
        value: Some(FilterValue { kind: Some(kind) }),
    }
}

fn page(offset: u64) -> Option<PageRequest> {
    Some(PageRequest { limit: 20, offset })
}

/// The scale bench's lists: plain pages and filtered ones, `PAGES` each.
fn queries() -> (Vec<ListQuery>, Vec<ListQuery>) {
    let sorts = [
        ("name", false),
        ("price", true),
        ("price", false),
        ("createdAt", true),
        ("popularity", true),
        ("brand", false),
    ];
    let plain = (0..PAGES)
        .map(|n| {
            let (field, desc) = sorts[mix(n, 10) as usize % sorts.len()];
            ListQuery {
                page: page(mix(n, 11) % 50 * 20),
                sort: vec![sort(field, desc)],
                filters: Vec::new(),
            }
        })
        .collect();
    let filtered = (0..PAGES)
        .map(|n| {
            let brand = format!("brand{}", mix(n, 12) as usize % BRANDS);
            let category = format!("top-{}", mix(n, 13) as usize % TOPS);
            ListQuery {
                page: page(0),
                sort: vec![sort("price", true), sort("name", false)],
                filters: vec![
                    equal("brand", filter_value::Kind::Text(brand)),
                    equal("inStock", filter_value::Kind::Boolean(true)),
                    equal("category", filter_value::Kind::Text(category)),
                ],
            }
        })
        .collect();
    (plain, filtered)
}

/// The mean time of a page of each query, and how many rows they listed.
fn per_page(listing: &Listing<ProductSchema>, queries: &[ListQuery]) -> (Duration, u64) {
    let mut listed = 0u64;
    let start = Instant::now();
    for query in queries {
        let (info, rows) = listing
            .page(black_box(query), 0, &[("key", false)])
            .expect("a page of a valid query");
        listed += info.total.min(1) + rows.len() as u64;
    }
    (start.elapsed() / queries.len() as u32, listed)
}

fn main() {
    let rows: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let currencies = Currencies::demo();
    let codes = currencies.codes().to_vec();
    let facts: Vec<ProductFacts> = (0..rows).map(|i| product(i, &codes)).collect();
    let listing = Listing::<ProductSchema>::build(&facts, PRODUCT_FIELDS, &codes);
    drop(facts);
    let (plain, filtered) = queries();
    let matches = {
        let mut q = filtered[0].clone();
        q.page = Some(PageRequest {
            limit: 1,
            offset: 0,
        });
        listing.page(&q, 0, &[("key", false)]).map(|(i, _)| i.total)
    };
    // Warm both, then alternate so that neither gets the quieter moment.
    per_page(&listing, &plain[..PAGES / 10]);
    per_page(&listing, &filtered[..PAGES / 10]);
    let (mut base, mut cost) = (Vec::new(), Vec::new());
    for _ in 0..3 {
        base.push(per_page(&listing, &plain).0);
        cost.push(per_page(&listing, &filtered).0);
    }
    let best = |d: &[Duration]| d.iter().copied().min().unwrap_or_default();
    let (base, cost) = (best(&base), best(&cost));
    println!("{rows} rows, {PAGES} pages each, best of three");
    println!("plain page (baseline)        {base:>10.2?}");
    println!(
        "filtered page                {cost:>10.2?}  {:>6.1}x  ({} matches for the first)",
        cost.as_secs_f64() / base.as_secs_f64().max(1e-9),
        matches.map_or_else(|e| e.to_string(), |m| m.to_string()),
    );
}
