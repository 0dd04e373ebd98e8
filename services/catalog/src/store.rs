//! The catalog held in memory: one immutable version, swapped whole when
//! it changes. Each product is held once, encoded and compressed (its
//! listing summary and its variants apart), with the indexes listings need.

use std::collections::HashMap;
use std::sync::Arc;

use prost::Message;
use storefront_domain::catalog::{
    PRODUCT_FIELDS, ProductFacts, ProductSchema, ids_in_order, meta_id, text,
};
use storefront_domain::compact::{Dictionary, Records};
use storefront_domain::currencies::Currencies;
use storefront_domain::listing::{Key, Listing};
use storefront_domain::query::{FieldType, Schema, Value};
use storefront_platform::error::ServiceError;

use crate::changes::ChangeLog;
use storefront_proto::catalog::v1::{Category, CategoryNode, CategoryTree, Collection, Product};

/// Encodes `p` as the catalog holds it: its listing summary (no variant
/// list, no price picked) into `summary`, its variants (repeated field 14)
/// into `variants`, so that the two concatenated are the product. Takes
/// the product so that nothing is cloned: a product without a master
/// variant (`convert::product_to_store`) is given its first variant as
/// the master, moved into place for the summary and back.
pub fn encode_stored(p: Product, summary: &mut Vec<u8>, variants: &mut Vec<u8>) {
    // The summary names its variants' attributes: search filters by them
    // and reads summaries alone.
    let attributes = storefront_domain::catalog::variant_attributes(&p);
    encode_listed(p, &attributes, summary, variants);
}

/// The summary's field of its variants' attributes: the last of a
/// product's, so written after the rest as prost would write it.
const VARIANT_ATTRIBUTES: u32 = 16;

/// `encode_stored` with the product's variant attributes given (as its
/// facts hold them: a build has them already).
fn encode_listed(
    mut p: Product,
    attributes: &[impl AsRef<str>],
    summary: &mut Vec<u8>,
    variants: &mut Vec<u8>,
) {
    use prost::encoding::{WireType, encode_key, encode_varint};
    p.variant_attributes.clear();
    let mut list = std::mem::take(&mut p.variants);
    let lent = p.master_variant.is_none() && !list.is_empty();
    if lent {
        p.master_variant = Some(std::mem::take(&mut list[0]));
    }
    p.price = None;
    let price = p.master_variant.as_mut().and_then(|v| v.price.take());
    summary.clear();
    p.encode_raw(summary);
    for member in attributes.iter().map(AsRef::as_ref) {
        encode_key(VARIANT_ATTRIBUTES, WireType::LengthDelimited, summary);
        encode_varint(member.len() as u64, summary);
        summary.extend_from_slice(member.as_bytes());
    }
    if lent && let Some(mut first) = p.master_variant.take() {
        first.price = price;
        list[0] = first;
    }
    variants.clear();
    prost::encoding::message::encode_repeated(14, &list, variants);
}

/// Products as the catalog holds them, in row order: each one's summary
/// and its variants compressed on their own against one typical product,
/// so a listing decompresses summaries only, and an export sends them as
/// they are held.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StoredProducts {
    summaries: Records,
    variants: Records,
}

fn corrupt(e: impl std::fmt::Display) -> String {
    format!("stored product: {e}")
}

/// Buffers `StoredProducts::push` reuses.
#[derive(Default)]
pub struct Scratch([Vec<u8>; 4]);

impl StoredProducts {
    /// Empty, compressing against `typical`: summaries against the whole
    /// typical product, variants against its variants.
    pub fn new(typical: &Product) -> Self {
        let (mut summary, mut variants) = (Vec::new(), Vec::new());
        encode_stored(typical.clone(), &mut summary, &mut variants);
        let typical_variants = Dictionary::new(variants.clone());
        summary.extend_from_slice(&variants);
        Self {
            summaries: Records::new(Dictionary::new(summary)),
            variants: Records::new(typical_variants),
        }
    }

    /// Appends `p`.
    pub fn push(&mut self, p: Product, scratch: &mut Scratch) {
        let attributes = storefront_domain::catalog::variant_attributes(&p);
        self.push_listed(p, &attributes, scratch);
    }

    /// Appends `p`, whose variant attributes (`variant_attributes`) are
    /// `attributes`: its facts hold them.
    pub fn push_listed(
        &mut self,
        p: Product,
        attributes: &[impl AsRef<str>],
        scratch: &mut Scratch,
    ) {
        let [summary, variants, out, against] = &mut scratch.0;
        encode_listed(p, attributes, summary, variants);
        self.summaries.push(summary, out);
        self.against(summary, against);
        self.variants.push_against(variants, against, out);
    }

    /// What a product's variants are compressed against, into `out`: the
    /// typical product's variants, then the product's own summary (its
    /// key, name and media recur in its variants' SKUs, media and alt
    /// texts). Not the whole typical product: a dictionary is hashed anew
    /// for every record, and its summary half bought nothing here (at
    /// 20,000 products: 0.2% fewer bytes, a fifth less compression time).
    fn against(&self, summary: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(self.variants.dictionary().bytes());
        out.extend_from_slice(summary);
    }

    /// `parts` (each a clone of `self`, empty, filled) one after another.
    pub fn concat(self, parts: Vec<StoredProducts>) -> Self {
        let (summaries, variants): (Vec<Records>, Vec<Records>) =
            parts.into_iter().map(|p| (p.summaries, p.variants)).unzip();
        Self {
            summaries: Records::concat(self.summaries.dictionary().clone(), summaries),
            variants: Records::concat(self.variants.dictionary().clone(), variants),
        }
    }

    /// Row `row` replaced by `p`, in place (copying only the arenas it
    /// shares with another version), stored as `push` would store it.
    /// Compressed straight into the arenas: no records of its own first
    /// (two arenas of 32 KiB allocated and dropped a hold or a sale).
    pub fn replace(&mut self, row: u32, p: Product, scratch: &mut Scratch) {
        let attributes = storefront_domain::catalog::variant_attributes(&p);
        let [summary, variants, out, against] = &mut scratch.0;
        encode_listed(p, &attributes, summary, variants);
        self.summaries.replace_raw(row as usize, summary, out);
        self.against(summary, against);
        self.variants
            .replace_against(row as usize, variants, against, out);
    }

    /// Removes row `row`; the last row takes its number.
    pub fn swap_remove(&mut self, row: u32) {
        self.summaries.swap_remove(row as usize);
        self.variants.swap_remove(row as usize);
    }

    /// Row `row`'s listing summary, encoded.
    pub fn summary(&self, row: u32) -> Result<Vec<u8>, String> {
        self.summaries.get(row as usize)
    }

    /// What summaries are compressed against.
    pub fn dictionary(&self) -> &Dictionary {
        self.summaries.dictionary()
    }

    /// Row `row`'s whole product, variants included, prices not picked.
    pub fn decode(&self, row: u32) -> Result<Product, String> {
        let bytes = self.encoded(row)?;
        Product::decode(bytes.as_slice()).map_err(corrupt)
    }

    /// Row `row`'s whole product as encoded: equal bytes, equal products
    /// (maps are ordered, so an encoding is unique).
    pub fn encoded(&self, row: u32) -> Result<Vec<u8>, String> {
        let mut bytes = self.summaries.get(row as usize)?;
        let mut against = Vec::new();
        self.against(&bytes, &mut against);
        let variants = self.variants.get_against(row as usize, &against)?;
        bytes.extend_from_slice(&variants);
        Ok(bytes)
    }

    pub fn len(&self) -> usize {
        self.summaries.len()
    }

    /// Bytes held.
    pub fn held_bytes(&self) -> usize {
        self.summaries.held_bytes() + self.variants.held_bytes()
    }

    /// Bytes encoded, before compression.
    pub fn encoded_bytes(&self) -> u64 {
        self.summaries.raw_bytes() + self.variants.raw_bytes()
    }
}

/// What a catalog is built from (by the generator or a feed): products
/// encoded in row order with their facts and SKUs, categories (parents
/// first) and collections.
pub struct Parts {
    pub categories: Vec<Category>,
    pub products: StoredProducts,
    pub facts: Vec<ProductFacts>,
    /// Each variant's SKU (hashed, see [`sku_key`]) and its product's row.
    pub skus: Vec<(u64, u32)>,
    pub collections: Vec<Collection>,
    /// What products are priced, listed and sorted by price in.
    pub currencies: Arc<Currencies>,
}

impl Parts {
    /// No products, categories or collections.
    pub fn empty(currencies: Arc<Currencies>) -> Self {
        Self {
            categories: Vec::new(),
            products: StoredProducts::new(&Product::default()),
            facts: Vec::new(),
            skus: Vec::new(),
            collections: Vec::new(),
            currencies,
        }
    }
}

/// What the SKU index holds of a SKU: a 64-bit hash (a hit is checked
/// against the product's variants).
pub fn sku_key(sku: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(sku.as_bytes())
}

/// One version of the catalog. Versions share everything they did not
/// change (`Arc`s all the way down), so a new version costs what its
/// change touches.
#[derive(Clone)]
pub struct Catalog {
    /// Changes whenever the catalog does; indexers poll it.
    pub version: u64,
    pub products: StoredProducts,
    /// Filters, sorts and prices by row; built from the products' facts,
    /// which are not kept, and edited product by product.
    pub listing: Listing<ProductSchema>,
    /// The listing's currencies: price column `i` is `currencies.code(i)`.
    pub currencies: Arc<Currencies>,
    pub categories: Arc<Vec<Category>>,
    pub collections: Arc<Vec<Collection>>,
    pub tree: Arc<CategoryTree>,
    /// Product ids in id order with their rows: the product index, and
    /// where a new id falls among the others.
    pub(crate) ids: Arc<Vec<(Arc<str>, u32)>>,
    /// SKU key -> the row of the product with that variant.
    pub(crate) skus: Arc<HashMap<u64, u32, foldhash::fast::RandomState>>,
    category_index: Arc<HashMap<String, usize>>,
    collection_index: Arc<HashMap<String, usize>>,
    /// Which products the recent versions changed, for indexers.
    pub changes: Arc<ChangeLog>,
    /// The stock operations applied lately, and those this version did.
    pub ops: Arc<crate::oplog::OpLog>,
    pub applied_ops: Arc<[String]>,
}

fn index<T>(items: &[T], id: impl Fn(&T) -> &str) -> HashMap<String, usize> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| (id(item).to_string(), i))
        .collect()
}

/// One index per currency for price; one for the rest.
pub fn listing(facts: &[ProductFacts], currencies: &Currencies) -> Listing<ProductSchema> {
    Listing::build(facts, PRODUCT_FIELDS, currencies.codes())
}

impl Catalog {
    pub fn new(parts: Parts) -> Self {
        let Parts {
            products,
            facts,
            skus,
            categories,
            collections,
            currencies,
        } = parts;
        // The id index and the tree beside the listing's columns: the
        // start-up's serial stretch.
        let (listing, (ids, tree)) = std::thread::scope(|s| {
            let index = s.spawn(|| (ids_in_order(&facts), tree(&categories)));
            let listing = listing(&facts, &currencies);
            (
                listing,
                index
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e)),
            )
        });
        // A hundred thousand small frees: not on the way to ready.
        std::thread::spawn(move || drop(facts));
        Self {
            version: 1,
            ids: Arc::new(ids),
            skus: Arc::new(skus.into_iter().collect()),
            listing,
            currencies,
            category_index: Arc::new(index(&categories, |c| meta_id(c.meta.as_ref()))),
            collection_index: Arc::new(index(&collections, |c| meta_id(c.meta.as_ref()))),
            products,
            categories: Arc::new(categories),
            collections: Arc::new(collections),
            tree: Arc::new(tree),
            changes: Arc::new(ChangeLog::starting_at(1)),
            ops: Arc::default(),
            applied_ops: Arc::from(Vec::new()),
        }
    }

    /// The price of row `row` in the currency at `currency`.
    pub fn price(&self, row: u32, currency: usize) -> Option<i64> {
        match self.listing.column("price", currency).ok()?.value(row) {
            Some(Key::Integer(cents)) => Some(*cents),
            _ => None,
        }
    }

    /// Row `row`'s listing summary, encoded.
    pub fn summary(&self, row: u32) -> Result<Vec<u8>, ServiceError> {
        self.products.summary(row).map_err(ServiceError::internal)
    }

    /// Row `row`'s listing summary as held: its LZ4 block (against
    /// `products.dictionary()`, shared with the arena holding it, so a
    /// reply or an export sends it without a copy) and its length
    /// decompressed.
    pub fn shared_summary(&self, row: u32) -> Result<(bytes::Bytes, u32), ServiceError> {
        self.products
            .summaries
            .compressed_shared(row as usize)
            .ok_or_else(|| ServiceError::internal(format!("no product at row {row}")))
    }

    /// Row `row`'s whole product, prices not picked.
    pub fn product(&self, row: u32) -> Result<Product, ServiceError> {
        self.products.decode(row).map_err(ServiceError::internal)
    }

    pub fn product_row(&self, id: &str) -> Option<u32> {
        self.ids
            .binary_search_by(|(held, _)| (**held).cmp(id))
            .ok()
            .map(|at| self.ids[at].1)
    }

    pub fn category(&self, id: &str) -> Option<&Category> {
        self.category_index.get(id).map(|&i| &self.categories[i])
    }

    pub fn collection(&self, id: &str) -> Option<&Collection> {
        self.collection_index.get(id).map(|&i| &self.collections[i])
    }
}

/// The navigation tree, built in one pass over the categories: each
/// node's children found through an index, not a scan, and no node
/// carrying its ancestors (the tree says them).
fn tree(categories: &[Category]) -> CategoryTree {
    let mut children_of: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, c) in categories.iter().enumerate() {
        children_of.entry(c.parent_id.as_str()).or_default().push(i);
    }
    // The feed bounds the depth (`CATALOG_MAX_CATEGORY_DEPTH`), and so
    // this recursion; a category can only name a parent before it, so
    // there is no cycle to follow.
    fn nodes(
        parent: &str,
        categories: &[Category],
        children_of: &HashMap<&str, Vec<usize>>,
    ) -> Vec<CategoryNode> {
        let Some(children) = children_of.get(parent) else {
            return Vec::new();
        };
        let mut nodes: Vec<CategoryNode> = children
            .iter()
            .map(|&i| {
                let c = &categories[i];
                CategoryNode {
                    children: nodes(meta_id(c.meta.as_ref()), categories, children_of),
                    category: Some(Category {
                        ancestors: Vec::new(),
                        ..c.clone()
                    }),
                }
            })
            .collect();
        nodes.sort_by_key(|n| n.category.as_ref().map_or(0, |c| c.position));
        nodes
    }
    CategoryTree::encoded(&nodes("", categories, &children_of))
}

#[derive(Debug, Clone, Copy)]
pub enum NamedField {
    Name,
    Position,
}

fn resolve_named(name: &str) -> Option<(NamedField, FieldType)> {
    Some(match name {
        "name" => (NamedField::Name, FieldType::Text),
        "position" => (NamedField::Position, FieldType::Integer),
        _ => return None,
    })
}

/// Categories and collections sort by name or position.
pub struct CategorySchema;
pub struct CollectionSchema;

macro_rules! named_schema {
    ($schema:ty, $record:ty) => {
        impl Schema for $schema {
            type Record = $record;
            type Field = NamedField;
            type Context = ();
            fn resolve(name: &str) -> Option<(NamedField, FieldType)> {
                resolve_named(name)
            }
            fn id(r: &$record) -> &str {
                meta_id(r.meta.as_ref())
            }
            fn value<'a>(r: &'a $record, field: NamedField, _: &()) -> Value<'a> {
                match field {
                    NamedField::Name => text(r.name.as_ref()),
                    NamedField::Position => Value::Integer(i64::from(r.position)),
                }
            }
        }
    };
}

named_schema!(CategorySchema, Category);
named_schema!(CollectionSchema, Collection);

#[cfg(test)]
mod tests {
    use storefront_domain::query::vocabulary::{CATEGORIES, COLLECTIONS, assert_schema_follows};

    use super::{CategorySchema, CollectionSchema};

    #[test]
    fn an_empty_catalog_lists_nothing() {
        let catalog = super::Catalog::new(super::Parts::empty(std::sync::Arc::new(
            super::Currencies::demo(),
        )));
        let query = storefront_proto::common::v1::ListQuery::default();
        let (info, rows) = catalog.listing.page(&query, 0, &[("key", false)]).unwrap();
        assert_eq!((info.total, rows.len()), (0, 0));
        assert!(catalog.product_row("p-1").is_none());
    }

    #[test]
    fn category_and_collection_schemas_follow_the_vocabulary() {
        assert_schema_follows::<CategorySchema>(&CATEGORIES);
        assert_schema_follows::<CollectionSchema>(&COLLECTIONS);
    }
}
