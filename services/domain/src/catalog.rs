//! The product fields every service that lists products sorts and filters
//! by (catalog, search), and the per-currency view of a product.

use prost::Message;
use storefront_proto::catalog::v1::{Product, Variant};
use storefront_proto::common::v1::{
    Filter, FilterOperator, FilterValue, ListQuery, LocalizedString, Money, ResourceMeta,
    filter_value,
};

use std::sync::Arc;

use crate::interned::{Interned, Set};
use crate::listing::Listing;

use crate::query::{FieldType, Schema, Value};

use crate::currencies::{Code, fraction_digits};
/// The locale whose text `name` sorts and filters by.
pub const SORT_LOCALE: &str = storefront_proto::names::DEFAULT_LOCALE;

pub fn meta_id(meta: Option<&ResourceMeta>) -> &str {
    meta.map_or("", |m| m.id.as_str())
}

pub fn text(ls: Option<&LocalizedString>) -> Value<'_> {
    ls.and_then(|l| l.values.get(SORT_LOCALE))
        .map_or(Value::Missing, |s| Value::Text(s))
}

pub fn created(meta: Option<&ResourceMeta>) -> Value<'_> {
    meta.and_then(|m| m.created_at)
        .map_or(Value::Missing, |t| Value::Timestamp(t.seconds, t.nanos))
}

pub use storefront_proto::names::product_status as status_name;

mod order;
pub use order::{ids_in_order, tie_rows};

/// The fields a listing of products filters and sorts by (all of them),
/// costliest to build first: a listing's columns are built on every core,
/// each core taking the next, and the key column (every value distinct)
/// costs as much as five others (`--example listing_build`); last, it was
/// built alone while the other cores waited.
pub const PRODUCT_FIELDS: &[&str] = &[
    "key",
    "createdAt",
    "category",
    "attributes",
    "name",
    "featured",
    "inStock",
    "price",
    "popularity",
    "status",
    "brand",
];

/// Between an attribute's name and value in the `attributes` column's
/// members: a control character, which the gateway refuses in filters,
/// so no name or value ends early.
pub const ATTRIBUTE_SEPARATOR: char = '\u{1f}';

/// The `attributes` member of a variant's attribute `name` = `value`.
pub fn attribute(name: &str, value: &str) -> String {
    let mut member = String::with_capacity(name.len() + value.len() + 1);
    push_attribute(&mut member, name, value);
    member
}

/// `attribute`, written at the end of `member`.
fn push_attribute(member: &mut String, name: &str, value: &str) {
    member.push_str(name);
    member.push(ATTRIBUTE_SEPARATOR);
    member.push_str(value);
}

/// The name and value of an `attributes` member.
pub fn split_attribute(member: &str) -> Option<(&str, &str)> {
    member.split_once(ATTRIBUTE_SEPARATOR)
}

/// Where a product's attributes come from: its variants (the master
/// alone without others), or, for a listing summary without variants, the
/// list it carries (its variants, when it has them, may have changed since).
enum AttributesOf<'a> {
    Variants(&'a [Variant]),
    Listed(&'a [String]),
}

fn attributes_of(p: &Product) -> AttributesOf<'_> {
    match (&p.variants[..], &p.master_variant) {
        ([], _) if !p.variant_attributes.is_empty() => AttributesOf::Listed(&p.variant_attributes),
        ([], Some(master)) => AttributesOf::Variants(std::slice::from_ref(master)),
        (all, _) => AttributesOf::Variants(all),
    }
}

/// Every attribute (`attribute`) of a product's variants, once each, in
/// order: a product has `colour=Navy` when any of its variants does. What
/// a product's listing summary carries as `variant_attributes`.
pub fn variant_attributes(p: &Product) -> Vec<String> {
    let variants = match attributes_of(p) {
        AttributesOf::Listed(listed) => return listed.to_vec(),
        AttributesOf::Variants(variants) => variants,
    };
    let mut out: Vec<String> = variants
        .iter()
        .flat_map(|v| v.attributes.iter().map(|(k, v)| attribute(k, v)))
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// `variant_attributes`, held in `strings`.
fn interned_attributes(p: &Product, strings: &mut Interned) -> Set {
    let mut out: Vec<Arc<str>> = match attributes_of(p) {
        AttributesOf::Listed(listed) => listed.iter().map(|m| strings.get(m)).collect(),
        AttributesOf::Variants(variants) => {
            let mut member = String::new();
            let mut out = Vec::new();
            for (name, value) in variants.iter().flat_map(|v| &v.attributes) {
                member.clear();
                push_attribute(&mut member, name, value);
                out.push(strings.get(&member));
            }
            out
        }
    };
    out.sort_unstable();
    out.dedup();
    strings.set(&out)
}

/// What filtering and sorting need of a product, without its text,
/// variants and media: what indexes are built from.
#[derive(Debug, Clone, PartialEq)]
pub struct ProductFacts {
    // Boxed strings and slices, not `String` and `Vec`: a build holds
    // every product's facts at once, and their capacities were 32 bytes a
    // product of about 390 (1,000,000 products: the start's peak). Sets
    // are shared (`Interned::set`): products repeat category paths and
    // attribute sets.
    pub id: Box<str>,
    pub key: Box<str>,
    /// The `SORT_LOCALE` name.
    pub name: Option<Box<str>>,
    pub brand: Arc<str>,
    pub category_ids: Set,
    pub status: i32,
    pub featured: bool,
    pub popularity: u32,
    pub in_stock: bool,
    pub created_at: Option<(i64, i32)>,
    /// The master variant's prices, by currency.
    pub prices: Box<[(Code, i64)]>,
    /// Every variant's attributes (`attribute`), sorted, once each.
    pub attributes: Set,
}

impl ProductFacts {
    pub fn of(p: &Product) -> Self {
        Self::interned(p, &mut Interned::alone())
    }

    /// `of`, its repeated strings (brand, category ids, attributes) held
    /// in `strings`: what a build of many products makes them with.
    pub fn interned(p: &Product, strings: &mut Interned) -> Self {
        // The master, or the first variant a product to store holds in its
        // place (`encode_stored`).
        let master = p.master_variant.as_ref().or(p.variants.first());
        let prices = master.map(|v| v.prices.as_slice());
        Self {
            id: meta_id(p.meta.as_ref()).into(),
            key: p.key.as_str().into(),
            name: p
                .name
                .as_ref()
                .and_then(|l| l.values.get(SORT_LOCALE))
                .map(|n| n.as_str().into()),
            brand: strings.get(&p.brand),
            category_ids: {
                let path: Vec<Arc<str>> = p.category_ids.iter().map(|c| strings.get(c)).collect();
                strings.set(&path)
            },
            status: p.status,
            featured: p.featured,
            popularity: p.popularity,
            in_stock: p.in_stock,
            created_at: p
                .meta
                .as_ref()
                .and_then(|m| m.created_at)
                .map(|t| (t.seconds, t.nanos)),
            prices: prices
                .unwrap_or_default()
                .iter()
                .filter_map(|m| Some((Code::parse(&m.currency_code)?, m.cent_amount)))
                .collect(),
            attributes: interned_attributes(p, strings),
        }
    }
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
    Attributes,
}

pub struct ProductSchema;

impl Schema for ProductSchema {
    type Record = ProductFacts;
    type Field = ProductField;
    /// The currency prices are compared in.
    type Context = Code;

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
            "attributes" => (F::Attributes, FieldType::TextSet),
            _ => return None,
        })
    }

    fn id(p: &ProductFacts) -> &str {
        &p.id
    }

    fn value<'a>(p: &'a ProductFacts, field: ProductField, currency: &Code) -> Value<'a> {
        match field {
            ProductField::Name => p.name.as_deref().map_or(Value::Missing, Value::Text),
            ProductField::Price => p
                .prices
                .iter()
                .find(|(c, _)| c == currency)
                .map_or(Value::Missing, |&(_, cents)| Value::Integer(cents)),
            ProductField::CreatedAt => p
                .created_at
                .map_or(Value::Missing, |(s, n)| Value::Timestamp(s, n)),
            ProductField::Popularity => Value::Integer(i64::from(p.popularity)),
            ProductField::Featured => Value::Boolean(p.featured),
            ProductField::Status => Value::Text(status_name(p.status)),
            ProductField::InStock => Value::Boolean(p.in_stock),
            ProductField::Category => Value::TextSet(&p.category_ids),
            ProductField::Brand => Value::Text(&p.brand),
            ProductField::Key => Value::Text(&p.key),
            ProductField::Attributes => Value::TextSet(&p.attributes),
        }
    }

    fn varies(field: ProductField) -> bool {
        matches!(field, ProductField::Price)
    }
}

/// `query`, listing only the products priced in the currency at
/// `currency` when some are not (a currency the markets added while the
/// shop runs, before the shop priced everything in it): a product is never
/// listed without a price in the currency asked. Unchanged when every
/// product has one (the usual case), or when the query already has all the
/// filters it may.
pub fn priced_only(
    mut query: ListQuery,
    listing: &Listing<ProductSchema>,
    currency: usize,
) -> ListQuery {
    let unpriced = listing
        .column("price", currency)
        .is_ok_and(|c| c.missing() > 0);
    if unpriced && query.filters.len() < crate::query::MAX_FILTERS {
        query.filters.push(Filter {
            field: "price".into(),
            operator: FilterOperator::Gte as i32,
            value: Some(FilterValue {
                kind: Some(filter_value::Kind::Integer(0)),
            }),
        });
    }
    query
}

pub fn money(currency: &str, cents: i64) -> Money {
    Money {
        currency_code: currency.to_string(),
        cent_amount: cents,
        fraction_digits: fraction_digits(currency),
    }
}

/// A product as listings show it: no variant list, no price picked yet.
pub fn summary(p: &Product) -> Product {
    let mut master = p.master_variant.clone();
    if let Some(v) = master.as_mut() {
        v.price = None;
    }
    Product {
        price: None,
        master_variant: master,
        variants: Vec::new(),
        variant_attributes: variant_attributes(p),
        ..p.clone()
    }
}

/// The fields that, appended to an encoded summary, give it `price` (and
/// its master variant's) in one currency: protobuf merges a repeated
/// singular message field into the first.
pub fn price_tail(currency: &str, cents: Option<i64>) -> Vec<u8> {
    let Some(cents) = cents else {
        return Vec::new();
    };
    let price = money(currency, cents);
    Product {
        master_variant: Some(Variant {
            price: Some(price.clone()),
            ..Default::default()
        }),
        price: Some(price),
        ..Default::default()
    }
    .encode_to_vec()
}

/// Sets `price` of the product and of each variant to the currency's.
pub fn price_in(p: &mut Product, currency: &str) {
    let pick = |v: &mut Variant| {
        v.price = v
            .prices
            .iter()
            .find(|m| m.currency_code == currency)
            .cloned();
    };
    if let Some(v) = p.master_variant.as_mut() {
        pick(v);
    }
    p.variants.iter_mut().for_each(pick);
    p.price = p.master_variant.as_ref().and_then(|v| v.price.clone());
}

pub fn default_money(currency: &str) -> Money {
    money(currency, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn variant(colour: &str) -> Variant {
        Variant {
            attributes: [("colour".to_string(), colour.to_string())].into(),
            ..Default::default()
        }
    }

    /// A product's attributes are its variants' (the master's alone
    /// without a list); a summary's are those it carries, and a product
    /// whose variants changed since its summary was made has its own.
    #[test]
    fn attributes_come_from_the_variants_when_there_are_any() {
        let product = Product {
            master_variant: Some(variant("Navy")),
            variants: vec![variant("Navy"), variant("Sand"), variant("Navy")],
            ..Default::default()
        };
        let both: Arc<[Arc<str>]> = [attribute("colour", "Navy"), attribute("colour", "Sand")]
            .map(Arc::from)
            .into();
        assert_eq!(ProductFacts::of(&product).attributes, both);
        let listed = summary(&product);
        assert!(listed.variants.is_empty());
        assert_eq!(ProductFacts::of(&listed).attributes, both);
        let mut changed = product.clone();
        changed.variant_attributes = listed.variant_attributes;
        changed.variants.push(variant("Rust"));
        let all = ProductFacts::of(&changed).attributes;
        assert_eq!(all.len(), 3, "{all:?}");
        let master_only = Product {
            master_variant: Some(variant("Olive")),
            ..Default::default()
        };
        assert_eq!(
            ProductFacts::of(&master_only).attributes,
            [attribute("colour", "Olive").into()].into()
        );
    }

    /// Products of one build with the same category path and attributes
    /// hold one of each set; another path or set is its own.
    #[test]
    fn facts_of_one_build_share_their_sets() {
        let product = |colour: &str, category: &str| Product {
            category_ids: vec!["root".into(), category.into()],
            master_variant: Some(variant(colour)),
            variants: vec![variant(colour), variant("Sand")],
            ..Default::default()
        };
        let mut strings = Interned::default();
        let a = ProductFacts::interned(&product("Navy", "shirts"), &mut strings);
        let b = ProductFacts::interned(&product("Navy", "shirts"), &mut strings);
        assert!(Arc::ptr_eq(&a.category_ids, &b.category_ids));
        assert!(Arc::ptr_eq(&a.attributes, &b.attributes));
        let c = ProductFacts::interned(&product("Rust", "shoes"), &mut strings);
        assert_eq!(&*c.category_ids, [Arc::from("root"), Arc::from("shoes")]);
        assert_eq!(c.attributes.len(), 2);
        assert!(!Arc::ptr_eq(&a.attributes, &c.attributes));
        // Shared or not, the facts equal those made alone.
        assert_eq!(a, ProductFacts::of(&product("Navy", "shirts")));
        assert_eq!(c, ProductFacts::of(&product("Rust", "shoes")));
    }

    #[test]
    fn ids_in_order_are_the_ids_sorted_with_their_rows() {
        let ids = [
            "5f0c2a9e-0001",
            "5f0c2a9e-0000",
            "",
            "a",
            "5f0c2a9e",
            "Z",
            "5f0c2a9e-00001",
        ];
        let facts: Vec<ProductFacts> = ids
            .iter()
            .map(|id| ProductFacts {
                id: (*id).into(),
                ..ProductFacts::of(&Product::default())
            })
            .collect();
        let mut want: Vec<(Arc<str>, u32)> = (ids.iter().enumerate())
            .map(|(row, id)| (Arc::from(*id), row as u32))
            .collect();
        want.sort();
        assert_eq!(ids_in_order(&facts), want);
    }
}
