//! The catalog held in memory: one immutable version, swapped whole when
//! it changes. Each product is held once, encoded (its listing summary
//! followed by its variants, compressed), with the indexes listings need.

use std::collections::HashMap;

use bytes::Bytes;
use prost::Message;
use storefront_common::catalog::{
    PRODUCT_FIELDS, ProductFacts, ProductSchema, meta_id, summary, text,
};
use storefront_common::error::ServiceError;
use storefront_common::listing::{Key, Listing};
use storefront_common::query::{FieldType, Schema, Value};
use storefront_proto::catalog::v1::{Category, CategoryNode, CategoryTree, Collection, Product};

use crate::generate::Generated;

/// A product as the catalog holds it: its listing summary (no variant
/// list, no price picked) and its variants (repeated field 14), encoded, so
/// the two concatenated are the product; each compressed with LZ4 against
/// the catalog's dictionary (`Dictionary`): most of a product's bytes are
/// field tags, locales, URLs and words that every product repeats.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredProduct {
    /// The summary then the variants, compressed as one block (one
    /// compression per product: its set-up, not its bytes, dominates).
    bytes: Bytes,
    summary_len: u32,
    len: u32,
}

/// What products are compressed against: one typical product, encoded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dictionary(Bytes);

impl Dictionary {
    pub fn of(p: &Product) -> Self {
        let mut bytes = summary(p).encode_to_vec();
        prost::encoding::message::encode_repeated(14, &p.variants, &mut bytes);
        Self(bytes.into())
    }
}

fn corrupt(e: impl std::fmt::Display) -> String {
    format!("stored product: {e}")
}

impl StoredProduct {
    pub fn encode(p: &Product, dict: &Dictionary) -> Self {
        let summary = summary(p);
        let summary_len = summary.encoded_len();
        let mut encoded = Vec::with_capacity(summary_len + 1024);
        summary.encode_raw(&mut encoded);
        prost::encoding::message::encode_repeated(14, &p.variants, &mut encoded);
        Self {
            bytes: lz4_flex::block::compress_with_dict(&encoded, &dict.0).into(),
            summary_len: summary_len as u32,
            len: encoded.len() as u32,
        }
    }

    fn decompress(&self, dict: &Dictionary) -> Result<Vec<u8>, String> {
        lz4_flex::block::decompress_with_dict(&self.bytes, self.len as usize, &dict.0)
            .map_err(corrupt)
    }

    /// The listing summary, encoded.
    pub fn summary(&self, dict: &Dictionary) -> Result<Vec<u8>, String> {
        let mut bytes = self.decompress(dict)?;
        bytes.truncate(self.summary_len as usize);
        Ok(bytes)
    }

    /// The whole product, variants included, prices not picked.
    pub fn decode(&self, dict: &Dictionary) -> Result<Product, String> {
        Product::decode(self.decompress(dict)?.as_slice()).map_err(corrupt)
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Bytes encoded, before compression.
    pub fn encoded_len(&self) -> usize {
        self.len as usize
    }
}

pub struct Catalog {
    /// Changes whenever the catalog does; indexers poll it.
    pub version: u64,
    pub products: Vec<StoredProduct>,
    pub dictionary: Dictionary,
    /// Filters, sorts and prices by row; built from the products' facts,
    /// which are not kept.
    pub listing: Listing<ProductSchema>,
    pub categories: Vec<Category>,
    pub collections: Vec<Collection>,
    pub tree: CategoryTree,
    product_index: HashMap<Box<str>, u32>,
    category_index: HashMap<String, usize>,
    collection_index: HashMap<String, usize>,
}

fn index<T>(items: &[T], id: impl Fn(&T) -> &str) -> HashMap<String, usize> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| (id(item).to_string(), i))
        .collect()
}

/// One index per currency of `CURRENCIES` for price; one for the rest.
pub fn listing(facts: &[ProductFacts]) -> Listing<ProductSchema> {
    let contexts: Vec<usize> = (0..storefront_common::catalog::CURRENCIES.len()).collect();
    Listing::build(facts, PRODUCT_FIELDS, &contexts)
}

impl Catalog {
    pub fn new(generated: Generated) -> Self {
        let Generated {
            products,
            dictionary,
            facts,
            categories,
            collections,
        } = generated;
        let tree = tree(&categories);
        Self {
            version: 1,
            product_index: facts
                .iter()
                .enumerate()
                .map(|(i, f)| (f.id.as_str().into(), i as u32))
                .collect(),
            listing: listing(&facts),
            category_index: index(&categories, |c| meta_id(c.meta.as_ref())),
            collection_index: index(&collections, |c| meta_id(c.meta.as_ref())),
            products,
            dictionary,
            categories,
            collections,
            tree,
        }
    }

    /// This catalog with product `row` replaced, as the next version. The
    /// facts of every product are read back from the stored products: a
    /// merchandising write is rare, memory for a second copy is not.
    pub fn with_product(&self, row: u32, product: &Product) -> Result<Self, ServiceError> {
        let mut products = self.products.clone();
        products[row as usize] = StoredProduct::encode(product, &self.dictionary);
        let facts = products
            .iter()
            .map(|p| p.decode(&self.dictionary).map(|p| ProductFacts::of(&p)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(ServiceError::internal)?;
        Ok(Self {
            version: self.version + 1,
            listing: listing(&facts),
            products,
            dictionary: self.dictionary.clone(),
            categories: self.categories.clone(),
            collections: self.collections.clone(),
            tree: self.tree.clone(),
            product_index: self.product_index.clone(),
            category_index: self.category_index.clone(),
            collection_index: self.collection_index.clone(),
        })
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
        self.products[row as usize]
            .summary(&self.dictionary)
            .map_err(ServiceError::internal)
    }

    /// Row `row`'s whole product, prices not picked.
    pub fn product(&self, row: u32) -> Result<Product, ServiceError> {
        self.products[row as usize]
            .decode(&self.dictionary)
            .map_err(ServiceError::internal)
    }

    pub fn product_row(&self, id: &str) -> Option<u32> {
        self.product_index.get(id).copied()
    }

    pub fn category(&self, id: &str) -> Option<&Category> {
        self.category_index.get(id).map(|&i| &self.categories[i])
    }

    pub fn collection(&self, id: &str) -> Option<&Collection> {
        self.collection_index.get(id).map(|&i| &self.collections[i])
    }
}

fn tree(categories: &[Category]) -> CategoryTree {
    fn children(parent: &str, categories: &[Category]) -> Vec<CategoryNode> {
        let mut nodes: Vec<CategoryNode> = categories
            .iter()
            .filter(|c| c.parent_id == parent)
            .map(|c| CategoryNode {
                children: children(meta_id(c.meta.as_ref()), categories),
                category: Some(c.clone()),
            })
            .collect();
        nodes.sort_by_key(|n| n.category.as_ref().map_or(0, |c| c.position));
        nodes
    }
    CategoryTree {
        roots: children("", categories),
    }
}

#[derive(Debug, Clone, Copy)]
pub enum NamedField {
    Name,
    Position,
    Key,
}

fn resolve_named(name: &str) -> Option<(NamedField, FieldType)> {
    Some(match name {
        "name" => (NamedField::Name, FieldType::Text),
        "position" => (NamedField::Position, FieldType::Integer),
        "key" => (NamedField::Key, FieldType::Text),
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
                    NamedField::Key => Value::Text(&r.key),
                }
            }
        }
    };
}

named_schema!(CategorySchema, Category);
named_schema!(CollectionSchema, Collection);
