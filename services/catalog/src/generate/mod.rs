//! The deterministic demo catalog: the same seed and size always give the
//! same products, ids included, so demos, tests and benchmarks agree.

mod collections;
mod prices;
mod vocab;

use std::collections::BTreeMap;

use storefront_proto::Timestamp;
use storefront_proto::catalog::v1::{
    Availability, Category, CategoryRef, Media, MediaType, Product, ProductStatus, Variant,
};
use storefront_proto::common::v1::{LocalizedString, ResourceMeta};

use self::prices::prices;
use self::vocab::{ADJECTIVES, BRANDS, COLOURS, Leaf, TREE};
use crate::store::{Parts, StoredProducts, sku_key};
use std::sync::Arc;

use storefront_domain::catalog::ProductFacts;
use storefront_domain::currencies::Currencies;
use storefront_domain::interned::Interned;

/// 2024-01-01T00:00:00Z; products were created between this and `LATEST`.
const EARLIEST: i64 = 1_704_067_200;
/// 2026-11-01T00:00:00Z.
const LATEST: i64 = 1_793_491_200;
/// Where the demo's media are said to be, unless the mesh serves them
/// (`DEMO_MEDIA_BASE`): a host that does not exist.
pub const IMAGE_BASE: &str = "https://images.storefront.example/products";

/// Products come in chunks of `CHUNK`, each from its own random sequence
/// (derived from the seed and the chunk's number), so every core generates,
/// encodes and compresses chunks at once and the catalog is still the same
/// for a seed. Products are never held as structs beyond their chunk.
pub fn generate(size: usize, seed: u64) -> Parts {
    generate_in(size, seed, Arc::new(Currencies::demo()), IMAGE_BASE)
}

/// As `generate`, each product priced in every one of `currencies`, its
/// media under `media` (`/{key}/{file}`).
pub fn generate_in(size: usize, seed: u64, currencies: Arc<Currencies>, media: &str) -> Parts {
    const CHUNK: usize = 1_000;
    let mut rng = fastrand::Rng::with_seed(seed);
    let (categories, leaves) = categories(&mut rng);
    let chunk_rng =
        |c: u64| fastrand::Rng::with_seed(seed ^ (c + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // Compressed against a product of its own sequence, not in the catalog.
    let cx = (&leaves[..], &*currencies, media);
    let empty = StoredProducts::new(&product(&mut chunk_rng(u64::MAX - 1), 0, cx));
    let chunks = storefront_domain::cores::map_on_cores(size.div_ceil(CHUNK), |c| {
        let mut rng = chunk_rng(c as u64);
        let range = c * CHUNK..((c + 1) * CHUNK).min(size);
        let (mut facts, mut stored) = (Vec::with_capacity(CHUNK), empty.clone());
        let mut skus = Vec::with_capacity(CHUNK * 3);
        let mut scratch = Default::default();
        let mut strings = Interned::default();
        for n in range {
            let p = product(&mut rng, n, cx);
            facts.push(ProductFacts::interned(&p, &mut strings));
            skus.extend(p.variants.iter().map(|v| (sku_key(&v.sku), n as u32)));
            stored.push(p, &mut scratch);
        }
        (facts, skus, stored)
    });
    let mut facts = Vec::with_capacity(size);
    let mut skus = Vec::new();
    let mut parts = Vec::with_capacity(chunks.len());
    for (mut f, mut s, stored) in chunks {
        facts.append(&mut f);
        skus.append(&mut s);
        parts.push(stored);
    }
    let products = empty.concat(parts);
    let collections = collections::build(&mut rng, &facts, &categories);
    Parts {
        categories,
        products,
        facts,
        skus,
        collections,
        currencies,
    }
}

pub(crate) fn id(rng: &mut fastrand::Rng) -> String {
    uuid::Builder::from_random_bytes(rng.u128(..).to_le_bytes())
        .into_uuid()
        .to_string()
}

pub(crate) fn localized(en: &str, de: &str) -> LocalizedString {
    let values = BTreeMap::from([
        ("de-DE".to_string(), de.to_string()),
        ("en-AU".to_string(), en.to_string()),
        ("en-NZ".to_string(), en.to_string()),
    ]);
    LocalizedString { values }
}

pub(crate) fn meta(rng: &mut fastrand::Rng) -> ResourceMeta {
    let created = rng.i64(EARLIEST..LATEST - 86_400 * 60);
    let modified = created + rng.i64(0..86_400 * 60);
    ResourceMeta {
        id: id(rng),
        version: rng.i64(1..6),
        created_at: Some(Timestamp {
            seconds: created,
            nanos: 0,
        }),
        last_modified_at: Some(Timestamp {
            seconds: modified,
            nanos: 0,
        }),
    }
}

/// The URL form of `text`: lower-case letters and digits joined by `-`,
/// German umlauts and ß spelt out.
pub(crate) fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 4);
    // Whether a separator is owed before the next letter or digit.
    let mut gap = false;
    let mut put = |out: &mut String, c: char| {
        let spelled = match c {
            'a'..='z' | '0'..='9' => None,
            'ä' => Some("ae"),
            'ö' => Some("oe"),
            'ü' => Some("ue"),
            'ß' => Some("ss"),
            _ => {
                gap = !out.is_empty();
                return;
            }
        };
        if std::mem::take(&mut gap) {
            out.push('-');
        }
        match spelled {
            Some(s) => out.push_str(s),
            None => out.push(c),
        }
    };
    for c in text.chars() {
        if c.is_ascii() {
            put(&mut out, c.to_ascii_lowercase());
        } else {
            c.to_lowercase().for_each(|l| put(&mut out, l));
        }
    }
    out
}

/// A leaf category with what products in it need to know.
struct LeafRef {
    path: Vec<String>,
    leaf: &'static Leaf,
    materials: &'static [vocab::Word],
}

fn category(
    rng: &mut fastrand::Rng,
    key: String,
    name: (&str, &str),
    position: u32,
    ancestors: &[CategoryRef],
) -> Category {
    let name = localized(name.0, name.1);
    let slug = LocalizedString {
        values: name
            .values
            .iter()
            .map(|(k, v)| (k.clone(), slug(v)))
            .collect(),
    };
    Category {
        meta: Some(meta(rng)),
        parent_id: ancestors.last().map(|a| a.id.clone()).unwrap_or_default(),
        ancestors: ancestors.to_vec(),
        key,
        name: Some(name),
        slug: Some(slug),
        position,
    }
}

fn reference(c: &Category) -> CategoryRef {
    CategoryRef {
        id: c.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
        key: c.key.clone(),
        name: c.name.clone(),
        slug: c.slug.clone(),
    }
}

fn categories(rng: &mut fastrand::Rng) -> (Vec<Category>, Vec<LeafRef>) {
    let mut all = Vec::new();
    let mut leaves = Vec::new();
    for (ri, root) in TREE.iter().enumerate() {
        let r = category(rng, root.key.to_string(), root.name, ri as u32, &[]);
        let r_ref = reference(&r);
        all.push(r);
        for (bi, branch) in root.branches.iter().enumerate() {
            let key = format!("{}-{}", root.key, branch.key);
            let b = category(
                rng,
                key.clone(),
                branch.name,
                bi as u32,
                std::slice::from_ref(&r_ref),
            );
            let b_ref = reference(&b);
            all.push(b);
            for (li, leaf) in branch.leaves.iter().enumerate() {
                let ancestors = [r_ref.clone(), b_ref.clone()];
                let l = category(
                    rng,
                    format!("{key}-{}", leaf.key),
                    leaf.name,
                    li as u32,
                    &ancestors,
                );
                let path = vec![r_ref.id.clone(), b_ref.id.clone(), reference(&l).id];
                leaves.push(LeafRef {
                    path,
                    leaf,
                    materials: root.materials,
                });
                all.push(l);
            }
        }
    }
    (all, leaves)
}

fn image(id: String, at: (&str, &str), file: &str, alt: LocalizedString, position: u32) -> Media {
    let (base, key) = at;
    Media {
        id,
        r#type: MediaType::Image as i32,
        url: format!("{base}/{key}/{file}.jpg"),
        alt: Some(alt),
        width: 1200,
        height: 1500,
        position,
    }
}

fn product(
    rng: &mut fastrand::Rng,
    n: usize,
    (leaves, currencies, media_base): (&[LeafRef], &Currencies, &str),
) -> Product {
    let leaf = &leaves[rng.usize(..leaves.len())];
    let adjective = ADJECTIVES[rng.usize(..ADJECTIVES.len())];
    let material = leaf.materials[rng.usize(..leaf.materials.len())];
    let en = format!("{} {} {}", adjective.1, material.1, leaf.leaf.product.0);
    let de = format!("{} {} {}", adjective.2, material.2, leaf.leaf.product.1);
    let brand = BRANDS[rng.usize(..BRANDS.len())];
    let key = format!("{}-{n:06}", slug(&en));
    let name = localized(&en, &de);
    let slug_ls = LocalizedString {
        values: name
            .values
            .iter()
            .map(|(k, v)| (k.clone(), format!("{}-{n:06}", slug(v))))
            .collect(),
    };
    let description = localized(
        &format!(
            "The {en} by {brand}: {} {} made to last.",
            adjective.1.to_lowercase(),
            material.1.to_lowercase()
        ),
        &format!("{de} von {brand}."),
    );
    let status = match rng.u8(..100) {
        0..80 => ProductStatus::Active,
        80..90 => ProductStatus::Inactive,
        _ => ProductStatus::Discontinued,
    };
    let sold_out = rng.u8(..100) < 12;
    let base_dollars = rng.i64(9..300);
    let mut media: Vec<Media> = (0..rng.u32(1..4))
        .map(|i| {
            image(
                id(rng),
                (media_base, &key),
                &format!("{}", i + 1),
                name.clone(),
                i,
            )
        })
        .collect();
    if rng.u8(..100) < 5 {
        media.push(Media {
            id: id(rng),
            r#type: MediaType::Video as i32,
            url: format!("{media_base}/{key}/video.mp4"),
            alt: Some(name.clone()),
            width: 1920,
            height: 1080,
            position: media.len() as u32,
        });
    }
    let priced = (base_dollars, currencies);
    let variants = variants(rng, (media_base, &key), leaf.leaf, priced, sold_out, &name);
    let in_stock = variants
        .iter()
        .any(|v| v.availability.is_some_and(|a| a.in_stock));
    Product {
        meta: Some(meta(rng)),
        key,
        name: Some(name),
        description: Some(description),
        slug: Some(slug_ls),
        brand: brand.to_string(),
        category_ids: leaf.path.clone(),
        status: status as i32,
        featured: rng.u8(..100) < 8,
        popularity: rng.u32(..10_000),
        in_stock,
        price: None,
        master_variant: variants.first().cloned(),
        variants,
        media,
        // Listing summaries carry them (`catalog::summary`).
        variant_attributes: Vec::new(),
    }
}

fn variants(
    rng: &mut fastrand::Rng,
    (media_base, key): (&str, &str),
    leaf: &Leaf,
    (base_dollars, currencies): (i64, &Currencies),
    sold_out: bool,
    name: &LocalizedString,
) -> Vec<Variant> {
    let count = rng.usize(1..5).min(leaf.sizes.len() * COLOURS.len());
    let colour_start = rng.usize(..COLOURS.len());
    (0..count)
        .map(|i| {
            let colour = COLOURS[(colour_start + i / leaf.sizes.len()) % COLOURS.len()];
            let size = leaf.sizes[i % leaf.sizes.len()];
            let quantity = if sold_out || rng.u8(..100) < 10 {
                0
            } else {
                rng.u32(1..60)
            };
            let sku = format!("{}-{}", key.to_uppercase(), i + 1);
            let file = format!("{}-{}", i + 1, colour.to_lowercase());
            Variant {
                id: i as u32 + 1,
                attributes: BTreeMap::from([
                    ("colour".to_string(), colour.to_string()),
                    ("size".to_string(), size.to_string()),
                ]),
                price: None,
                // Larger sizes of bedding cost more; everything else is flat.
                prices: prices(
                    base_dollars
                        + if leaf.sizes.len() == 4 {
                            20 * i as i64
                        } else {
                            0
                        },
                    currencies,
                ),
                availability: Some(Availability {
                    in_stock: quantity > 0,
                    quantity,
                    held: 0,
                }),
                media: vec![image(id(rng), (media_base, key), &file, name.clone(), 0)],
                sku,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_catalog() {
        let a = generate(50, 7);
        let b = generate(50, 7);
        assert_eq!(a.products, b.products);
        assert_eq!(a.facts, b.facts);
        assert_eq!(a.categories, b.categories);
        assert_ne!(generate(50, 8).products, a.products);
    }

    #[test]
    fn the_catalog_has_what_the_demo_promises() {
        let g = generate(1000, 42);
        assert_eq!(g.categories.len(), 4 + 12 + 36);
        assert!(g.categories.iter().any(|c| c.ancestors.len() == 2));
        let products: Vec<Product> = (0..g.products.len() as u32)
            .map(|row| g.products.decode(row).unwrap())
            .collect();
        let statuses: std::collections::HashSet<i32> = products.iter().map(|p| p.status).collect();
        assert_eq!(statuses.len(), 3);
        assert!(products.iter().any(|p| !p.in_stock));
        assert!(products.iter().any(|p| p.in_stock));
        let brands: std::collections::HashSet<&str> =
            products.iter().map(|p| p.brand.as_str()).collect();
        assert!(brands.len() >= 5);
        for (p, facts) in products.iter().zip(&g.facts) {
            assert_eq!(&ProductFacts::of(p), facts);
            assert!(!p.variants.is_empty() && p.price.is_none());
            let master = p.master_variant.as_ref().unwrap();
            // One price in each of the demo markets' currencies.
            assert_eq!(master.prices.len(), 4);
            assert!(
                master
                    .prices
                    .iter()
                    .all(|m| m.cent_amount > 0 && m.fraction_digits == 2)
            );
        }
        assert_eq!(slug("Klassisch Baumwoll Hüte"), "klassisch-baumwoll-huete");
        assert_eq!(slug("  Über -- Straße & Co. 2 "), "ueber-strasse-co-2");
        assert_eq!(slug("ÄÖÜ"), "aeoeue");
        assert_eq!(slug("---"), "");
    }

    /// A build holds each repeated string once (`Interned`): what the
    /// start's peak memory rests on.
    #[test]
    fn products_of_one_build_share_their_brand_and_attribute_strings() {
        let g = generate(1000, 42);
        let (first, rest) = g.facts.split_first().unwrap();
        let same_brand = rest.iter().find(|f| f.brand == first.brand).unwrap();
        assert!(std::sync::Arc::ptr_eq(&first.brand, &same_brand.brand));
        let member = &first.attributes[0];
        let other = rest
            .iter()
            .flat_map(|f| f.attributes.iter())
            .find(|m| *m == member)
            .unwrap();
        assert!(std::sync::Arc::ptr_eq(member, other));
    }
}
