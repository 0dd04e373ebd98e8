//! The catalog held in memory, with lookups by id and the query fields of
//! products, categories and collections.

use std::collections::HashMap;

use storefront_common::catalog::{meta_id, text};
use storefront_common::query::{FieldType, Schema, Value};
use storefront_proto::catalog::v1::{Category, CategoryNode, CategoryTree, Collection, Product};

use crate::generate::Generated;

pub struct Catalog {
    /// Changes whenever the catalog does; indexers poll it.
    pub version: u64,
    pub products: Vec<Product>,
    pub categories: Vec<Category>,
    pub collections: Vec<Collection>,
    pub tree: CategoryTree,
    product_index: HashMap<String, usize>,
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

impl Catalog {
    pub fn new(generated: Generated) -> Self {
        let Generated {
            products,
            categories,
            collections,
        } = generated;
        let tree = tree(&categories);
        Self {
            version: 1,
            product_index: index(&products, |p| meta_id(p.meta.as_ref())),
            category_index: index(&categories, |c| meta_id(c.meta.as_ref())),
            collection_index: index(&collections, |c| meta_id(c.meta.as_ref())),
            products,
            categories,
            collections,
            tree,
        }
    }

    pub fn product(&self, id: &str) -> Option<&Product> {
        self.product_index.get(id).map(|&i| &self.products[i])
    }

    pub fn product_mut(&mut self, id: &str) -> Option<&mut Product> {
        self.product_index.get(id).map(|&i| &mut self.products[i])
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
