//! The catalog held in memory: one immutable version, swapped whole when
//! it changes. Each product is held once, encoded (its listing summary
//! followed by its variants), with the facts and indexes listings need.

use std::collections::HashMap;

use bytes::Bytes;
use prost::Message;
use storefront_common::catalog::{
    PRODUCT_FIELDS, ProductFacts, ProductSchema, meta_id, summary, text,
};
use storefront_common::listing::Listing;
use storefront_common::query::{FieldType, Schema, Value};
use storefront_proto::catalog::v1::{Category, CategoryNode, CategoryTree, Collection, Product};

use crate::generate::Generated;

/// A product as the catalog holds it: `bytes[..summary_len]` is the
/// listing summary (no variant list, no price picked), and the rest its
/// variants (repeated field 14), so the two concatenated are the product.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredProduct {
    bytes: Bytes,
    summary_len: u32,
}

impl StoredProduct {
    pub fn encode(p: &Product) -> Self {
        let summary = summary(p);
        let summary_len = summary.encoded_len();
        let variants = prost::encoding::message::encoded_len_repeated(14, &p.variants);
        let mut bytes = Vec::with_capacity(summary_len + variants);
        summary.encode_raw(&mut bytes);
        prost::encoding::message::encode_repeated(14, &p.variants, &mut bytes);
        Self {
            bytes: bytes.into(),
            summary_len: summary_len as u32,
        }
    }

    /// The listing summary, encoded.
    pub fn summary(&self) -> Bytes {
        self.bytes.slice(..self.summary_len as usize)
    }

    /// The whole product, variants included, prices not picked.
    pub fn decode(&self) -> Result<Product, prost::DecodeError> {
        Product::decode(self.bytes.as_ref())
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }
}

pub struct Catalog {
    /// Changes whenever the catalog does; indexers poll it.
    pub version: u64,
    pub products: Vec<StoredProduct>,
    pub facts: Vec<ProductFacts>,
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
            facts,
            categories,
            collections,
            tree,
        }
    }

    /// This catalog with product `row` replaced, as the next version.
    pub fn with_product(&self, row: u32, product: &Product) -> Self {
        let mut products = self.products.clone();
        let mut facts = self.facts.clone();
        products[row as usize] = StoredProduct::encode(product);
        facts[row as usize] = ProductFacts::of(product);
        Self {
            version: self.version + 1,
            listing: listing(&facts),
            products,
            facts,
            categories: self.categories.clone(),
            collections: self.collections.clone(),
            tree: self.tree.clone(),
            product_index: self.product_index.clone(),
            category_index: self.category_index.clone(),
            collection_index: self.collection_index.clone(),
        }
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
