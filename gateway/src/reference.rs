//! The API reference at `/docs`: Redoc rendering the served OpenAPI
//! document, its standalone bundle built into the binary
//! (`assets/redoc`, from the npm package) so that nothing comes from a
//! CDN; the internal port has its own page over its own document. In
//! local and development `/` leads to it (a browser opening the API's
//! root meets the reference, not a 400).

use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};

use crate::state::AppState;

const REDOC: &[u8] = include_bytes!("../assets/redoc/redoc.standalone.js");
/// The bundle's one fetch from elsewhere, its footer logo's: made an
/// empty image (Redoc then hides it).
const LOGO: &[u8] = b"https://cdn.redoc.ly/redoc/logo-mini.svg";

/// The bundle as served: Redoc's, its logo fetching nothing.
fn bundle() -> &'static bytes::Bytes {
    static BUNDLE: std::sync::OnceLock<bytes::Bytes> = std::sync::OnceLock::new();
    BUNDLE.get_or_init(|| {
        let mut out = Vec::with_capacity(REDOC.len());
        let mut rest = REDOC;
        while let Some(at) = rest.windows(LOGO.len()).position(|w| w == LOGO) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(b"data:,");
            rest = &rest[at + LOGO.len()..];
        }
        out.extend_from_slice(rest);
        bytes::Bytes::from(out)
    })
}
/// Changes with the bundle (its length and a digest of its bytes).
const REDOC_TAG: &str = concat!("\"redoc-2.5.4-", env!("CARGO_PKG_VERSION"), "\"");
pub const SCRIPT: &str = "/docs/redoc.standalone.js";
/// Only this origin: the page, its script, the document; Redoc's own
/// styles inline, its search in a blob worker, its logo not fetched.
const POLICY: &str = "default-src 'none'; script-src 'self' 'unsafe-eval'; worker-src blob:; \
     style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; \
     connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page around the reference: `body` before Redoc's script, `then`
/// after it.
fn page(title: &str, body: &str, then: &str) -> Response {
    let html = format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <link rel=\"icon\" href=\"data:,\">\n<title>{title}</title>\n</head>\n<body>\n\
         {body}\n<script src=\"{SCRIPT}\"></script>\n{then}</body>\n</html>\n"
    );
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CONTENT_SECURITY_POLICY, POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        html,
    )
        .into_response()
}

/// The API reference.
#[utoipa::path(get, path = "/docs", tag = "Health",
    responses((status = 200, description = "The API reference: this document rendered by Redoc (served from this binary, nothing from a CDN)", content_type = "text/html")))]
pub async fn public_page() -> Response {
    let redoc = "<redoc spec-url=\"/openapi.json\" expand-responses=\"200,201\"></redoc>";
    page("Storefront BFF API", redoc, "")
}

/// The internal port's reference: its document needs a caller's
/// identity token, which the page asks for (`assets/reference`).
pub async fn internal_page() -> Response {
    let form = "<form id=\"token-form\" style=\"font-family: sans-serif; margin: 2em\">\
        <h1>Storefront BFF: internal port</h1>\
        <p>The document is for the callers <code>INTERNAL_CALLERS</code> names. Locally: \
        <code>storefront token fulfilment@storefront.iam.gserviceaccount.com</code>.</p>\
        <label>Identity token <input id=\"token\" name=\"token\" size=\"60\" autocomplete=\"off\"></label> \
        <button type=\"submit\">Read the reference</button></form>\
        <p id=\"status\" style=\"font-family: sans-serif; margin: 0 2em\"></p><div id=\"reference\"></div>";
    let then = format!("<script src=\"{INTERNAL_SCRIPT}\"></script>\n");
    page("Storefront BFF internal port", form, &then)
}

const INTERNAL_JS: &str = include_str!("../assets/reference/internal.js");
pub const INTERNAL_SCRIPT: &str = "/docs/internal.js";

/// The internal page's script.
pub async fn internal_script() -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    (headers, INTERNAL_JS).into_response()
}

/// Redoc's standalone bundle, cached by the browser and revalidated by
/// its tag.
#[utoipa::path(get, path = "/docs/redoc.standalone.js", tag = "Health",
    responses(
        (status = 200, description = "Redoc's standalone bundle (npm redoc 2.5.4, MIT)", content_type = "text/javascript"),
        (status = 304, description = "Not modified (If-None-Match)"),
    ))]
pub async fn script(headers: HeaderMap) -> Response {
    let tag = HeaderValue::from_static(REDOC_TAG);
    let cached = [
        (header::ETAG, tag.clone()),
        (
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=86400"),
        ),
    ];
    if headers.get(header::IF_NONE_MATCH) == Some(&tag) {
        return (StatusCode::NOT_MODIFIED, cached).into_response();
    }
    let typed = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/javascript; charset=utf-8"),
        ),
        (
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ),
    ];
    (cached, typed, bundle().clone()).into_response()
}

/// `/` in local and development: the reference.
#[utoipa::path(get, path = "/", tag = "Health",
    responses(
        (status = 307, description = "To /docs, in local and development (APP_ENV)", headers(("Location" = String, description = "/docs"))),
        (status = 404, description = "NOT_FOUND in production and staging", body = crate::error::ErrorBody),
    ))]
pub async fn root(State(state): State<AppState>) -> Response {
    if state.local_pages {
        return Redirect::temporary("/docs").into_response();
    }
    crate::error::ApiError::not_found("no resource here").into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_served_bundle_fetches_no_logo_from_a_cdn() {
        let served = bundle();
        assert!(!served.windows(LOGO.len()).any(|w| w == LOGO));
        assert_eq!(served.len(), REDOC.len() - LOGO.len() + b"data:,".len());
    }
}
