//! The catalog held in memory, with lookups by id and the query fields of
//! products, categories and collections.

use std::collections::HashMap;

use storefront_common::query::{FieldType, Schema, Value};
use storefront_proto::catalog::v1::{
    Category, CategoryNode, CategoryTree, Collection, Product, ProductStatus,
};
use storefront_proto::common::v1::ResourceMeta;

use crate::generate::Generated;

/// Currencies every product is priced in; the first is the default.
pub const CURRENCIES: &[&str] = &["AUD", "NZD"];
/// The locale whose text `name` sorts and filters by.
pub const SORT_LOCALE: &str = "en-AU";

pub struct Catalog {
    pub products: Vec<Product>,
    pub categories: Vec<Category>,
    pub collections: Vec<Collection>,
    pub tree: CategoryTree,
    product_index: HashMap<String, usize>,
    category_index: HashMap<String, usize>,
    collection_index: HashMap<String, usize>,
}

fn meta_id(meta: Option<&ResourceMeta>) -> &str {
    meta.map_or("", |m| m.id.as_str())
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

/// The price of a product's master variant in the currency at `index`.
pub fn master_price(p: &Product, currency: &str) -> Option<i64> {
    let variant = p.master_variant.as_ref()?;
    variant
        .prices
        .iter()
        .find(|m| m.currency_code == currency)
        .map(|m| m.cent_amount)
}

pub fn status_name(status: i32) -> &'static str {
    match ProductStatus::try_from(status) {
        Ok(ProductStatus::Active) => "active",
        Ok(ProductStatus::Inactive) => "inactive",
        Ok(ProductStatus::Discontinued) => "discontinued",
        _ => "unknown",
    }
}

fn text<'a>(ls: Option<&'a storefront_proto::common::v1::LocalizedString>) -> Value<'a> {
    ls.and_then(|l| l.values.get(SORT_LOCALE))
        .map_or(Value::Missing, |s| Value::Text(s))
}

fn created(meta: Option<&ResourceMeta>) -> Value<'_> {
    meta.and_then(|m| m.created_at)
        .map_or(Value::Missing, |t| Value::Timestamp(t.seconds, t.nanos))
}

#[derive(Debug, Clone, Copy)]
pub enum ProductField {
    Name,
    Price,
    CreatedAt,
    Popularity,
    Featured,
    Status,
    InStock,
    Category,
    Brand,
    Key,
}

pub struct ProductSchema;

impl Schema for ProductSchema {
    type Record = Product;
    type Field = ProductField;
    /// The currency prices are compared in.
    type Context = &'static str;

    fn resolve(name: &str) -> Option<(ProductField, FieldType)> {
        use ProductField as F;
        Some(match name {
            "name" => (F::Name, FieldType::Text),
            "price" => (F::Price, FieldType::Integer),
            "createdAt" => (F::CreatedAt, FieldType::Timestamp),
            "popularity" => (F::Popularity, FieldType::Integer),
            "featured" => (F::Featured, FieldType::Boolean),
            "status" => (F::Status, FieldType::Text),
            "inStock" => (F::InStock, FieldType::Boolean),
            "category" => (F::Category, FieldType::TextSet),
            "brand" => (F::Brand, FieldType::Text),
            "key" => (F::Key, FieldType::Text),
            _ => return None,
        })
    }

    fn id(p: &Product) -> &str {
        meta_id(p.meta.as_ref())
    }

    fn value<'a>(p: &'a Product, field: ProductField, currency: &&'static str) -> Value<'a> {
        match field {
            ProductField::Name => text(p.name.as_ref()),
            ProductField::Price => master_price(p, currency).map_or(Value::Missing, Value::Integer),
            ProductField::CreatedAt => created(p.meta.as_ref()),
            ProductField::Popularity => Value::Integer(i64::from(p.popularity)),
            ProductField::Featured => Value::Boolean(p.featured),
            ProductField::Status => Value::Text(status_name(p.status)),
            ProductField::InStock => Value::Boolean(p.in_stock),
            ProductField::Category => Value::TextSet(&p.category_ids),
            ProductField::Brand => Value::Text(&p.brand),
            ProductField::Key => Value::Text(&p.key),
        }
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
