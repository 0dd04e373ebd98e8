//! Product lines are most of a feed: they are read in batches, each
//! parsed, checked, encoded and compressed on a core of its own, then
//! taken in line order (ids and SKUs checked unique across batches there).

use std::collections::HashMap;
use std::sync::Arc;

use storefront_domain::catalog::ProductFacts;
use storefront_domain::currencies::Currencies;
use storefront_domain::interned::Interned;
use storefront_proto::Timestamp;
use storefront_proto::catalog::v1::CategoryRef;

use super::convert::{self, Problems};
use super::parse::{FeedError, parse_record};
use super::record::ProductRecord;
use crate::store::{Scratch, StoredProducts, sku_key};

/// Product lines a batch holds at most.
pub const LINES: usize = 1_000;

/// The categories products may name: each id with the ancestors of its
/// children (its own ancestors and itself), root first.
pub type CategoryPaths = HashMap<String, Vec<CategoryRef>>;

/// Product lines waiting to be read: their bytes one after another.
#[derive(Default)]
pub struct Batch {
    bytes: Vec<u8>,
    /// Each line's number and where it ends in `bytes`.
    lines: Vec<(usize, usize)>,
}

impl Batch {
    pub fn push(&mut self, line: usize, bytes: &[u8]) {
        self.bytes.extend_from_slice(bytes);
        self.lines.push((line, self.bytes.len()));
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Empty, its buffers kept for the next batch: a fresh batch grew its
    /// bytes by doubling, and mimalloc gave the freed megabytes back at
    /// once, so every batch copied its lines twice and faulted its pages
    /// in anew.
    pub fn cleared(mut self) -> Self {
        self.bytes.clear();
        self.lines.clear();
        self
    }

    fn each(&self) -> impl Iterator<Item = (usize, &[u8])> {
        let mut start = 0;
        self.lines.iter().map(move |&(line, end)| {
            let bytes = &self.bytes[start..end];
            start = end;
            (line, bytes)
        })
    }
}

/// What every batch is read against.
pub struct Context {
    pub categories: Arc<CategoryPaths>,
    /// Empty, with the dictionary products are compressed against.
    pub empty: StoredProducts,
    pub now: Timestamp,
    /// What a price may be in.
    pub currencies: Arc<Currencies>,
}

/// A product's keys, to be checked unique in line order.
pub struct Keys {
    pub line: usize,
    pub id: u128,
    pub skus: Vec<(usize, u128)>,
    /// The SKUs' keys in the catalog's SKU index.
    pub sku_keys: Vec<u64>,
}

/// A batch read: its products (those without problems, in order), their
/// facts and keys, and its problems in line order.
pub struct Done {
    pub products: StoredProducts,
    pub facts: Vec<ProductFacts>,
    pub keys: Vec<Keys>,
    pub errors: Vec<FeedError>,
}

/// A 128-bit hash of an id, kept in place of the id: a million of them
/// are 16 MB, not a copy of every id.
pub fn hashed(kind: u8, id: &str) -> u128 {
    xxhash_rust::xxh3::xxh3_128_with_seed(id.as_bytes(), u64::from(kind))
}

pub const PRODUCT: u8 = 1;
pub const SKU: u8 = 2;
pub const COLLECTION: u8 = 3;

/// Reads one batch (on any thread).
pub fn read(batch: &Batch, cx: &Context) -> Done {
    let mut done = Done {
        products: cx.empty.clone(),
        facts: Vec::with_capacity(batch.len()),
        keys: Vec::with_capacity(batch.len()),
        errors: Vec::new(),
    };
    let mut scratch = Scratch::default();
    let mut strings = Interned::default();
    for (line, bytes) in batch.each() {
        let record = match parse_record::<ProductRecord>(bytes) {
            Ok(record) => record,
            Err((field, message)) => {
                done.errors.push(FeedError {
                    line,
                    field,
                    message,
                });
                continue;
            }
        };
        done.keys.push(Keys {
            line,
            id: hashed(PRODUCT, &record.id),
            skus: record
                .variants
                .iter()
                .enumerate()
                .filter(|(_, v)| !v.sku.is_empty())
                .map(|(i, v)| (i, hashed(SKU, &v.sku)))
                .collect(),
            sku_keys: record.variants.iter().map(|v| sku_key(&v.sku)).collect(),
        });
        let mut problems = Problems::default();
        let category_ids = ancestors(&cx.categories, &record.category_id, &mut problems);
        let product =
            convert::product_to_store(record, category_ids, &mut problems, cx.now, &cx.currencies);
        if !problems.0.is_empty() {
            done.errors
                .extend(problems.0.into_iter().map(|p| FeedError {
                    line,
                    field: p.field,
                    message: p.message,
                }));
            continue;
        }
        let facts = ProductFacts::interned(&product, &mut strings);
        // The summary names the attributes the facts hold.
        done.products
            .push_listed(product, &facts.attributes, &mut scratch);
        done.facts.push(facts);
    }
    done
}

/// The ids of a product's category and its ancestors, root first.
pub(crate) fn ancestors(
    categories: &CategoryPaths,
    id: &str,
    problems: &mut Problems,
) -> Vec<String> {
    if id.is_empty() {
        return Vec::new();
    }
    match categories.get(id) {
        Some(path) => path.iter().map(|c| c.id.clone()).collect(),
        None => {
            problems.add(
                "categoryId",
                "is not a category on an earlier line (categories come first, parents before children)",
            );
            Vec::new()
        }
    }
}
