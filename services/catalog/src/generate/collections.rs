//! Merchandised collections over the generated products.

use storefront_proto::catalog::v1::{Category, Collection, Product, ProductStatus};

use super::vocab::COLLECTIONS;
use super::{localized, meta};

const COLLECTION_SIZE: usize = 24;

pub fn build(
    rng: &mut fastrand::Rng,
    products: &[Product],
    categories: &[Category],
) -> Vec<Collection> {
    let active: Vec<&Product> = products
        .iter()
        .filter(|p| p.status == ProductStatus::Active as i32)
        .collect();
    COLLECTIONS
        .iter()
        .enumerate()
        .map(|(position, (key, en, de, description))| {
            let mut picked = pick(key, &active, categories);
            picked.truncate(COLLECTION_SIZE);
            Collection {
                meta: Some(meta(rng)),
                key: key.to_string(),
                name: Some(localized(en, de)),
                description: Some(localized(description, description)),
                product_ids: picked.iter().map(|p| product_id(p).to_string()).collect(),
                position: position as u32,
            }
        })
        .collect()
}

fn product_id(p: &Product) -> &str {
    p.meta.as_ref().map_or("", |m| m.id.as_str())
}

fn created(p: &Product) -> i64 {
    p.meta
        .as_ref()
        .and_then(|m| m.created_at)
        .map_or(0, |t| t.seconds)
}

fn in_categories(p: &Product, categories: &[Category], suffixes: &[&str]) -> bool {
    categories
        .iter()
        .filter(|c| suffixes.iter().any(|s| c.key.ends_with(s)))
        .filter_map(|c| c.meta.as_ref())
        .any(|m| p.category_ids.contains(&m.id))
}

fn pick<'a>(key: &str, active: &[&'a Product], categories: &[Category]) -> Vec<&'a Product> {
    let mut list: Vec<&Product> = active.to_vec();
    match key {
        "new-arrivals" => list.sort_by_key(|p| std::cmp::Reverse(created(p))),
        "best-sellers" => list.sort_by_key(|p| std::cmp::Reverse(p.popularity)),
        "featured" => list.retain(|p| p.featured),
        "winter-edit" => list.retain(|p| {
            in_categories(
                p,
                categories,
                &["-boots", "-scarves", "-jackets", "-throws"],
            )
        }),
        "home-essentials" => list.retain(|p| in_categories(p, categories, &["home"])),
        _ => list.retain(|p| {
            p.master_variant
                .as_ref()
                .and_then(|v| v.prices.first())
                .is_some_and(|m| m.cent_amount < 5_000)
        }),
    }
    list
}
