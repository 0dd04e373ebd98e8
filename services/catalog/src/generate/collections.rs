//! Merchandised collections over the generated products.

use std::cmp::Reverse;
use std::collections::HashSet;

use storefront_domain::catalog::ProductFacts;
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
            let picked = pick(key, &active, categories);
            Collection {
                meta: Some(meta(rng)),
                key: key.to_string(),
                name: Some(localized(en, de)),
                description: Some(localized(description, description)),
                product_ids: picked.iter().map(|p| p.id.to_string()).collect(),
                position: position as u32,
            }
        })
        .collect()
}

fn created(p: &ProductFacts) -> i64 {
    p.created_at.map_or(0, |(seconds, _)| seconds)
}

/// The ids of the categories whose key ends with one of `suffixes`.
fn categories_ending<'a>(categories: &'a [Category], suffixes: &[&str]) -> HashSet<&'a str> {
    categories
        .iter()
        .filter(|c| suffixes.iter().any(|s| c.key.ends_with(s)))
        .filter_map(|c| c.meta.as_ref())
        .map(|m| m.id.as_str())
        .collect()
}

/// The first `COLLECTION_SIZE` of `active` that `keep`.
fn first<'a>(
    active: &[&'a ProductFacts],
    keep: impl Fn(&ProductFacts) -> bool,
) -> Vec<&'a ProductFacts> {
    active
        .iter()
        .copied()
        .filter(|p| keep(p))
        .take(COLLECTION_SIZE)
        .collect()
}

/// The first `COLLECTION_SIZE` of `active` sorted by `key`, ties in their
/// order: selected, then only those sorted.
fn top<'a, K: Ord>(
    active: &[&'a ProductFacts],
    key: impl Fn(&ProductFacts) -> K,
) -> Vec<&'a ProductFacts> {
    let mut ranked: Vec<(K, usize)> = active
        .iter()
        .enumerate()
        .map(|(i, p)| (key(p), i))
        .collect();
    if ranked.len() > COLLECTION_SIZE {
        ranked.select_nth_unstable(COLLECTION_SIZE);
        ranked.truncate(COLLECTION_SIZE);
    }
    ranked.sort_unstable();
    ranked.into_iter().map(|(_, i)| active[i]).collect()
}

fn pick<'a>(
    key: &str,
    active: &[&'a ProductFacts],
    categories: &[Category],
) -> Vec<&'a ProductFacts> {
    let in_any = |suffixes: &[&str]| {
        let ids = categories_ending(categories, suffixes);
        first(active, |p| {
            p.category_ids.iter().any(|c| ids.contains(&**c))
        })
    };
    match key {
        "new-arrivals" => top(active, |p| Reverse(created(p))),
        "best-sellers" => top(active, |p| Reverse(p.popularity)),
        "featured" => first(active, |p| p.featured),
        "winter-edit" => in_any(&["-boots", "-scarves", "-jackets", "-throws"]),
        "home-essentials" => in_any(&["home"]),
        // Under 50 in the first currency (the default).
        _ => first(active, |p| {
            p.prices.first().is_some_and(|&(_, c)| c < 5_000)
        }),
    }
}
