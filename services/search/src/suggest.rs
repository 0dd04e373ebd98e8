//! Completions of the word being typed, from the name words of the
//! catalog, and the products they lead to: cheap enough for every
//! keystroke.

use storefront_platform::error::ServiceError;
use storefront_proto::encoded::Products;
use tantivy::Term;
use tantivy::query::{BooleanQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

use crate::index::{Indexed, LanguageFields};
use crate::search::{encoded, top_hits};
use crate::synonyms::Synonyms;
use crate::text_query::{self, Analyzers, Typos};

/// Name words with the typed prefix whose products a suggestion lists:
/// the most used ones, so a one-letter prefix stays a bounded query.
const PREFIX_WORDS: usize = 64;

pub fn suggest(
    indexed: &Indexed,
    lang: LanguageFields,
    synonyms: &Synonyms,
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
    let vocabulary = &indexed.vocabularies[lang.slot];
    let completions: Vec<String> = vocabulary
        .complete(last, limit)
        .into_iter()
        .map(|w| {
            if head.is_empty() {
                w.to_string()
            } else {
                format!("{head} {w}")
            }
        })
        .collect();
    // Earlier words as in a search; the last one as the prefix of a name
    // word: any of those words (stemmed, as names are indexed), all
    // scoring alike so that popularity orders them.
    let stems: Vec<String> =
        text_query::completions(vocabulary, &mut analyzers, last, PREFIX_WORDS)
            .into_iter()
            .map(|(_, stem)| stem)
            .collect();
    if stems.is_empty() {
        return Ok((completions, Products::default()));
    }
    let any: Vec<(Occur, Box<dyn Query>)> = stems
        .iter()
        .map(|stem| {
            let term = TermQuery::new(
                Term::from_field_text(lang.name, stem),
                IndexRecordOption::Basic,
            );
            (Occur::Should, Box::new(term) as Box<dyn Query>)
        })
        .collect();
    let prefix: Box<dyn Query> =
        Box::new(ConstScoreQuery::new(Box::new(BooleanQuery::new(any)), 1.0));
    let mut clauses: Vec<(Occur, Box<dyn Query>)> = vec![(Occur::Must, prefix)];
    if let Some(earlier) =
        text_query::build(indexed, lang, synonyms, &head, Typos::Forgiven).map_err(internal)?
    {
        clauses.push((Occur::Must, earlier.query));
    }
    let query = BooleanQuery::new(clauses);
    let rows = top_hits(indexed, &query, limit).map_err(internal)?;
    // Never a product without a price in the currency asked (one the
    // markets added before the shop priced everything in it).
    let prices = indexed.listing.column("price", currency)?;
    let priced = rows.into_iter().filter(|&row| prices.value(row).is_some());
    Ok((completions, encoded(indexed, priced, currency)?))
}
