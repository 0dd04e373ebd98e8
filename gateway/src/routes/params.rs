//! The plain query parameters of the endpoints that are not (only)
//! collections (`query`, `locale`, `currency`, a suggestion `limit`), each
//! an extractor that validates it and documents it from one declaration.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use storefront_proto::names::DEFAULT_LOCALE;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::query::invalid_parameter;

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

/// The value of a single query parameter (the last, when repeated: the
/// raw-request check has refused repeats already).
fn single_param(raw: Option<&str>, name: &str) -> Option<String> {
    form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
        .last()
}

/// Implements the extractor for a one-field parameter struct from the
/// function that reads and validates the raw query.
macro_rules! extract_with {
    ($name:ident, $read:expr) => {
        impl<S: Send + Sync> FromRequestParts<S> for $name {
            type Rejection = ApiError;

            async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
                $read(parts.uri.query()).map(Self)
            }
        }
    };
}

/// The requested currency; empty for the shop's default.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, names("currency"))]
pub struct Currency(
    /// One of the shop's currencies (`GET /markets`; default: the first, AUD
    /// in the demo): the currency of prices, and of price filters and sorts.
    #[param(required = false, pattern = "^[A-Z]{3}$")]
    pub String,
);
extract_with!(Currency, |raw| Ok::<_, ApiError>(
    single_param(raw, "currency").unwrap_or_default()
));

/// The requested locale, validated (default en-AU).
#[derive(IntoParams)]
#[into_params(parameter_in = Query, names("locale"))]
pub struct Locale(
    /// xx-XX, default en-AU: the language of localised text. Search reads the fields of that language (de-* searches German); content falls back along the locale's chain (en-NZ -> en-AU) and names the locale served in `locale` and Content-Language.
    #[param(required = false, pattern = "^[a-z]{2}-[A-Z]{2}$", default = "en-AU")]
    pub String,
);
extract_with!(Locale, locale);

/// One locale's strings in place of every locale's.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, names("localeProjection"))]
pub struct LocaleProjection(
    /// xx-XX: each localised field (name, description, slug, media `alt`) carries only the string a reader of this locale is shown, still as an object by locale: the locale's own, else another of its language, else the shop's default (en-AU), else the first there is. Absent: every locale's.
    #[param(required = false, pattern = "^[a-z]{2}-[A-Z]{2}$")]
    pub Option<String>,
);
extract_with!(LocaleProjection, |raw| {
    match single_param(raw, "localeProjection") {
        None => Ok(None),
        Some(value) => checked_locale(value, "localeProjection").map(Some),
    }
});

/// The shopper's search words, trimmed and validated.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, names("query"))]
pub struct SearchText(
    /// The shopper's words (for suggestions, what has been typed so far), 1 to 200 characters and at most 10 words separated by white space: stemmed, with synonyms; typos are forgiven (none under 4 letters, one up to 8, two beyond) only in words no product has, and only when the words as typed find nothing. Nothing in it is query syntax.
    #[param(
        min_length = 1,
        max_length = 200,
        pattern = r"^[^\S\u0000-\u001F\u007F-\u009F]*[^\s\u0000-\u001F\u007F-\u009F]+(?:[^\S\u0000-\u001F\u007F-\u009F]+[^\s\u0000-\u001F\u007F-\u009F]+){0,9}[^\S\u0000-\u001F\u007F-\u009F]*$"
    )]
    pub String,
);
extract_with!(SearchText, text);

/// How many suggestions to answer.
#[derive(IntoParams)]
#[into_params(parameter_in = Query, names("limit"))]
pub struct SuggestLimit(
    /// Completions and products to answer, 1 to 20 (default 8).
    #[param(required = false, minimum = 1, maximum = 20, default = 8)]
    pub u32,
);
extract_with!(SuggestLimit, suggest_limit);

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
        return Ok(DEFAULT_LOCALE.into());
    };
    checked_locale(locale, "locale")
}

/// `locale` if it is of the form xx-XX; else 400 naming `param`.
fn checked_locale(locale: String, param: &str) -> Result<String, ApiError> {
    let b = locale.as_bytes();
    let ok = b.len() == 5
        && b[..2].iter().all(u8::is_ascii_lowercase)
        && b[2] == b'-'
        && b[3..].iter().all(u8::is_ascii_uppercase);
    if !ok {
        return Err(invalid_parameter(
            param,
            "INVALID_FORMAT",
            format!("{param} must match ^[a-z]{{2}}-[A-Z]{{2}}$, e.g. en-AU"),
        ));
    }
    Ok(locale)
}

fn suggest_limit(raw: Option<&str>) -> Result<u32, ApiError> {
    let Some(limit) = single_param(raw, "limit") else {
        return Ok(DEFAULT_SUGGESTIONS);
    };
    limit
        .parse::<u32>()
        .ok()
        .filter(|l| (1..=MAX_SUGGESTIONS).contains(l))
        .ok_or_else(|| {
            invalid_parameter(
                "limit",
                "OUT_OF_RANGE",
                format!("limit must be between 1 and {MAX_SUGGESTIONS}"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_documented_pattern_allows_the_enforced_word_count() {
        let repeats = format!("{{0,{}}}", MAX_QUERY_WORDS - 1);
        assert!(QUERY_PATTERN.contains(&repeats), "{QUERY_PATTERN}");
        let params = <SearchText as IntoParams>::into_params(|| None);
        let query = params.iter().find(|p| p.name == "query").unwrap();
        let json = serde_json::to_value(query).unwrap();
        assert_eq!(json["schema"]["pattern"], QUERY_PATTERN);
        assert_eq!(json["required"], true);
        let words = |n: usize| format!("query={}", vec!["shirt"; n].join("%20"));
        assert!(text(Some(&words(MAX_QUERY_WORDS))).is_ok());
        assert!(text(Some(&words(MAX_QUERY_WORDS + 1))).is_err());
        assert!(text(Some("query=a-b-c-d-e-f-g-h-i-j-k-l")).is_ok());
    }

    #[test]
    fn each_parameter_is_documented_under_its_query_name() {
        let names: Vec<String> = [
            <Currency as IntoParams>::into_params(|| None),
            <Locale as IntoParams>::into_params(|| None),
            <SuggestLimit as IntoParams>::into_params(|| None),
        ]
        .into_iter()
        .flatten()
        .map(|p| p.name)
        .collect();
        assert_eq!(names, ["currency", "locale", "limit"]);
    }
}
