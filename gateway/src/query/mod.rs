//! The collection query language (paging, `sort`, filters), parsed once for every
//! collection endpoint: `limit`/`offset`, repeated `sort=field:dir`, the
//! endpoint's explicit filters and `filter[field]` / `filter[field[op]]`.
//! Each endpoint declares its fields in one [`spec::CollectionSpec`].

mod endpoint;
mod filter;
mod page;
pub mod schema;
mod sort;
pub use storefront_domain::query::vocabulary as spec;

use std::borrow::Cow;
use storefront_proto::error::codes;

use axum::http::StatusCode;
use storefront_proto::common::v1::{Filter, ListQuery, PageRequest};

use crate::error::ApiError;
pub use endpoint::{
    Addresses, Categories, Collections, Listing, Orders, Products, Search, SubCollection,
};
pub use filter::timestamp;
pub use spec::CollectionSpec;

/// A parsed and validated collection query, ready for the proto message.
/// Parameters the endpoint reads itself (`currency`, `query`) and unknown
/// ones are left to it: the contract ignores unknown parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedQuery {
    pub list: ListQuery,
}

/// `limit` of an internal feed: 1 to 100.
pub fn feed_limit(value: &str) -> Result<u32, ApiError> {
    value
        .parse::<u32>()
        .ok()
        .filter(|l| (1..=100).contains(l))
        .ok_or_else(|| {
            let message = "limit must be between 1 and 100".to_string();
            invalid_parameter("limit", codes::OUT_OF_RANGE, message)
        })
}

pub fn invalid_parameter(field: &str, code: &str, message: String) -> ApiError {
    ApiError::new(
        StatusCode::BAD_REQUEST,
        codes::INVALID_QUERY_PARAMETER,
        message.clone(),
    )
    .field(field, code, message)
}

/// Parses a raw query string against an endpoint's spec.
pub fn parse(raw: Option<&str>, spec: &CollectionSpec) -> Result<ParsedQuery, ApiError> {
    let pairs: Vec<(Cow<'_, str>, Cow<'_, str>)> =
        form_urlencoded::parse(raw.unwrap_or_default().as_bytes()).collect();
    let mut page = page::Page::default();
    let mut sorts = Vec::new();
    let mut filters: Vec<Filter> = Vec::new();
    let mut structured = Vec::new();
    for (key, value) in &pairs {
        match key.as_ref() {
            "limit" => page.limit = Some(value.as_ref()),
            "offset" => page.offset = Some(value.as_ref()),
            "sort" => sorts.push(value.as_ref()),
            k if k.starts_with("filter[") => structured.push((k, value.as_ref())),
            k => {
                if let Some(explicit) = spec.explicit.iter().find(|e| e.param == k) {
                    filters.push(filter::explicit(explicit, value)?);
                }
            }
        }
    }
    let (limit, offset) = page.validate()?;
    let sort = sort::parse(&sorts, spec)?;
    filter::check_count(structured.len())?;
    for (key, value) in structured {
        filters.push(filter::structured(key, value, spec)?);
    }
    let list = ListQuery {
        page: Some(PageRequest { limit, offset }),
        sort,
        filters,
    };
    Ok(ParsedQuery { list })
}

#[cfg(test)]
mod tests;
