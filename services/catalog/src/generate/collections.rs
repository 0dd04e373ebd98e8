//! Merchandised collections over the generated products.

use storefront_common::catalog::ProductFacts;
use storefront_proto::catalog::v1::{Category, Collection, ProductStatus};

use super::vocab::COLLECTIONS;
use super::{localized, meta};

const COLLECTION_SIZE: usize = 24;

pub fn build(
    rng: &mut fastrand::Rng,
    products: &[ProductFacts],
    categories: &[Category],
) -> Vec<Collection> {
    let active: Vec<&ProductFacts> = products
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
                product_ids: picked.iter().map(|p| p.id.clone()).collect(),
                position: position as u32,
            }
        })
        .collect()
}

fn created(p: &ProductFacts) -> i64 {
    p.created_at.map_or(0, |(seconds, _)| seconds)
}

fn in_categories(p: &ProductFacts, categories: &[Category], suffixes: &[&str]) -> bool {
    categories
        .iter()
        .filter(|c| suffixes.iter().any(|s| c.key.ends_with(s)))
        .filter_map(|c| c.meta.as_ref())
        .any(|m| p.category_ids.contains(&m.id))
}

fn pick<'a>(
    key: &str,
    active: &[&'a ProductFacts],
    categories: &[Category],
) -> Vec<&'a ProductFacts> {
    let mut list: Vec<&ProductFacts> = active.to_vec();
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
        _ => list.retain(|p| p.prices[0].is_some_and(|aud| aud < 5_000)),
    }
    list
}
