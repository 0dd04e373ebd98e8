//! The catalog as the Agentic Commerce Protocol's product feed
//! (`spec/2026-04-17/json-schema/schema.feed.json`, docs/agents.md): one
//! market's view, `{"products": [...]}`, written product by product so
//! that a million products never stand in memory as JSON. A variant's id
//! is the facade's item id (`{productId}:{variantId}`), its price the
//! market's currency's (a variant without one is left out, a product
//! with none too), its availability what anyone may buy now (stock less
//! what open checkouts hold); drafts and archived products are left out.

use std::collections::HashMap;
use std::io::Write;

use serde::Serialize;
use storefront_proto::catalog::v1::{Category, Media, MediaType, Product, ProductStatus};
use storefront_proto::common::v1::LocalizedString;

use crate::store::StoredProducts;

/// The market a feed is for.
#[derive(Debug, Clone)]
pub struct Target {
    /// ISO 4217, upper case: the prices shown.
    pub currency: String,
    /// The strings shown, with the locale's language, then any, as fallback.
    pub locale: String,
    /// A product's page: `{productId}` and `{slug}` replaced.
    pub product_url: String,
}

#[derive(Serialize)]
struct Price<'a> {
    amount: i64,
    currency: &'a str,
}

#[derive(Serialize)]
struct Availability {
    available: bool,
    status: &'static str,
}

#[derive(Serialize)]
struct Named {
    name: String,
    value: String,
}

#[derive(Serialize)]
struct Value {
    value: String,
}

#[derive(Serialize)]
struct MediaOut<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    url: &'a str,
    #[serde(skip_serializing_if = "String::is_empty")]
    alt_text: String,
}

#[derive(Serialize)]
struct Description {
    plain: String,
}

#[derive(Serialize)]
struct VariantOut<'a> {
    id: String,
    title: String,
    url: &'a str,
    price: Price<'a>,
    availability: Availability,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    categories: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    variant_options: Vec<Named>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    media: Vec<MediaOut<'a>>,
}

#[derive(Serialize)]
struct ProductOut<'a> {
    id: &'a str,
    title: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<Description>,
    url: &'a str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    media: Vec<MediaOut<'a>>,
    variants: Vec<VariantOut<'a>>,
}

/// One string of `s` for `locale`: the locale, its language, else the
/// first locale in order.
fn text(s: Option<&LocalizedString>, locale: &str) -> String {
    let Some(s) = s else { return String::new() };
    if let Some(t) = s.values.get(locale) {
        return t.clone();
    }
    let language = locale.split('-').next().unwrap_or(locale);
    let mut keys: Vec<&String> = s.values.keys().collect();
    keys.sort();
    let key = keys
        .iter()
        .find(|k| k.split('-').next() == Some(language))
        .or(keys.first());
    key.and_then(|k| s.values.get(*k))
        .cloned()
        .unwrap_or_default()
}

fn media<'a>(all: &'a [Media], locale: &str) -> Vec<MediaOut<'a>> {
    all.iter()
        .map(|m| MediaOut {
            kind: if m.r#type == MediaType::Video as i32 {
                "video"
            } else {
                "image"
            },
            url: &m.url,
            alt_text: text(m.alt.as_ref(), locale),
        })
        .collect()
}

/// Each category's path from its root, `Women > Shoes`.
fn paths(categories: &[Category], locale: &str) -> HashMap<String, String> {
    let names: HashMap<&str, String> = categories
        .iter()
        .filter_map(|c| Some((c.meta.as_ref()?.id.as_str(), text(c.name.as_ref(), locale))))
        .collect();
    categories
        .iter()
        .filter_map(|c| {
            let id = c.meta.as_ref()?.id.clone();
            let mut parts: Vec<&str> = c
                .ancestors
                .iter()
                .filter_map(|a| names.get(a.id.as_str()).map(String::as_str))
                .collect();
            parts.push(names.get(id.as_str())?);
            Some((id, parts.join(" > ")))
        })
        .collect()
}

/// The product as the feed shows it; None when it is not for sale in the
/// market's currency.
fn product<'a>(
    p: &'a Product,
    url: &'a str,
    target: &'a Target,
    paths: &HashMap<String, String>,
) -> Option<ProductOut<'a>> {
    if p.status != ProductStatus::Active as i32 {
        return None;
    }
    let id = p.meta.as_ref().map_or("", |m| m.id.as_str());
    let title = text(p.name.as_ref(), &target.locale);
    let categories = || {
        p.category_ids
            .iter()
            .filter_map(|c| paths.get(c))
            .map(|v| Value { value: v.clone() })
            .collect()
    };
    let variants: Vec<VariantOut<'a>> = p
        .variants
        .iter()
        .filter_map(|v| {
            let price = v
                .prices
                .iter()
                .find(|m| m.currency_code == target.currency)?;
            let quantity = v.availability.as_ref().map_or(0, |a| a.quantity);
            let mut options: Vec<Named> = v
                .attributes
                .iter()
                .map(|(k, v)| Named {
                    name: k.clone(),
                    value: v.clone(),
                })
                .collect();
            options.sort_by(|a, b| a.name.cmp(&b.name));
            let shown: Vec<&str> = options.iter().map(|o| o.value.as_str()).collect();
            Some(VariantOut {
                id: format!("{id}:{}", v.id),
                title: if shown.is_empty() {
                    title.clone()
                } else {
                    format!("{title} - {}", shown.join(" / "))
                },
                url,
                price: Price {
                    amount: price.cent_amount,
                    currency: &target.currency,
                },
                availability: Availability {
                    available: quantity > 0,
                    status: if quantity > 0 {
                        "in_stock"
                    } else {
                        "out_of_stock"
                    },
                },
                categories: categories(),
                variant_options: options,
                media: media(&v.media, &target.locale),
            })
        })
        .collect();
    if variants.is_empty() {
        return None;
    }
    let description = text(p.description.as_ref(), &target.locale);
    Some(ProductOut {
        id,
        title,
        description: (!description.is_empty()).then_some(Description { plain: description }),
        url,
        media: media(&p.media, &target.locale),
        variants,
    })
}

/// Writes the feed of `products` for `target`; how many products it shows.
pub fn write(
    categories: &[Category],
    products: &StoredProducts,
    target: &Target,
    out: &mut impl Write,
) -> std::io::Result<usize> {
    let paths = paths(categories, &target.locale);
    out.write_all(b"{\"products\":[")?;
    let mut shown = 0;
    for row in 0..products.len() as u32 {
        let p = products.decode(row).map_err(std::io::Error::other)?;
        let id = p.meta.as_ref().map_or("", |m| m.id.as_str());
        let slug = text(p.slug.as_ref(), &target.locale);
        let url = target
            .product_url
            .replace("{productId}", id)
            .replace("{slug}", &slug);
        let Some(record) = product(&p, &url, target, &paths) else {
            continue;
        };
        if shown > 0 {
            out.write_all(b",\n")?;
        }
        serde_json::to_writer(&mut *out, &record)?;
        shown += 1;
    }
    out.write_all(b"]}\n")?;
    out.flush()?;
    Ok(shown)
}
