//! A query word's terms: as each field spells it, exactly, within typos,
//! corrected to a name word, or completed; and whether the catalog has it.

use super::*;

/// A query word as each field holds it: brands are indexed unstemmed
/// (the brand "Tasman Threads" holds "threads", whose stem is "thread"),
/// every other field stemmed.
#[derive(Clone, Copy)]
pub(super) struct Spelled<'a> {
    pub(super) word: &'a str,
    pub(super) stem: &'a str,
}

impl<'a> Spelled<'a> {
    /// A word already stemmed (a synonym's, a name word's): the stem in
    /// every field.
    pub(super) fn stemmed(stem: &'a str) -> Self {
        Self { word: stem, stem }
    }

    pub(super) fn term(self, fields: &Fields, field: Field) -> Term {
        let text = if field == fields.brand {
            self.word
        } else {
            self.stem
        };
        Term::from_field_text(field, text)
    }
}

/// `word` in each searched field, with its weight times `boost`.
pub(super) fn exact_terms(
    fields: &Fields,
    lang: LanguageFields,
    word: Spelled<'_>,
    boost: f32,
) -> impl Iterator<Item = (Term, f32)> {
    weighted(fields, lang)
        .into_iter()
        .map(move |(field, w)| (word.term(fields, field), w * boost))
}

/// Typos are forgiven in names, brands and categories, not descriptions:
/// a description repeats its product's name, and its large vocabulary
/// makes a fuzzy match there the costliest part of a search. Each field
/// a clause scoring its weight times `boost` where it matches.
pub(super) fn fuzzy(
    fields: &Fields,
    lang: LanguageFields,
    word: Spelled<'_>,
    distance: u8,
    boost: f32,
) -> impl Iterator<Item = Constant> {
    weighted(fields, lang)
        .into_iter()
        .filter(move |&(field, _)| field != lang.description)
        .map(move |(field, w)| {
            let spelled = word.term(fields, field);
            let term = FuzzyTermQuery::new(spelled.clone(), distance, true);
            Constant {
                query: Box::new(BoostQuery::new(Box::new(term), w * boost)),
                source: Source::Within(spelled, distance),
                score: w * boost,
            }
        })
}

/// A name word a typed word stands for (`stem` its stem), where typos
/// are forgiven (not descriptions), scored as a fuzzy match of that many
/// typos is.
pub(super) fn corrected<'a>(
    fields: &'a Fields,
    lang: LanguageFields,
    stem: &'a str,
    boost: f32,
) -> impl Iterator<Item = Constant> + 'a {
    weighted(fields, lang)
        .into_iter()
        .filter(move |&(field, _)| field != lang.description)
        .map(move |(field, w)| {
            let spelled = Spelled::stemmed(stem).term(fields, field);
            let term = TermQuery::new(spelled.clone(), IndexRecordOption::Basic);
            Constant {
                query: Box::new(ConstScoreQuery::new(Box::new(term), w * boost)),
                source: Source::Term(spelled),
                score: w * boost,
            }
        })
}

/// The `limit` name words starting with `prefix` that the most products
/// have (`Vocabulary::complete`), each once by its stem, with it: what a
/// last word being typed may stand for, in a search and a suggestion.
pub fn completions<'v>(
    vocabulary: &'v Vocabulary,
    analyzers: &mut Analyzers,
    prefix: &str,
    limit: usize,
) -> Vec<(&'v str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for completion in vocabulary.complete(prefix, limit) {
        let stem = analyzers.stem(completion);
        if !out.iter().any(|(_, s)| *s == stem) {
            out.push((completion, stem));
        }
    }
    out
}

/// The name words a search's last word may be the start of (none under
/// `PREFIX_LETTERS`).
pub(super) fn started<'v>(
    vocabulary: &'v Vocabulary,
    analyzers: &mut Analyzers,
    word: &str,
) -> Vec<(&'v str, String)> {
    if word.chars().count() < PREFIX_LETTERS {
        return Vec::new();
    }
    completions(vocabulary, analyzers, word, COMPLETIONS)
}

/// Whether words may match within typos.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Typos {
    Exact,
    /// On words no product has (`known`): a word the catalog has is taken
    /// as meant ("shirt" is not "short" even where no shirt is), and a
    /// query of known words that found nothing costs no fuzzy pass.
    Forgiven,
}

/// The documents having `word` in each searched field, together (deleted
/// ones too, until their segment is merged: a word of a product just
/// removed is still taken as meant).
pub(super) fn documents(indexed: &Indexed, lang: LanguageFields, word: Spelled<'_>) -> u64 {
    weighted(&indexed.fields, lang)
        .into_iter()
        .map(|(field, _)| {
            let term = word.term(&indexed.fields, field);
            indexed.searcher.doc_freq(&term).unwrap_or(0)
        })
        .sum()
}

/// Whether some document has `word` in a searched field.
pub(super) fn known(indexed: &Indexed, lang: LanguageFields, word: Spelled<'_>) -> bool {
    documents(indexed, lang, word) > 0
}
