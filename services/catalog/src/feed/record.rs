//! The records of a catalog feed as they are written, one JSON object a
//! line (see `docs/feed.md`). Field names follow the public JSON of the
//! same resources; what the catalog derives (a product's `categoryIds`,
//! `masterVariant`, `inStock`, a variant's `inStock`) is not written.
//! Unknown fields are refused: in a merchant's file they are typos.

use std::collections::BTreeMap;

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

/// The feed format this build reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// Text per IETF language tag (`en-AU`).
pub type Localized = BTreeMap<String, String>;

/// A record as written: its `type` first, then its fields. (Read by kind:
/// each record type reads its own fields, `type` among them.)
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Record {
    Header(Header),
    Category(CategoryRecord),
    Product(ProductRecord),
    Collection(CollectionRecord),
}

impl Record {
    pub fn kind(&self) -> &'static str {
        match self {
            Record::Header(_) => "header",
            Record::Category(_) => "category",
            Record::Product(_) => "product",
            Record::Collection(_) => "collection",
        }
    }
}

/// The first line, optionally: which format the file is in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Header {
    /// The record's `type`, read before and written by [`Record`].
    #[serde(rename = "type", default, skip_serializing)]
    pub kind: Option<IgnoredAny>,
    pub version: u32,
    /// How many records follow the header: a feed that ends before (an
    /// upload cut short) is refused whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CategoryRecord {
    /// The record's `type`, read before and written by [`Record`].
    #[serde(rename = "type", default, skip_serializing)]
    pub kind: Option<IgnoredAny>,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified_at: Option<String>,
    pub key: String,
    pub name: Localized,
    /// Derived from `name` when absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slug: Localized,
    /// A category on an earlier line; absent for a root.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub parent_id: String,
    #[serde(default)]
    pub position: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProductRecord {
    /// The record's `type`, read before and written by [`Record`].
    #[serde(rename = "type", default, skip_serializing)]
    pub kind: Option<IgnoredAny>,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified_at: Option<String>,
    pub key: String,
    pub name: Localized,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub description: Localized,
    /// Derived from `name` and `key` when absent.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub slug: Localized,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub brand: String,
    /// A category on an earlier line; the product is in it and in each of
    /// its ancestors (`categoryIds` of the public JSON).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub category_id: String,
    /// active (default), inactive or discontinued.
    #[serde(default = "active", skip_serializing_if = "is_active")]
    pub status: String,
    #[serde(default, skip_serializing_if = "is_false")]
    pub featured: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub popularity: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaRecord>,
    /// At least one; the first is the master variant.
    pub variants: Vec<VariantRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VariantRecord {
    /// Unique within its product, 1 or more.
    pub id: u32,
    /// Unique in the catalog.
    pub sku: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub attributes: BTreeMap<String, String>,
    /// One per currency the shop sells in, in minor units.
    pub prices: Vec<PriceRecord>,
    #[serde(default)]
    pub availability: StockRecord,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub media: Vec<MediaRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PriceRecord {
    pub currency_code: String,
    /// Minor units (cents); whole numbers only.
    pub cent_amount: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StockRecord {
    /// Units on hand; `inStock` is derived from it.
    #[serde(default)]
    pub quantity: i64,
    /// Of those, units held by open checkouts. Written by an export (and
    /// the shared store's snapshots) so that holds survive them; a shop's
    /// own feed leaves it out.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub held: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MediaRecord {
    pub id: String,
    pub url: String,
    /// image (default) or video.
    #[serde(rename = "type", default = "image", skip_serializing_if = "is_image")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub alt: Localized,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub width: u32,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub height: u32,
    #[serde(default)]
    pub position: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CollectionRecord {
    /// The record's `type`, read before and written by [`Record`].
    #[serde(rename = "type", default, skip_serializing)]
    pub kind: Option<IgnoredAny>,
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified_at: Option<String>,
    pub key: String,
    pub name: Localized,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub description: Localized,
    /// Products on earlier lines, in the collection's order.
    #[serde(default)]
    pub product_ids: Vec<String>,
    #[serde(default)]
    pub position: u32,
}

fn active() -> String {
    "active".to_string()
}

fn is_active(s: &str) -> bool {
    s == "active"
}

fn image() -> String {
    "image".to_string()
}

fn is_image(s: &str) -> bool {
    s == "image"
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}
