//! Full-text search and suggestions (public).

use std::collections::HashMap;

use axum::extract::{RawQuery, State};
use storefront_proto::search::v1::{SearchRequest, SuggestRequest};
use utoipa::IntoParams;

use super::single_param;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::search::{Facets, SearchResult, Suggestions};
use crate::query::{self, invalid_parameter, spec};
use crate::state::AppState;
use crate::transcode::{self, JsonBytes};

pub const MAX_QUERY_CHARS: usize = 200;
/// Words a search may have: each is several clauses to score.
pub const MAX_QUERY_WORDS: usize = 10;
/// A query as documented (the `query` parameters' pattern, which must be
/// a literal there): no control characters, and 1 to `MAX_QUERY_WORDS`
/// words separated by white space (which may also lead and trail).
#[cfg(test)]
const QUERY_PATTERN: &str = r"^[^\S\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F]+(?:[^\S\u0000-\u001F\u007F-\u009F]+[^\s\u0000-\u001F\u007F-\u009F]+){0,9}[^\S\u0000-\u001F\u007F-\u009F]*$";
const DEFAULT_SUGGESTIONS: u32 = 8;
const MAX_SUGGESTIONS: u32 = 20;

/// Query parameters of `GET /search`; every parameter of `GET /products` applies too.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, rename_all = "camelCase")]
#[allow(dead_code)]
pub struct SearchParams {
    /// The shopper's words, 1 to 200 characters and at most 10 words separated by white space: stemmed, with synonyms, forgiving one typo in
    /// words of 4-6 letters and two in longer ones. Nothing in it is query syntax.
    #[param(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\S\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F]+(?:[^\S\u0000-\u001F\u007F-\u009F]+[^\s\u0000-\u001F\u007F-\u009F]+){0,9}[^\S\u0000-\u001F\u007F-\u009F]*$"
    )]
    query: String,
    /// xx-XX, default en-AU: which localised fields are searched (de-* searches German).
    #[param(pattern = "^[a-z]{2}-[A-Z]{2}$")]
    locale: Option<String>,
    /// AUD (default) or NZD.
    #[param(pattern = "^(AUD|NZD)$")]
    currency: Option<String>,
    #[param(minimum = 1, maximum = 100, default = 20)]
    limit: Option<u32>,
    #[param(minimum = 0, default = 0)]
    offset: Option<u64>,
    /// As for /products; without it, results are by relevance, then popularity, then id.
    sort: Option<Vec<String>>,
    /// As for /products.
    #[param(style = DeepObject, explode)]
    filter: Option<HashMap<String, String>>,
}

/// The validated `query` text (400 INVALID_QUERY_PARAMETER otherwise).
pub fn text(raw: Option<&str>) -> Result<String, ApiError> {
    let text = single_param(raw, "query").unwrap_or_default();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(invalid_parameter(
            "query",
            "REQUIRED",
            "query must have at least one character".into(),
        ));
    }
    if trimmed.chars().count() > MAX_QUERY_CHARS {
        return Err(invalid_parameter(
            "query",
            "OUT_OF_RANGE",
            format!("query has more than {MAX_QUERY_CHARS} characters"),
        ));
    }
    // Words as the document's pattern counts them, so that a client can
    // check; the search service also cuts what its analyser splits further.
    let words = trimmed.split_whitespace().count();
    if words > MAX_QUERY_WORDS {
        return Err(invalid_parameter(
            "query",
            "OUT_OF_RANGE",
            format!("query has more than {MAX_QUERY_WORDS} words"),
        ));
    }
    if trimmed.chars().any(char::is_control) {
        return Err(invalid_parameter(
            "query",
            "INVALID_FORMAT",
            "query contains control characters".into(),
        ));
    }
    Ok(trimmed.to_string())
}

/// The validated `locale` (default en-AU).
pub fn locale(raw: Option<&str>) -> Result<String, ApiError> {
    let Some(locale) = single_param(raw, "locale") else {
        return Ok(storefront_proto::names::DEFAULT_LOCALE.into());
    };
    let b = locale.as_bytes();
    let ok = b.len() == 5
        && b[..2].iter().all(u8::is_ascii_lowercase)
        && b[2] == b'-'
        && b[3..].iter().all(u8::is_ascii_uppercase);
    if !ok {
        return Err(invalid_parameter(
            "locale",
            "INVALID_FORMAT",
            "locale must match ^[a-z]{2}-[A-Z]{2}$, e.g. en-AU".into(),
        ));
    }
    Ok(locale)
}

/// Searches products.
#[utoipa::path(get, path = "/search", tag = "Search", params(SearchParams),
    responses(
        (status = 200, description = "A page of product hits with facets", body = SearchResult),
        (status = 400, description = "INVALID_QUERY_PARAMETER (query empty, over 200 characters or 10 words, or with control characters; bad locale, limit...), INVALID_SORT_FIELD or INVALID_FILTER", body = ErrorBody),
    ))]
pub async fn search(
    State(state): State<AppState>,
    correlation: CallContext,
    RawQuery(raw): RawQuery,
) -> Result<JsonBytes, ApiError> {
    let raw = raw.as_deref();
    let text = text(raw)?;
    let locale = locale(raw)?;
    let parsed = query::parse(raw, &spec::PRODUCTS)?;
    let currency_code = parsed.param("currency").unwrap_or_default().to_string();
    let message = SearchRequest {
        text,
        locale,
        currency_code,
        query: Some(parsed.list),
    };
    let reply = state
        .downstreams
        .search()
        .search(&correlation, message)
        .await?;
    let facets = Facets::from(reply.facets.unwrap_or_default());
    transcode::search(reply.page, &reply.products, &facets)
}

#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct SuggestParams {
    /// What has been typed so far, 1 to 200 characters and at most 10 words separated by white space.
    #[param(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\S\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F]+(?:[^\S\u0000-\u001F\u007F-\u009F]+[^\s\u0000-\u001F\u007F-\u009F]+){0,9}[^\S\u0000-\u001F\u007F-\u009F]*$"
    )]
    query: String,
    /// 1 to 20, default 8.
    #[param(minimum = 1, maximum = 20, default = 8)]
    limit: Option<u32>,
    #[param(pattern = "^[a-z]{2}-[A-Z]{2}$")]
    locale: Option<String>,
    #[param(pattern = "^(AUD|NZD)$")]
    currency: Option<String>,
}

/// Completions and matching products for a partial query.
#[utoipa::path(get, path = "/search/suggestions", tag = "Search", params(SuggestParams),
    responses(
        (status = 200, description = "Completions and the top matching products", body = Suggestions),
        (status = 400, description = "INVALID_QUERY_PARAMETER", body = ErrorBody),
    ))]
pub async fn suggestions(
    State(state): State<AppState>,
    correlation: CallContext,
    RawQuery(raw): RawQuery,
) -> Result<JsonBytes, ApiError> {
    let raw = raw.as_deref();
    let text = text(raw)?;
    let locale = locale(raw)?;
    let limit = match single_param(raw, "limit") {
        None => DEFAULT_SUGGESTIONS,
        Some(l) => l
            .parse::<u32>()
            .ok()
            .filter(|l| (1..=MAX_SUGGESTIONS).contains(l))
            .ok_or_else(|| {
                invalid_parameter(
                    "limit",
                    "OUT_OF_RANGE",
                    format!("limit must be between 1 and {MAX_SUGGESTIONS}"),
                )
            })?,
    };
    let currency_code = single_param(raw, "currency").unwrap_or_default();
    let message = SuggestRequest {
        text,
        locale,
        limit,
        currency_code,
    };
    let reply = state
        .downstreams
        .search()
        .suggest(&correlation, message)
        .await?;
    transcode::suggestions(&reply.completions, &reply.products)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_pattern_allows_the_enforced_word_count() {
        let repeats = format!("{{0,{}}}", MAX_QUERY_WORDS - 1);
        assert!(QUERY_PATTERN.contains(&repeats), "{QUERY_PATTERN}");
        let search = <SearchParams as IntoParams>::into_params(|| None);
        let suggest = <SuggestParams as IntoParams>::into_params(|| None);
        for params in [search, suggest] {
            let query = params.iter().find(|p| p.name == "query").unwrap();
            let json = serde_json::to_value(query).unwrap();
            assert_eq!(json["schema"]["pattern"], QUERY_PATTERN);
        }
        let words = |n: usize| format!("query={}", vec!["shirt"; n].join("%20"));
        assert!(text(Some(&words(MAX_QUERY_WORDS))).is_ok());
        assert!(text(Some(&words(MAX_QUERY_WORDS + 1))).is_err());
        assert!(text(Some("query=a-b-c-d-e-f-g-h-i-j-k-l")).is_ok());
    }
}
