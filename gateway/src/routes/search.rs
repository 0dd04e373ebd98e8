//! Full-text search and suggestions (public).

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use storefront_proto::error::codes;
use storefront_proto::search::v1::{SearchRequest, SuggestRequest};

use super::params::{Currency, Locale, LocaleProjection, SearchText, SuggestLimit};
use crate::downstream::summaries::Source;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::search::{Facets, SearchResult, Suggestions};
use crate::query::{Listing, Search};
use crate::state::AppState;
use crate::transcode::{self, JsonBytes};

/// Searches products.
#[utoipa::path(get, path = "/search", tag = "Search", params(SearchText, Locale, Currency, Listing<Search>, LocaleProjection),
    responses(
        (status = 200, description = "A page of product hits with facets (brand, category, price, stock, and per variant attribute: how many hits have each value in some variant). Ranked by relevance unless sorted: more of the query's words matched, fewer typos (Damerau-Levenshtein: a transposition is one; none in words under 4 letters, at most one under 9, two beyond; forgiven only in words no product has, when the words as typed find nothing), then how many pairs of consecutive query words stand within one word of each other, in order, in the name, then the field matched (name, brand, category, description), a word as typed above a name word only sharing its stem (`schale` ranks Schale above Schal), then exact over prefix (a last word no product has, two letters or more, matches as the start of a name word: `linen sh`) over fuzzy, then popularity. Synonyms apply to stemmed words. A query that matches nothing whole drops its last words until something matches (`droppedWords`); nothing even then is still 200 with an empty page, and `didYouMean` when a close spelling exists.", body = SearchResult),
        (status = 400, description = "INVALID_QUERY_PARAMETER (query empty, over 200 characters or 10 words, or with control characters; bad locale, limit...), INVALID_SORT_FIELD or INVALID_FILTER", body = ErrorBody),
    ))]
pub async fn search(
    State(state): State<AppState>,
    correlation: CallContext,
    SearchText(text): SearchText,
    Locale(locale): Locale,
    Currency(currency_code): Currency,
    Listing(parsed, _): Listing<Search>,
    LocaleProjection(projection): LocaleProjection,
) -> Result<JsonBytes, ApiError> {
    let (downstreams, ctx) = (&state.downstreams, &correlation);
    let ask = |compressed| {
        let message = SearchRequest {
            text: text.clone(),
            locale: locale.clone(),
            currency_code: currency_code.clone(),
            query: Some(parsed.list.clone()),
            compressed,
        };
        async move { downstreams.search().search(ctx, message).await }
    };
    // As listings (`products::list_products`).
    let compressed = state.product_json.holds();
    let asked = (Source::Search, compressed);
    let mut answer = state.summaries.ask(downstreams, ctx, asked, ask).await?;
    let facets = Facets::from(answer.reply.facets.take().unwrap_or_default());
    let compressed = answer.compressed();
    let reply = &answer.reply;
    let relaxed = (reply.dropped_words.as_slice(), reply.did_you_mean.as_str());
    transcode::search(
        reply.page,
        &reply.products,
        compressed,
        &facets,
        relaxed,
        projection.as_deref(),
        &state.product_json,
    )
}

/// Completions and matching products for a partial query.
#[utoipa::path(get, path = "/search/suggestions", tag = "Search", params(SearchText, SuggestLimit, Locale, Currency, LocaleProjection),
    responses(
        (status = 200, description = "Completions and the top matching products", body = Suggestions),
        (status = 400, description = codes::INVALID_QUERY_PARAMETER, body = ErrorBody),
    ))]
pub async fn suggestions(
    State(state): State<AppState>,
    correlation: CallContext,
    SearchText(text): SearchText,
    SuggestLimit(limit): SuggestLimit,
    Locale(locale): Locale,
    Currency(currency_code): Currency,
    LocaleProjection(projection): LocaleProjection,
) -> Result<Response, ApiError> {
    // Every part of the request, each bounded by its parameter's checks.
    let projected = projection.as_deref().unwrap_or_default();
    let key = format!("{text}\0{locale}\0{currency_code}\0{limit}\0{projected}");
    if let Some(json) = state.suggestions.get(&key) {
        return Ok(json_response(json));
    }
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
    let json = transcode::suggestions(
        &reply.completions,
        &reply.products,
        projection.as_deref(),
        &state.product_json,
    )?;
    let json = Bytes::from(json.into_bytes());
    state.suggestions.put(&key, json.clone());
    Ok(json_response(json))
}

fn json_response(json: Bytes) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], json).into_response()
}
