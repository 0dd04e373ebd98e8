//! Money, localised text, resource metadata and the paged envelope.

use std::collections::BTreeMap;

use serde::Serialize;
use storefront_proto::Timestamp;
use storefront_proto::common::v1 as pb;
use utoipa::ToSchema;

use crate::Invalid;

/// A value per IETF language tag (`en-AU`).
pub type LocalizedString = BTreeMap<String, String>;

pub fn localized(ls: Option<pb::LocalizedString>) -> LocalizedString {
    ls.map(|l| l.values).unwrap_or_default()
}

/// Money in minor units of its currency (cents).
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Money {
    /// Always `centPrecision`.
    #[serde(rename = "type")]
    #[schema(example = "centPrecision")]
    pub kind: &'static str,
    /// ISO 4217.
    #[schema(example = "AUD")]
    pub currency_code: String,
    #[schema(example = 4995)]
    pub cent_amount: i64,
    #[schema(example = 2)]
    pub fraction_digits: u32,
}

impl From<pb::Money> for Money {
    fn from(m: pb::Money) -> Self {
        Self {
            kind: "centPrecision",
            currency_code: m.currency_code,
            cent_amount: m.cent_amount,
            fraction_digits: m.fraction_digits,
        }
    }
}

/// An RFC 3339 UTC timestamp with a trailing `Z`.
pub fn timestamp(ts: Option<Timestamp>) -> String {
    ts.map(|t| t.to_string()).unwrap_or_default()
}

/// The fields every resource carries: its id, version and timestamps.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Meta {
    /// Opaque identifier.
    pub id: String,
    pub version: i64,
    #[schema(example = "2025-03-01T09:30:00Z")]
    pub created_at: String,
    #[schema(example = "2025-03-02T10:00:00Z")]
    pub last_modified_at: String,
}

impl Meta {
    pub fn from_proto(meta: Option<pb::ResourceMeta>) -> Result<Self, Invalid> {
        let m = meta.ok_or_else(|| Invalid::new("resource without meta"))?;
        Ok(Self {
            id: m.id,
            version: m.version,
            created_at: timestamp(m.created_at),
            last_modified_at: timestamp(m.last_modified_at),
        })
    }
}

/// The paged envelope of every collection.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Paged<T: ToSchema> {
    /// The limit applied.
    pub limit: u32,
    /// The offset applied.
    pub offset: u64,
    /// Results in this response.
    pub count: u32,
    /// Results across all pages.
    pub total: u64,
    pub results: Vec<T>,
}

impl<T: ToSchema> Paged<T> {
    pub fn new(page: Option<pb::PageInfo>, results: Vec<T>) -> Result<Self, Invalid> {
        let page = page.ok_or_else(|| Invalid::new("list reply without page info"))?;
        if page.count as usize != results.len() {
            return Err(Invalid::new("page count does not match results"));
        }
        Ok(Self {
            limit: page.limit,
            offset: page.offset,
            count: page.count,
            total: page.total,
            results,
        })
    }
}
