//! The passes of one search: the words as typed; within typos only when
//! those find nothing (Typesense's default: "shirt" is not also "skirt",
//! and the common case scores no fuzzy clauses), and only the words no
//! product has; then, still nothing,
//! the words dropped from the right one at a time until something
//! matches, the answer naming what it left out; nothing even then: a
//! "did you mean" from the name words of the catalog. At most two passes
//! per word (`MAX_WORDS` of them).

use storefront_platform::error::ServiceError;
use storefront_proto::common::v1::ListQuery;
use storefront_proto::search::v1::{SearchRequest, SearchResponse};

use crate::index::{Indexed, LanguageFields};
use crate::search::{Matched, Plan};
use crate::synonyms::Synonyms;
use crate::text_query::{self, Typos};

fn internal(e: tantivy::TantivyError) -> ServiceError {
    ServiceError::internal(format!("search index: {e}"))
}

/// The words `req` is searched by (`text_query::words`).
pub fn words(indexed: &Indexed, req: &SearchRequest) -> Result<Vec<String>, ServiceError> {
    let lang = indexed.fields.for_locale(&req.locale);
    text_query::words(indexed, lang, &req.text).map_err(internal)
}

/// Answers `req`, whose words are `words`, from `indexed`.
pub fn answer(
    indexed: &Indexed,
    synonyms: &Synonyms,
    req: SearchRequest,
    words: Vec<String>,
    currency: usize,
) -> Result<SearchResponse, ServiceError> {
    let lang = indexed.fields.for_locale(&req.locale);
    // Taken, not cloned: the request is this search's alone.
    let list = req.query.unwrap_or_default();
    let plan = Plan::new(indexed, &list, currency)?.compressed(req.compressed);
    let mut kept = words.len();
    let matched = loop {
        let matched = matches(indexed, synonyms, lang, &plan, &words[..kept])?;
        if matched.total > 0 || kept <= 1 {
            break matched;
        }
        kept -= 1;
    };
    let found = matched.total > 0;
    let mut reply = plan.answer(matched)?;
    if found {
        reply.dropped_words = words[kept..].to_vec();
    } else {
        reply.did_you_mean = suggestion(indexed, lang, &words, &list);
    }
    Ok(reply)
}

/// About how many postings answering `req` by `words` reads
/// (`text_query::postings`).
pub fn postings(
    indexed: &Indexed,
    req: &SearchRequest,
    words: &[String],
) -> Result<u64, ServiceError> {
    let lang = indexed.fields.for_locale(&req.locale);
    text_query::postings(indexed, lang, words).map_err(internal)
}

/// `words` as typed, then within typos if that found nothing.
fn matches(
    indexed: &Indexed,
    synonyms: &Synonyms,
    lang: LanguageFields,
    plan: &Plan<'_>,
    words: &[String],
) -> Result<Matched, ServiceError> {
    let exact =
        text_query::build_words(indexed, lang, synonyms, words, Typos::Exact).map_err(internal)?;
    let matched = plan.run(exact.as_ref())?;
    // Known words found nothing together: none is a typo to forgive.
    if matched.total > 0 || !text_query::any_unknown(indexed, lang, words).map_err(internal)? {
        return Ok(matched);
    }
    let forgiven = text_query::build_words(indexed, lang, synonyms, words, Typos::Forgiven)
        .map_err(internal)?;
    plan.run(forgiven.as_ref())
}

/// The query with each word no name has replaced by the closest name
/// word (one typo for words under 5 letters, two beyond), or empty when
/// none is close. Not offered under filters: they, not the words, may be
/// what found nothing.
fn suggestion(
    indexed: &Indexed,
    lang: LanguageFields,
    words: &[String],
    list: &ListQuery,
) -> String {
    if !list.filters.is_empty() {
        return String::new();
    }
    let vocabulary = &indexed.vocabularies[lang.slot];
    let mut changed = false;
    let suggested: Vec<&str> = words
        .iter()
        .map(|word| {
            if vocabulary.has(word) {
                return word.as_str();
            }
            let max = if word.chars().count() < 5 { 1 } else { 2 };
            match vocabulary.closest(word, max) {
                Some(close) => {
                    changed = true;
                    close
                }
                None => word.as_str(),
            }
        })
        .collect();
    if changed {
        suggested.join(" ")
    } else {
        String::new()
    }
}
