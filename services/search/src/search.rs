//! Answering a search: text match, then the product filters, facets over
//! what remains, then relevance (or the requested sort) and the page.

use std::collections::HashMap;
use std::marker::PhantomData;

use storefront_common::catalog::{ProductField, ProductSchema, master_price, view};
use storefront_common::error::ServiceError;
use storefront_common::query::{self, FieldType, Schema, Value};
use storefront_proto::catalog::v1::Product;
use storefront_proto::common::v1::ListQuery;
use storefront_proto::search::v1::{FacetValue, Facets, PriceRange, SearchResponse};
use tantivy::DocAddress;
use tantivy::collector::TopDocs;
use tantivy::columnar::Column;
use tantivy::query::Query;

use crate::index::Indexed;

/// Price facet buckets, in cents of the requested currency.
const PRICE_BUCKETS: &[(i64, i64)] = &[
    (0, 2_500),
    (2_500, 5_000),
    (5_000, 10_000),
    (10_000, 20_000),
    (20_000, 0),
];

/// A matching product and its relevance (score x 10^6, to compare exactly).
pub struct Hit<'p> {
    pub relevance: i64,
    pub product: &'p Product,
}

#[derive(Clone, Copy)]
pub enum HitField {
    Relevance,
    Product(ProductField),
}

pub struct HitSchema<'p>(PhantomData<&'p ()>);

impl<'p> Schema for HitSchema<'p> {
    type Record = Hit<'p>;
    type Field = HitField;
    type Context = &'static str;

    fn resolve(name: &str) -> Option<(HitField, FieldType)> {
        ProductSchema::resolve(name).map(|(f, t)| (HitField::Product(f), t))
    }

    fn id<'a>(h: &'a Hit<'p>) -> &'a str {
        ProductSchema::id(h.product)
    }

    fn value<'a>(h: &'a Hit<'p>, field: HitField, currency: &&'static str) -> Value<'a> {
        match field {
            HitField::Relevance => Value::Integer(h.relevance),
            HitField::Product(f) => ProductSchema::value(h.product, f, currency),
        }
    }
}

/// The best `limit` products matching `query`, with their relevance.
pub fn hits<'p>(
    indexed: &'p Indexed,
    query: &dyn Query,
    limit: usize,
) -> tantivy::Result<Vec<Hit<'p>>> {
    let searcher = indexed.reader.searcher();
    let limit = limit.clamp(1, indexed.products.len().max(1));
    let docs: Vec<(f32, DocAddress)> =
        searcher.search(query, &TopDocs::with_limit(limit).order_by_score())?;
    let mut columns: HashMap<u32, Column<u64>> = HashMap::new();
    let mut out = Vec::with_capacity(docs.len());
    for (score, address) in docs {
        if let std::collections::hash_map::Entry::Vacant(slot) = columns.entry(address.segment_ord)
        {
            slot.insert(
                searcher
                    .segment_reader(address.segment_ord)
                    .fast_fields()
                    .u64("ord")?,
            );
        }
        let ord = columns[&address.segment_ord].first(address.doc_id);
        if let Some(product) = ord.and_then(|o| indexed.products.get(o as usize)) {
            out.push(Hit {
                relevance: (f64::from(score) * 1e6) as i64,
                product,
            });
        }
    }
    Ok(out)
}

fn counted(counts: HashMap<String, u64>, labels: impl Fn(&str) -> String) -> Vec<FacetValue> {
    let mut values: Vec<FacetValue> = counts
        .into_iter()
        .map(|(value, count)| FacetValue {
            label: labels(&value),
            value,
            count,
        })
        .collect();
    values.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
    values
}

fn facets(indexed: &Indexed, matched: &[&Hit<'_>], currency: &str) -> Facets {
    let mut brands: HashMap<String, u64> = HashMap::new();
    let mut categories: HashMap<String, u64> = HashMap::new();
    let mut stock: HashMap<String, u64> = HashMap::new();
    let mut prices = vec![0u64; PRICE_BUCKETS.len()];
    for hit in matched {
        let p = hit.product;
        *brands.entry(p.brand.clone()).or_default() += 1;
        for id in &p.category_ids {
            *categories.entry(id.clone()).or_default() += 1;
        }
        *stock.entry(p.in_stock.to_string()).or_default() += 1;
        if let Some(price) = master_price(p, currency) {
            let bucket = PRICE_BUCKETS
                .iter()
                .position(|&(from, to)| price >= from && (to == 0 || price < to));
            if let Some(b) = bucket {
                prices[b] += 1;
            }
        }
    }
    Facets {
        brands: counted(brands, |_| String::new()),
        categories: counted(categories, |id| {
            indexed.category_keys.get(id).cloned().unwrap_or_default()
        }),
        prices: PRICE_BUCKETS
            .iter()
            .zip(prices)
            .map(|(&(from, to), count)| PriceRange { from, to, count })
            .collect(),
        in_stock: counted(stock, |_| String::new()),
    }
}

/// Filters, facets, orders and pages `hits`.
pub fn answer(
    indexed: &Indexed,
    hits: &[Hit<'_>],
    list: &ListQuery,
    currency: &'static str,
) -> Result<SearchResponse, ServiceError> {
    let matched = query::matching::<HitSchema>(hits, list, &currency)?;
    let facets = facets(indexed, &matched, currency);
    let relevance = [
        (HitField::Relevance, true),
        (HitField::Product(ProductField::Popularity), true),
    ];
    let page = query::order_and_page::<HitSchema>(matched, list, &currency, &relevance)?;
    let products = page
        .items
        .iter()
        .map(|h| view(h.product, currency, false))
        .collect();
    Ok(SearchResponse {
        page: Some(page.info),
        products,
        facets: Some(facets),
    })
}
