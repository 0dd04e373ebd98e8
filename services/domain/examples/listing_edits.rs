//! What one live change costs the product listing at retail size: a new
//! version cloned from the last (which readers still hold, so every column
//! the change touches is copied), the change applied, the old version
//! dropped; as the catalog does for each price change or rename.
//!
//! `cargo run --release -p storefront-domain --example listing_edits [rows]`
//! (default 100,000). The baseline, in the same run, is the new version
//! cloned and dropped with nothing changed.

use std::time::{Duration, Instant};

use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts, ProductSchema};
use storefront_domain::currencies::{Code, Currencies};
use storefront_domain::listing::Listing;

const ROUNDS: usize = 200;

fn product(i: usize, codes: &[Code]) -> ProductFacts {
    ProductFacts {
        id: format!("{:08x}-0000-4000-8000-{i:012x}", i * 7919 % 1_000_003).into(),
        key: format!("product-key-{i}").into(),
        name: Some(format!("Sturdy Product Name {i}").into()),
        brand: format!("brand{}", i % 50).into(),
        category_ids: [format!("cat-{}", i % 300).into()].into(),
        status: 1,
        featured: i.is_multiple_of(10),
        popularity: (i * 31 % 1000) as u32,
        in_stock: true,
        created_at: Some((1_700_000_000 + i as i64, 0)),
        prices: codes
            .iter()
            .map(|c| (*c, 1000 + (i as i64 * 37 % 50_000)))
            .collect(),
        attributes: [format!("color={}", i % 12).into()].into(),
    }
}

/// The mean time of `ROUNDS` changes, each on a version cloned from the
/// last; `change` edits the product of the row it is given.
fn per_change(
    current: &mut Listing<ProductSchema>,
    codes: &[Code],
    rows: usize,
    change: impl Fn(usize, &mut ProductFacts),
) -> Duration {
    let start = Instant::now();
    for round in 0..ROUNDS {
        let row = round * 4_999 % rows;
        let mut next = current.clone();
        let mut changed = product(row, codes);
        change(round, &mut changed);
        if changed != product(row, codes) {
            next.replace(row as u32, &changed, codes);
        }
        drop(std::mem::replace(current, next));
    }
    start.elapsed() / ROUNDS as u32
}

fn main() {
    let rows: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(100_000);
    let currencies = Currencies::demo();
    let codes = currencies.codes().to_vec();
    let facts: Vec<ProductFacts> = (0..rows).map(|i| product(i, &codes)).collect();
    let mut listing = Listing::<ProductSchema>::build(&facts, PRODUCT_FIELDS, &codes);
    drop(facts);
    // A price no product had: each phase its own, as a live change brings.
    let price = |round: usize, p: &mut ProductFacts| {
        for (_, cents) in &mut p.prices {
            *cents = 100_000_000 + round as i64;
        }
    };
    let baseline = per_change(&mut listing, &codes, rows, |_, _| {});
    let priced = per_change(&mut listing, &codes, rows, price);
    let renamed = per_change(&mut listing, &codes, rows, |round, p| {
        price(ROUNDS + round, p);
        p.name = p.name.take().map(|n| format!("{n} word{round}").into());
    });
    let ratio = |d: Duration| d.as_secs_f64() / baseline.as_secs_f64().max(1e-9);
    println!(
        "{rows} rows, {} currencies, {ROUNDS} changes each",
        codes.len()
    );
    println!("version cloned, nothing changed  {baseline:>10.2?}");
    println!(
        "new price in every currency      {priced:>10.2?}  {:>8.0}x",
        ratio(priced)
    );
    println!(
        "new price and a new name         {renamed:>10.2?}  {:>8.0}x",
        ratio(renamed)
    );
}
