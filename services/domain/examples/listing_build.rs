//! What building each listing column costs at retail size: every field
//! of the catalog's listing over products shaped as the demo generator
//! makes them (a million distinct creation times and keys, five thousand
//! names, ten thousand popularities, a few thousand prices, colour and size sets, category
//! paths), each column built alone on one core, against sorting as many
//! `u64`s (`sort_unstable`) as the baseline measured in the same run.
//! Both the catalog and search build every column at each start.
//!
//! `cargo run --release -p storefront-domain --example listing_build [rows]`
//! (default 1,000,000).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts, ProductSchema, attribute};
use storefront_domain::currencies::{Code, Currencies};
use storefront_domain::listing::Column;
use storefront_domain::query::{Schema, Value};

const COLOURS: [&str; 10] = [
    "Black", "White", "Navy", "Grey", "Red", "Green", "Blue", "Sand", "Olive", "Rust",
];
const SIZES: [&str; 5] = ["XS", "S", "M", "L", "XL"];
const ADJECTIVES: [&str; 16] = [
    "Essential",
    "Vintage",
    "Relaxed",
    "Heritage",
    "Coastal",
    "Classic",
    "Modern",
    "Urban",
    "Everyday",
    "Premium",
    "Soft",
    "Rugged",
    "Slim",
    "Cosy",
    "Bold",
    "Pure",
];
const MATERIALS: [&str; 8] = [
    "Linen", "Cotton", "Wool", "Denim", "Leather", "Glass", "Oak", "Ceramic",
];
const NOUNS: [&str; 40] = [
    "Loafer", "Candle", "Sneaker", "Boot", "T-Shirt", "Shirt", "Dress", "Jeans", "Jacket", "Scarf",
    "Hat", "Bag", "Wallet", "Belt", "Sock", "Sandal", "Vase", "Bowl", "Mug", "Plate", "Lamp",
    "Throw", "Cushion", "Rug", "Towel", "Sheet", "Duvet", "Pillow", "Mirror", "Clock", "Chair",
    "Stool", "Table", "Shelf", "Basket", "Tray", "Jug", "Glass", "Coat", "Skirt",
];
const BRANDS: usize = 40;
const LEAVES: usize = 40;

/// A pseudo-random number per product and purpose, the same every run.
fn mix(i: usize, salt: u64) -> u64 {
    let mut x = (i as u64 ^ salt).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 31;
    x.wrapping_mul(0xBF58_476D_1CE4_E5B9) >> 17
}

fn product(i: usize, codes: &[Code], shared: &Shared) -> ProductFacts {
    let leaf = mix(i, 2) as usize % LEAVES;
    let colour = mix(i, 9) as usize % COLOURS.len();
    let count = 1 + mix(i, 10) as usize % 4;
    let mut attributes: Vec<Arc<str>> = (0..count)
        .flat_map(|v| {
            let c = &shared.colours[(colour + v / SIZES.len()) % COLOURS.len()];
            [c.clone(), shared.sizes[v % SIZES.len()].clone()]
        })
        .collect();
    attributes.sort_unstable();
    attributes.dedup();
    let name = format!(
        "{} {} {}",
        ADJECTIVES[mix(i, 5) as usize % ADJECTIVES.len()],
        MATERIALS[mix(i, 15) as usize % MATERIALS.len()],
        NOUNS[mix(i, 16) as usize % NOUNS.len()]
    );
    let dollars = 10 + (mix(i, 8) % 2_000) as i64;
    ProductFacts {
        id: format!("{:08x}-0000-4000-8000-{:012x}", mix(i, 3) as u32, mix(i, 4)).into(),
        key: format!("{}-{i:06}", name.to_lowercase().replace(' ', "-")).into(),
        name: Some(name.into()),
        brand: shared.brands[mix(i, 6) as usize % BRANDS].clone(),
        category_ids: shared.paths[leaf].clone(),
        status: 1 + i32::from(i.is_multiple_of(50)),
        featured: mix(i, 7) % 100 < 8,
        popularity: (mix(i, 11) % 10_000) as u32,
        in_stock: !mix(i, 12).is_multiple_of(10),
        created_at: Some((1_600_000_000 + (mix(i, 13) % 150_000_000) as i64, 0)),
        prices: codes
            .iter()
            .enumerate()
            .map(|(n, c)| (*c, (dollars * (100 + 7 * n as i64)) / 100 * 100 - 1))
            .collect(),
        attributes: attributes.into(),
    }
}

/// The repeated strings, held once as a build interns them.
struct Shared {
    colours: Vec<Arc<str>>,
    sizes: Vec<Arc<str>>,
    brands: Vec<Arc<str>>,
    paths: Vec<Arc<[Arc<str>]>>,
}

impl Shared {
    fn new() -> Self {
        let tops: Vec<Arc<str>> = (0..8).map(|t| format!("top-{t}").into()).collect();
        Shared {
            colours: COLOURS.map(|c| attribute("colour", c).into()).into(),
            sizes: SIZES.map(|s| attribute("size", s).into()).into(),
            brands: (0..BRANDS).map(|b| format!("Brand {b}").into()).collect(),
            paths: (0..LEAVES)
                .map(|l| [tops[l % tops.len()].clone(), format!("leaf-{l}").into()].into())
                .collect(),
        }
    }
}

/// The best of three times of `work`.
fn best(mut work: impl FnMut()) -> Duration {
    (0..3)
        .map(|_| {
            let start = Instant::now();
            work();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn main() {
    let rows: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let currencies = Currencies::demo();
    let codes = currencies.codes().to_vec();
    let shared = Shared::new();
    let facts: Vec<ProductFacts> = (0..rows).map(|i| product(i, &codes, &shared)).collect();
    let mut by_id: Vec<u32> = (0..rows as u32).collect();
    by_id.sort_unstable_by(|&a, &b| facts[a as usize].id.cmp(&facts[b as usize].id));

    let numbers: Vec<u64> = (0..rows).map(|i| mix(i, 14)).collect();
    let baseline = best(|| {
        let mut copy = numbers.clone();
        copy.sort_unstable();
        black_box(copy);
    });
    println!("{rows} rows, best of three, one core");
    println!(
        "{:<12} {:>10.1?}  (baseline: {rows} u64s sorted)",
        "baseline", baseline
    );
    let mut total = Duration::ZERO;
    for &name in PRODUCT_FIELDS {
        let Some((field, _)) = ProductSchema::resolve(name) else {
            continue;
        };
        let values: Vec<Value<'_>> = facts
            .iter()
            .map(|p| ProductSchema::value(p, field, &codes[0]))
            .collect();
        let mut distinct = 0;
        let took = best(|| {
            let column = Column::build(black_box(&values), &by_id);
            distinct = column.distinct.len();
            drop(black_box(column));
        });
        total += took;
        println!(
            "{name:<12} {took:>10.1?}  {:>6.2}x  ({distinct} distinct)",
            took.as_secs_f64() / baseline.as_secs_f64()
        );
    }
    println!(
        "{:<12} {total:>10.1?}  {:>6.2}x  (one currency's price column)",
        "all",
        total.as_secs_f64() / baseline.as_secs_f64()
    );
}
