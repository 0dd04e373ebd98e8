//! Search results: the product listing envelope plus facets, and suggestions.

use serde::Serialize;
use storefront_proto::search::v1 as pb;
use utoipa::ToSchema;

use super::catalog::Product;

#[derive(Debug, Serialize, ToSchema)]
pub struct FacetValue {
    pub value: String,
    pub count: u64,
    /// The category key, for category facets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct PriceRange {
    /// Cents, inclusive.
    pub from: i64,
    /// Cents, exclusive; absent for the open top range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<i64>,
    pub count: u64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct StockFacet {
    pub value: bool,
    pub count: u64,
}

/// One variant attribute's values among the results: each value with how
/// many results have it in some variant (a product with navy and sand
/// variants counts for both).
#[derive(Debug, Serialize, ToSchema)]
pub struct AttributeFacet {
    #[schema(example = "colour")]
    pub name: String,
    /// Most frequent first, at most 50.
    pub values: Vec<FacetValue>,
}

/// Counts over every result that passed the filters (not just this page).
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Facets {
    pub brand: Vec<FacetValue>,
    pub category: Vec<FacetValue>,
    pub price: Vec<PriceRange>,
    pub in_stock: Vec<StockFacet>,
    /// Per variant attribute (`filter[attributes.<attribute>]` narrows by
    /// one): the names with the most results first, at most 20.
    pub attributes: Vec<AttributeFacet>,
}

fn values(v: Vec<pb::FacetValue>) -> Vec<FacetValue> {
    v.into_iter()
        .map(|f| FacetValue {
            value: f.value,
            count: f.count,
            label: Some(f.label).filter(|l| !l.is_empty()),
        })
        .collect()
}

impl From<pb::Facets> for Facets {
    fn from(f: pb::Facets) -> Self {
        Self {
            brand: values(f.brands),
            category: values(f.categories),
            price: f
                .prices
                .into_iter()
                .map(|p| PriceRange {
                    from: p.from,
                    to: Some(p.to).filter(|t| *t > 0),
                    count: p.count,
                })
                .collect(),
            in_stock: f
                .in_stock
                .into_iter()
                .map(|s| StockFacet {
                    value: s.value == "true",
                    count: s.count,
                })
                .collect(),
            attributes: (f.attributes.into_iter())
                .map(|a| AttributeFacet {
                    name: a.name,
                    values: values(a.values),
                })
                .collect(),
        }
    }
}

/// The paged envelope of product hits, plus facets.
#[derive(Debug, Serialize, ToSchema)]
pub struct SearchResult {
    pub limit: u32,
    pub offset: u64,
    pub count: u32,
    pub total: u64,
    /// Product summaries, as `/products` lists them.
    pub results: Vec<Product>,
    pub facets: Facets,
    /// Present when the query as typed matched nothing and its last words
    /// were left out (dropped from the right, one at a time, until
    /// something matched): the words the results do without.
    #[serde(rename = "droppedWords", skip_serializing_if = "Vec::is_empty")]
    #[schema(example = json!(["unicorn"]))]
    pub dropped_words: Vec<String>,
    /// Present when nothing matched even then (`total` 0, an empty page,
    /// still 200) and a close spelling exists: the query with each
    /// unknown word replaced by the closest word of a product name.
    #[serde(rename = "didYouMean", skip_serializing_if = "String::is_empty")]
    #[schema(example = "mug")]
    pub did_you_mean: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Suggestions {
    /// Completions of the text typed, most frequent first.
    pub completions: Vec<String>,
    pub products: Vec<Product>,
}
