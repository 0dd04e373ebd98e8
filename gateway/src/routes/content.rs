//! CMS content (public): footer, pages, banners, by `locale` with fallback.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use storefront_proto::content::v1::{GetPageRequest, LocalizedRequest};

use super::params::Locale;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::model::content::{Banners, Document};
use crate::state::AppState;

fn with_language<T: serde::Serialize>(served: &str, body: &T) -> Response {
    let mut response = Json(body).into_response();
    if let Ok(value) = HeaderValue::from_str(served) {
        response
            .headers_mut()
            .insert(header::CONTENT_LANGUAGE, value);
    }
    response
}

/// The site footer.
#[utoipa::path(get, path = "/content/footer", tag = "Content", params(Locale),
    responses(
        (status = 200, description = "The footer, with Content-Language", body = Document),
        (status = 400, description = "INVALID_QUERY_PARAMETER: locale", body = ErrorBody),
        (status = 404, description = "No locale of the chain has it", body = ErrorBody),
    ))]
pub async fn footer(
    State(state): State<AppState>,
    correlation: CallContext,
    Locale(locale): Locale,
) -> Result<Response, ApiError> {
    let reply = state
        .downstreams
        .content()
        .get_footer(&correlation, LocalizedRequest { locale });
    let document = Document::from(reply.await?);
    Ok(with_language(&document.locale, &document))
}

/// A content page.
#[utoipa::path(get, path = "/content/pages/{slug}", tag = "Content",
    params(("slug" = String, Path, description = "The page, e.g. about, shipping, returns"), Locale),
    responses(
        (status = 200, description = "The page, with Content-Language", body = Document),
        (status = 400, description = "INVALID_QUERY_PARAMETER: locale", body = ErrorBody),
        (status = 404, description = "No such page in any locale of the chain", body = ErrorBody),
    ))]
pub async fn page(
    State(state): State<AppState>,
    correlation: CallContext,
    Path(slug): Path<String>,
    Locale(locale): Locale,
) -> Result<Response, ApiError> {
    let reply = state
        .downstreams
        .content()
        .get_page(&correlation, GetPageRequest { slug, locale });
    let document = Document::from(reply.await?);
    Ok(with_language(&document.locale, &document))
}

/// The banners inside their schedule now.
#[utoipa::path(get, path = "/content/banners", tag = "Content", params(Locale),
    responses(
        (status = 200, description = "Banners in position order, with Content-Language", body = Banners),
        (status = 400, description = "INVALID_QUERY_PARAMETER: locale", body = ErrorBody),
    ))]
pub async fn banners(
    State(state): State<AppState>,
    correlation: CallContext,
    Locale(locale): Locale,
) -> Result<Response, ApiError> {
    let reply = state
        .downstreams
        .content()
        .list_banners(&correlation, LocalizedRequest { locale });
    let banners = Banners::from(reply.await?);
    Ok(with_language(&banners.locale, &banners))
}
