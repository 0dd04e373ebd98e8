//! The shop's own promotions: a JSON document `{"promotions": [...]}`,
//! each promotion in the public JSON of `GET /promotions` (docs/catalog-live.md,
//! "The shop's promotions"), read from `PROMOTIONS_FILE` at start or set whole
//! on the internal port (`PUT /internal/promotions`), checked field by
//! field, and kept in the shared store so that every cart replica prices
//! with the same set (each looks for a new one every second).

use std::collections::{BTreeMap, HashSet};
use std::str::FromStr;
use std::sync::{Arc, RwLock};
use storefront_proto::error::codes;

use serde::Deserialize;
use storefront_domain::currencies::{Code, fraction_digits};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::Store;
use storefront_proto::Timestamp;
use storefront_proto::cart::v1::{Promotion, PromotionKind};
use storefront_proto::common::v1::{LocalizedString, Money};
use storefront_proto::names::MAX_ID_CHARS;

use crate::promotions::Catalogue;
use storefront_platform::shared_document::SharedDocument;

/// Where the set is kept for every replica.
const KEY: &str = "promotions:set";
/// Promotions a set may hold.
pub const MAX_PROMOTIONS: usize = 1_000;
/// Products and categories one promotion may name: each priced line is
/// looked up in them.
const MAX_SCOPE: usize = 1_000;
/// Locales of a name, and characters of each.
const MAX_LOCALES: usize = 20;
const MAX_NAME_CHARS: usize = 200;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Document {
    promotions: Vec<Record>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Record {
    id: String,
    key: String,
    #[serde(default)]
    name: BTreeMap<String, String>,
    codes: Vec<String>,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    basis_points: Option<u32>,
    #[serde(default)]
    amounts: Vec<Amount>,
    #[serde(default)]
    minimum_subtotals: Vec<Amount>,
    #[serde(default)]
    category_ids: Vec<String>,
    #[serde(default)]
    product_ids: Vec<String>,
    #[serde(default)]
    starts_at: Option<String>,
    #[serde(default)]
    ends_at: Option<String>,
    #[serde(default)]
    stackable: bool,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Amount {
    currency_code: String,
    cent_amount: i64,
    #[serde(default, rename = "type")]
    _kind: Option<serde::de::IgnoredAny>,
    #[serde(default, rename = "fractionDigits")]
    _fraction_digits: Option<serde::de::IgnoredAny>,
}

fn refused(violations: Vec<FieldViolation>) -> ServiceError {
    let mut e = ServiceError::new(
        ErrorKind::Validation,
        codes::VALIDATION_ERROR,
        "the promotions are refused; none changed",
    );
    e.violations = violations;
    e
}

fn bad(field: String, message: &str) -> FieldViolation {
    FieldViolation::new(field, codes::INVALID_VALUE, message)
}

fn amounts(field: &str, given: &[Amount], out: &mut Vec<FieldViolation>) -> Vec<Money> {
    let mut seen = HashSet::new();
    for (i, a) in given.iter().enumerate() {
        if Code::parse(&a.currency_code).is_none() {
            out.push(bad(
                format!("{field}[{i}].currencyCode"),
                "an ISO 4217 code of three capital letters",
            ));
        } else if !seen.insert(a.currency_code.as_str()) {
            out.push(bad(
                format!("{field}[{i}].currencyCode"),
                "a second amount in this currency",
            ));
        }
        if a.cent_amount <= 0 {
            out.push(bad(
                format!("{field}[{i}].centAmount"),
                "must be more than 0",
            ));
        }
    }
    given
        .iter()
        .map(|a| Money {
            currency_code: a.currency_code.clone(),
            cent_amount: a.cent_amount,
            fraction_digits: fraction_digits(&a.currency_code),
        })
        .collect()
}

fn timestamp(
    field: String,
    value: Option<&str>,
    out: &mut Vec<FieldViolation>,
) -> Option<Timestamp> {
    let value = value?;
    match Timestamp::from_str(value) {
        Ok(t) => Some(t),
        Err(_) => {
            out.push(bad(field, "not an RFC 3339 timestamp"));
            None
        }
    }
}

fn promotion(
    at: usize,
    r: Record,
    codes: &mut HashSet<String>,
    out: &mut Vec<FieldViolation>,
) -> Promotion {
    let field = |name: &str| format!("promotions[{at}].{name}");
    for (name, value) in [("id", &r.id), ("key", &r.key)] {
        if value.is_empty() || value.chars().count() > MAX_ID_CHARS {
            out.push(bad(field(name), "must be 1 to 128 characters"));
        }
    }
    if r.name.len() > MAX_LOCALES
        || r.name.iter().any(|(locale, text)| {
            locale.len() > 35
                || text.chars().count() > MAX_NAME_CHARS
                || text.chars().any(char::is_control)
        })
    {
        out.push(bad(
            field("name"),
            "at most 20 locales of 200 characters of text each",
        ));
    }
    for (name, ids) in [
        ("categoryIds", &r.category_ids),
        ("productIds", &r.product_ids),
    ] {
        if ids.len() > MAX_SCOPE
            || ids
                .iter()
                .any(|id| id.is_empty() || id.chars().count() > MAX_ID_CHARS)
        {
            out.push(bad(field(name), "at most 1000 ids of 1 to 128 characters"));
        }
    }
    if r.codes.is_empty() {
        out.push(bad(field("codes"), "needs at least one code"));
    }
    for (i, code) in r.codes.iter().enumerate() {
        if !storefront_proto::names::is_discount_code(code) {
            out.push(bad(
                format!("{}[{i}]", field("codes")),
                "must be 1 to 64 ASCII letters, digits, '-', '_' or '.'",
            ));
        } else if !codes.insert(code.to_ascii_uppercase()) {
            out.push(bad(
                format!("{}[{i}]", field("codes")),
                "another promotion has this code",
            ));
        }
    }
    let kind = match r.kind.as_str() {
        "percentage" => {
            if !r.basis_points.is_some_and(|b| (1..=10_000).contains(&b)) {
                out.push(bad(
                    field("basisPoints"),
                    "1 to 10000 for a percentage (1000 = 10%)",
                ));
            }
            PromotionKind::Percentage
        }
        "fixedAmount" => {
            if r.amounts.is_empty() {
                out.push(bad(
                    field("amounts"),
                    "a fixed amount needs its amount per currency",
                ));
            }
            PromotionKind::FixedAmount
        }
        _ => {
            out.push(bad(field("type"), "must be percentage or fixedAmount"));
            PromotionKind::Percentage
        }
    };
    let amounts_ = amounts(&field("amounts"), &r.amounts, out);
    let minimums = amounts(&field("minimumSubtotals"), &r.minimum_subtotals, out);
    let starts_at = timestamp(field("startsAt"), r.starts_at.as_deref(), out);
    let ends_at = timestamp(field("endsAt"), r.ends_at.as_deref(), out);
    if let (Some(s), Some(e)) = (starts_at, ends_at)
        && (e.seconds, e.nanos) <= (s.seconds, s.nanos)
    {
        out.push(bad(field("endsAt"), "must be after startsAt"));
    }
    Promotion {
        id: r.id,
        key: r.key,
        name: Some(LocalizedString { values: r.name }),
        codes: r.codes,
        kind: kind as i32,
        basis_points: if kind == PromotionKind::Percentage {
            r.basis_points.unwrap_or_default()
        } else {
            0
        },
        amounts: amounts_,
        minimum_subtotals: minimums,
        category_ids: r.category_ids,
        product_ids: r.product_ids,
        starts_at,
        ends_at,
        stackable: r.stackable,
    }
}

/// Reads and checks a set: every problem as a field violation.
pub fn parse(json: &[u8]) -> Result<Vec<Promotion>, ServiceError> {
    let mut de = serde_json::Deserializer::from_slice(json);
    let document: Document = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." {
            "body".to_string()
        } else {
            path
        };
        refused(vec![bad(field, "is missing, of the wrong type or unknown")])
    })?;
    if document.promotions.len() > MAX_PROMOTIONS {
        return Err(refused(vec![bad(
            "promotions".into(),
            "at most 1000 promotions",
        )]));
    }
    let mut out = Vec::new();
    let mut codes = HashSet::new();
    let set: Vec<Promotion> = document
        .promotions
        .into_iter()
        .enumerate()
        .map(|(i, r)| promotion(i, r, &mut codes, &mut out))
        .collect();
    if out.is_empty() {
        Ok(set)
    } else {
        Err(refused(out))
    }
}

/// Where the set is kept for every replica.
const DOCUMENT: SharedDocument = SharedDocument {
    key: KEY,
    what: "promotions",
};

/// Keeps `json` (already checked) as the set every replica prices with.
pub async fn store(store: &Store, json: &[u8]) -> Result<(), ServiceError> {
    DOCUMENT.store(store, json).await
}

/// The set in the shared store, with its store version, if one was set.
pub async fn stored(store: &Store) -> Result<Option<(u64, Vec<Promotion>)>, ServiceError> {
    DOCUMENT.stored(store, parse).await
}

/// Takes up each new set another replica stored, every second.
pub async fn follow(
    store: Store,
    promotions: Arc<RwLock<Catalogue>>,
    seen: u64,
    shutdown: tokio_util::sync::CancellationToken,
) {
    let take = move |_, set| {
        *promotions.write().unwrap_or_else(|p| p.into_inner()) = Catalogue::new(set);
    };
    DOCUMENT.follow(store, seen, parse, take, shutdown).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(json: &str) -> Vec<String> {
        let refused = parse(json.as_bytes()).expect_err("refused");
        refused.violations.into_iter().map(|v| v.field).collect()
    }

    #[test]
    fn a_set_is_checked_field_by_field() {
        let good = r#"{"promotions":[{"id":"p","key":"k","codes":["A"],"type":"percentage","basisPoints":500,
            "minimumSubtotals":[{"currencyCode":"AUD","centAmount":1000,"fractionDigits":2}]}]}"#;
        let set = parse(good.as_bytes()).unwrap();
        assert_eq!((set.len(), set[0].basis_points), (1, 500));
        assert_eq!(fields(r#"{"promotions":[{"id":"p"}]}"#), ["promotions[0]"]);
        assert_eq!(fields(r#"{"promos":[]}"#), ["promos"]);
        assert_eq!(
            fields(
                r#"{"promotions":[{"id":"","key":"k","codes":["a"],"type":"percentage","basisPoints":0},
                {"id":"q","key":"k","codes":["A"],"type":"bogus","startsAt":"2030-01-01T00:00:00Z","endsAt":"2029-01-01T00:00:00Z"}]}"#
            ),
            [
                "promotions[0].id",
                "promotions[0].basisPoints",
                "promotions[1].codes[0]",
                "promotions[1].type",
                "promotions[1].endsAt"
            ]
        );
    }

    #[tokio::test]
    async fn a_stored_set_is_the_one_read_back() {
        let shared = Store::memory();
        assert!(stored(&shared).await.unwrap().is_none());
        let json = br#"{"promotions":[{"id":"p","key":"k","codes":["A"],"type":"fixedAmount","amounts":[{"currencyCode":"NZD","centAmount":300}]}]}"#;
        store(&shared, json).await.unwrap();
        store(&shared, json).await.unwrap();
        let (version, set) = stored(&shared).await.unwrap().unwrap();
        assert!(version > 0);
        assert_eq!(set[0].amounts[0].cent_amount, 300);
    }
}
