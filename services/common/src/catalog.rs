//! The product fields every service that lists products sorts and filters
//! by (catalog, search), and the per-currency view of a product.

use storefront_proto::catalog::v1::{Product, ProductStatus, Variant};
use storefront_proto::common::v1::{LocalizedString, Money, ResourceMeta};

use crate::error::{ErrorKind, FieldViolation, ServiceError};
use crate::query::{FieldType, Schema, Value};

/// Currencies every product is priced in; the first is the default.
pub const CURRENCIES: &[&str] = &["AUD", "NZD"];
/// The locale whose text `name` sorts and filters by.
pub const SORT_LOCALE: &str = "en-AU";

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

pub fn currency(code: &str) -> Result<&'static str, ServiceError> {
    if code.is_empty() {
        return Ok(CURRENCIES[0]);
    }
    CURRENCIES
        .iter()
        .copied()
        .find(|c| *c == code)
        .ok_or_else(|| {
            let message = format!("currency must be one of {}", CURRENCIES.join(", "));
            ServiceError::new(
                ErrorKind::BadRequest,
                "INVALID_QUERY_PARAMETER",
                message.clone(),
            )
            .with_violation(FieldViolation::new("currency", "INVALID_VALUE", message))
        })
}

pub fn priced(variant: &Variant, currency: &str) -> Variant {
    let mut v = variant.clone();
    v.price = v
        .prices
        .iter()
        .find(|m| m.currency_code == currency)
        .cloned();
    v
}

/// A product in the requested currency; `detail` keeps all variants, the
/// list view carries the master variant only.
pub fn view(p: &Product, currency: &str, detail: bool) -> Product {
    let master_variant = p.master_variant.as_ref().map(|v| priced(v, currency));
    Product {
        meta: p.meta.clone(),
        key: p.key.clone(),
        name: p.name.clone(),
        description: p.description.clone(),
        slug: p.slug.clone(),
        brand: p.brand.clone(),
        category_ids: p.category_ids.clone(),
        status: p.status,
        featured: p.featured,
        popularity: p.popularity,
        in_stock: p.in_stock,
        price: master_variant.as_ref().and_then(|v| v.price.clone()),
        variants: if detail {
            p.variants.iter().map(|v| priced(v, currency)).collect()
        } else {
            Vec::new()
        },
        master_variant,
        media: p.media.clone(),
    }
}

pub fn default_money(currency: &str) -> Money {
    Money {
        currency_code: currency.to_string(),
        cent_amount: 0,
        fraction_digits: 2,
    }
}
