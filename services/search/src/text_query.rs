//! A shopper's words into a tantivy query. The text is tokenized, never
//! parsed, so quotes, colons, brackets or AND typed by a shopper are just
//! characters. Every word must match (in a name, category, brand or
//! description), exactly after stemming, through a synonym, or (in a
//! name, category or brand) within a typo or two.

use tantivy::Term;
use tantivy::query::{BooleanQuery, BoostQuery, FuzzyTermQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::tokenizer::TextAnalyzer;

use crate::index::{Fields, Indexed, LanguageFields};

/// Words of a query scored at most.
pub const MAX_WORDS: usize = 10;

/// Typos forgiven: none in words under 4 letters, one up to 6, two beyond.
pub fn typos(word: &str) -> u8 {
    match word.chars().count() {
        0..=3 => 0,
        4..=6 => 1,
        _ => 2,
    }
}

fn tokens(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "or", "not", "the", "of", "for", "with", "in", "to", "und", "oder", "mit",
    "für", "der", "die", "das",
];

pub struct Analyzers {
    /// Lower-cased words, unstemmed.
    pub words: TextAnalyzer,
    pub stem: TextAnalyzer,
}

impl Analyzers {
    pub fn new(indexed: &Indexed, lang: LanguageFields) -> tantivy::Result<Self> {
        Ok(Self {
            words: indexed
                .live
                .index
                .tokenizers()
                .get("default")
                .ok_or_else(|| {
                    tantivy::TantivyError::InternalError("no default tokenizer".into())
                })?,
            stem: indexed.live.index.tokenizer_for_field(lang.name)?,
        })
    }

    pub fn words(&mut self, text: &str) -> Vec<String> {
        tokens(&mut self.words, text)
    }

    /// The words a query must match: without connectives a shopper may
    /// type ("and", "with", "für"), unless nothing else is left.
    pub fn query_words(&mut self, text: &str) -> Vec<String> {
        let words = self.words(text);
        let content: Vec<String> = words
            .iter()
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .cloned()
            .collect();
        if content.is_empty() { words } else { content }
    }

    pub fn stem(&mut self, word: &str) -> String {
        tokens(&mut self.stem, word)
            .into_iter()
            .next()
            .unwrap_or_else(|| word.to_string())
    }
}

/// (field, weight) of the stemmed fields searched, most telling first.
fn weighted(fields: &Fields, lang: LanguageFields) -> [(tantivy::schema::Field, f32); 4] {
    [
        (lang.name, 3.0),
        (fields.brand, 2.0),
        (lang.category, 1.5),
        (lang.description, 1.0),
    ]
}

fn exact(fields: &Fields, lang: LanguageFields, stem: &str, boost: f32) -> Box<dyn Query> {
    let clauses: Vec<(Occur, Box<dyn Query>)> = weighted(fields, lang)
        .into_iter()
        .map(|(field, w)| {
            let term = TermQuery::new(
                Term::from_field_text(field, stem),
                IndexRecordOption::WithFreqs,
            );
            (
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(term), w * boost)) as Box<dyn Query>,
            )
        })
        .collect();
    Box::new(BooleanQuery::new(clauses))
}

/// Typos are forgiven in names, brands and categories, not descriptions:
/// a description repeats its product's name, and its large vocabulary
/// makes a fuzzy match there the costliest part of a search.
fn fuzzy(fields: &Fields, lang: LanguageFields, stem: &str, distance: u8) -> Box<dyn Query> {
    let clauses: Vec<(Occur, Box<dyn Query>)> = weighted(fields, lang)
        .into_iter()
        .filter(|&(field, _)| field != lang.description)
        .map(|(field, w)| {
            let term = FuzzyTermQuery::new(Term::from_field_text(field, stem), distance, true);
            (
                Occur::Should,
                Box::new(BoostQuery::new(Box::new(term), w * 0.5)) as Box<dyn Query>,
            )
        })
        .collect();
    Box::new(BooleanQuery::new(clauses))
}

/// Whether words may match within typos.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Typos {
    Exact,
    Forgiven,
}

/// The query for `text`, or None when it has no searchable word.
pub fn build(
    indexed: &Indexed,
    lang: LanguageFields,
    synonyms: &[Vec<String>],
    text: &str,
    typos_allowed: Typos,
) -> tantivy::Result<Option<Box<dyn Query>>> {
    let mut analyzers = Analyzers::new(indexed, lang)?;
    let mut words = analyzers.query_words(text);
    // The gateway refuses longer queries; any other caller's are cut, so a
    // query's clauses stay bounded.
    words.truncate(MAX_WORDS);
    if words.is_empty() {
        return Ok(None);
    }
    let fields = &indexed.fields;
    let mut must: Vec<(Occur, Box<dyn Query>)> = Vec::new();
    for word in &words {
        let stem = analyzers.stem(word);
        let mut any: Vec<(Occur, Box<dyn Query>)> =
            vec![(Occur::Should, exact(fields, lang, &stem, 2.0))];
        let distance = match typos_allowed {
            Typos::Exact => 0,
            Typos::Forgiven => typos(word),
        };
        if distance > 0 {
            any.push((Occur::Should, fuzzy(fields, lang, &stem, distance)));
        }
        for phrase in synonyms
            .iter()
            .filter(|g| g.iter().any(|w| w == word))
            .flatten()
            .filter(|w| *w != word)
        {
            // Every word of the synonym, e.g. "t-shirt" -> t AND shirt.
            let parts: Vec<(Occur, Box<dyn Query>)> = analyzers
                .words(phrase)
                .iter()
                .map(|w| (Occur::Must, exact(fields, lang, &analyzers.stem(w), 1.0)))
                .collect();
            if !parts.is_empty() {
                any.push((Occur::Should, Box::new(BooleanQuery::new(parts))));
            }
        }
        must.push((Occur::Must, Box::new(BooleanQuery::new(any))));
    }
    Ok(Some(Box::new(BooleanQuery::new(must))))
}

#[cfg(test)]
mod tests {
    use super::typos;

    #[test]
    fn longer_words_forgive_more_typos() {
        assert_eq!((typos("tee"), typos("shrit"), typos("sneakres")), (0, 1, 2));
    }
}
