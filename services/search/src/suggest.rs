//! Completions of the word being typed, from the index's own vocabulary,
//! and the products they lead to: cheap enough for every keystroke.

use std::collections::HashMap;

use storefront_common::error::ServiceError;
use storefront_proto::encoded::Products;
use tantivy::Term;
use tantivy::query::{BooleanQuery, FuzzyTermQuery, Occur, Query};

use crate::index::{Indexed, LanguageFields};
use crate::search::{encoded, top_hits};
use crate::text_query::{self, Analyzers, Typos};

/// Words of the index starting with `prefix`, most frequent first.
fn completions(
    indexed: &Indexed,
    lang: LanguageFields,
    prefix: &str,
    limit: usize,
) -> tantivy::Result<Vec<String>> {
    let searcher = indexed.reader.searcher();
    let mut freq: HashMap<String, u64> = HashMap::new();
    for segment in searcher.segment_readers() {
        let inverted = segment.inverted_index(lang.raw_name)?;
        let mut stream = inverted
            .terms()
            .range()
            .ge(prefix.as_bytes())
            .into_stream()?;
        while stream.advance() {
            let Ok(word) = std::str::from_utf8(stream.key()) else {
                continue;
            };
            if !word.starts_with(prefix) {
                break;
            }
            *freq.entry(word.to_string()).or_default() += u64::from(stream.value().doc_freq);
        }
    }
    let mut words: Vec<(String, u64)> = freq.into_iter().collect();
    words.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok(words.into_iter().take(limit).map(|(w, _)| w).collect())
}

pub fn suggest(
    indexed: &Indexed,
    lang: LanguageFields,
    synonyms: &[Vec<String>],
    text: &str,
    limit: usize,
    currency: usize,
) -> Result<(Vec<String>, Products), ServiceError> {
    let internal = |e: tantivy::TantivyError| ServiceError::internal(format!("search index: {e}"));
    let mut analyzers = Analyzers::new(indexed, lang).map_err(internal)?;
    let words = analyzers.words(text);
    let Some((last, before)) = words.split_last() else {
        return Ok((Vec::new(), Products::default()));
    };
    let head = before.join(" ");
    let completions: Vec<String> = completions(indexed, lang, last, limit)
        .map_err(internal)?
        .into_iter()
        .map(|w| {
            if head.is_empty() {
                w
            } else {
                format!("{head} {w}")
            }
        })
        .collect();
    // Earlier words as in a search, the last one as a prefix of a name word.
    let prefix: Box<dyn Query> = Box::new(FuzzyTermQuery::new_prefix(
        Term::from_field_text(lang.raw_name, last),
        0,
        false,
    ));
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, prefix)];
    if let Some(earlier) =
        text_query::build(indexed, lang, synonyms, &head, Typos::Forgiven).map_err(internal)?
    {
        clauses.push((Occur::Must, earlier));
    }
    let query = BooleanQuery::new(clauses);
    let rows = top_hits(indexed, &query, limit).map_err(internal)?;
    Ok((completions, encoded(indexed, rows.into_iter(), currency)?))
}
