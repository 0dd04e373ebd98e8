//! A product record as a product, checked field by field, and back:
//! its variants with their prices, stock and media.

use super::*;

fn price(r: &PriceRecord, p: &mut Problems, currencies: &Currencies) -> Money {
    // Looked up once, in the currencies the catalog prices in (ten prices
    // a product; a code outside them refuses the record anyway).
    let units = currencies.units(&r.currency_code);
    if r.currency_code.is_empty() {
        p.add("currencyCode", "is required");
    } else if units.is_none() {
        let allowed = currencies.listed();
        p.add("currencyCode", format!("must be one of {allowed}"));
    }
    if r.cent_amount < 0 {
        p.add("centAmount", "must be 0 or more");
    } else if r.cent_amount > storefront_proto::names::MAX_CENT_AMOUNT {
        let max = storefront_proto::names::MAX_CENT_AMOUNT;
        p.add("centAmount", format!("must be at most {max}"));
    }
    Money {
        currency_code: r.currency_code.clone(),
        cent_amount: r.cent_amount,
        fraction_digits: units.unwrap_or_else(|| fraction_digits(&r.currency_code)),
    }
}

fn media(r: MediaRecord, p: &mut Problems) -> Media {
    p.id("id", &r.id);
    if r.url.is_empty() {
        p.add("url", "is required");
    } else if !(r.url.starts_with("https://") || r.url.starts_with("http://")) {
        p.add("url", "must be an http(s) URL");
    }
    let kind = match r.kind.as_str() {
        "image" => MediaType::Image,
        "video" => MediaType::Video,
        _ => {
            p.add("type", "must be image or video");
            MediaType::Image
        }
    };
    p.localized("alt", &r.alt, false);
    Media {
        id: r.id,
        r#type: kind as i32,
        url: r.url,
        alt: localized(r.alt),
        width: r.width,
        height: r.height,
        position: r.position,
    }
}

fn media_record(m: &Media) -> MediaRecord {
    MediaRecord {
        id: m.id.clone(),
        url: m.url.clone(),
        kind: if m.r#type == MediaType::Video as i32 {
            "video"
        } else {
            "image"
        }
        .to_string(),
        alt: values(m.alt.as_ref()),
        width: m.width,
        height: m.height,
        position: m.position,
    }
}

fn variant(r: VariantRecord, p: &mut Problems, currencies: &Currencies) -> Variant {
    if r.id == 0 {
        p.add("id", "must be 1 or more");
    }
    p.id("sku", &r.sku);
    if r.prices.is_empty() {
        p.add("prices", "needs at least one price");
    }
    let prices: Vec<Money> = r
        .prices
        .iter()
        .enumerate()
        .map(|(i, m)| p.at("prices", i, |p| price(m, p, currencies)))
        .collect();
    for (i, m) in prices.iter().enumerate() {
        if prices[..i]
            .iter()
            .any(|o| o.currency_code == m.currency_code)
        {
            p.add(format!("prices[{i}]"), "a second price in this currency");
        }
    }
    let quantity = r.availability.quantity;
    if quantity < 0 {
        p.add("availability.quantity", "stock cannot be negative");
    } else if quantity > i64::from(u32::MAX) {
        p.add("availability.quantity", "is too large");
    }
    let quantity = quantity.clamp(0, i64::from(u32::MAX)) as u32;
    Variant {
        id: r.id,
        sku: r.sku,
        attributes: r.attributes,
        price: None,
        prices,
        availability: Some(crate::units::counted(quantity, r.availability.held)),
        media: r
            .media
            .into_iter()
            .enumerate()
            .map(|(i, m)| p.at("media", i, |p| media(m, p)))
            .collect(),
    }
}

fn variant_record(v: &Variant) -> VariantRecord {
    VariantRecord {
        id: v.id,
        sku: v.sku.clone(),
        attributes: v.attributes.clone(),
        prices: v
            .prices
            .iter()
            .map(|m| PriceRecord {
                currency_code: m.currency_code.clone(),
                cent_amount: m.cent_amount,
            })
            .collect(),
        availability: {
            let a = v.availability.unwrap_or_default();
            StockRecord {
                quantity: i64::from(a.quantity) + i64::from(a.held),
                held: a.held,
            }
        },
        media: v.media.iter().map(media_record).collect(),
    }
}

/// The product of record `r`; `category_ids` are its category and the
/// ancestors, root first; its prices in `currencies` only.
pub fn product(
    r: ProductRecord,
    category_ids: Vec<String>,
    p: &mut Problems,
    now: Timestamp,
    currencies: &Currencies,
) -> Product {
    let mut product = product_to_store(r, category_ids, p, now, currencies);
    product.master_variant = product.variants.first().cloned();
    product
}

/// `product` (moved from `r`: nothing is copied) without its master
/// variant, the first of its variants: what a feed's batch stores, which
/// names the first variant the master as it encodes it (`encode_stored`)
/// rather than holding a copy of it a product.
pub fn product_to_store(
    r: ProductRecord,
    category_ids: Vec<String>,
    p: &mut Problems,
    now: Timestamp,
    currencies: &Currencies,
) -> Product {
    let meta = meta(
        p,
        Meta {
            id: &r.id,
            version: r.version,
            created_at: r.created_at.as_deref(),
            last_modified_at: r.last_modified_at.as_deref(),
        },
        now,
    );
    p.id("key", &r.key);
    p.localized("name", &r.name, true);
    p.localized("description", &r.description, false);
    p.localized("slug", &r.slug, false);
    if r.brand.chars().count() > MAX_ID_CHARS {
        p.add("brand", format!("is longer than {MAX_ID_CHARS} characters"));
    }
    let status = match PRODUCT_STATUSES.iter().position(|s| *s == r.status) {
        Some(i) => [
            ProductStatus::Active,
            ProductStatus::Inactive,
            ProductStatus::Discontinued,
        ][i],
        None => {
            p.add(
                "status",
                format!("must be one of {}", PRODUCT_STATUSES.join(", ")),
            );
            ProductStatus::Active
        }
    };
    if r.variants.is_empty() {
        p.add("variants", "needs at least one variant");
    }
    let variants: Vec<Variant> = r
        .variants
        .into_iter()
        .enumerate()
        .map(|(i, v)| p.at("variants", i, |p| variant(v, p, currencies)))
        .collect();
    for (i, v) in variants.iter().enumerate() {
        if variants[..i].iter().any(|o| o.id == v.id) {
            p.add(format!("variants[{i}].id"), "a second variant with this id");
        }
    }
    let slug = if r.slug.is_empty() {
        slugs(&r.name, &r.key)
    } else {
        r.slug
    };
    Product {
        meta: Some(meta),
        key: r.key,
        name: localized(r.name),
        description: localized(r.description),
        slug: localized(slug),
        brand: r.brand,
        category_ids,
        status: status as i32,
        featured: r.featured,
        popularity: r.popularity,
        in_stock: variants
            .iter()
            .any(|v| v.availability.is_some_and(|a| a.in_stock)),
        price: None,
        master_variant: None,
        variants,
        media: r
            .media
            .into_iter()
            .enumerate()
            .map(|(i, m)| p.at("media", i, |p| media(m, p)))
            .collect(),
        // Listing summaries carry them (`catalog::summary`).
        variant_attributes: Vec::new(),
    }
}

pub fn product_record(product: &Product) -> ProductRecord {
    let (id, version, created_at, last_modified_at) = meta_fields(product.meta.as_ref());
    ProductRecord {
        kind: None,
        id,
        version,
        created_at,
        last_modified_at,
        key: product.key.clone(),
        name: values(product.name.as_ref()),
        description: values(product.description.as_ref()),
        slug: values(product.slug.as_ref()),
        brand: product.brand.clone(),
        category_id: product.category_ids.last().cloned().unwrap_or_default(),
        status: product_status(product.status).to_string(),
        featured: product.featured,
        popularity: product.popularity,
        media: product.media.iter().map(media_record).collect(),
        variants: product.variants.iter().map(variant_record).collect(),
    }
}
