//! A shopper's words into a tantivy query. The text is tokenized, never
//! parsed, so quotes, colons, brackets or AND typed by a shopper are just
//! characters. Every word must match (in a name, category, brand or
//! description), exactly (brands as spelled, the rest after stemming),
//! through a synonym (compared stemmed, so "trainers" is "trainer"), or,
//! when no product has the word: as the start of a name word when it is
//! the last ("linen sh"), and (in a name, category or brand) within its
//! typos, one typo scoring above two; exact over prefix over fuzzy. A
//! word as typed scores again where a name has it unstemmed, so that it
//! ranks above a name word only sharing its stem (`Schale` above `Schal`).

use tantivy::Term;
use tantivy::query::{BoostQuery, ConstScoreQuery, FuzzyTermQuery, TermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::tokenizer::TextAnalyzer;

use crate::index::{Fields, Indexed, LanguageFields};
use crate::synonyms::Synonyms;
use crate::vocabulary::Vocabulary;

mod terms;
mod union;
use terms::{Spelled, corrected, documents, exact_terms, fuzzy, known, started};
pub use terms::{Typos, completions};
use union::Union;
pub use union::{Built, Constant, Flat, Source};

/// Words of a query scored at most.
pub const MAX_WORDS: usize = 10;
/// Name words within its typos a word may stand for, at most.
const CORRECTIONS: usize = 8;
/// Name words a last word no product has may be the start of, at most
/// (the most used): a short prefix stays a bounded query.
const COMPLETIONS: usize = 8;
/// Letters a last word needs to be taken as the start of a name word:
/// one letter ("vitamin c") is more often a word of its own.
const PREFIX_LETTERS: usize = 2;
/// The weight of a word found in a name as typed, on top of its stem's:
/// the name's own weight.
const AS_TYPED: f32 = 3.0;

/// Typos forgiven (Damerau-Levenshtein: a transposition is one): none in
/// words under 4 letters, one up to 8, two beyond (issue 51: from 4
/// letters, as the best hosted engines forgive by default; only ever in a
/// word no product has, so `boot` is never also `boat`).
pub fn typos(word: &str) -> u8 {
    match word.chars().count() {
        0..=3 => 0,
        4..=8 => 1,
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
    /// Words folded as the stems are, unstemmed (`analyzer::FOLDED`).
    pub folded: TextAnalyzer,
}

impl Analyzers {
    pub fn new(indexed: &Indexed, lang: LanguageFields) -> tantivy::Result<Self> {
        let tokenizers = indexed.live.index.tokenizers();
        let get = |name: &str| {
            tokenizers
                .get(name)
                .ok_or_else(|| tantivy::TantivyError::InternalError(format!("no {name} tokenizer")))
        };
        Ok(Self {
            words: get("default")?,
            stem: indexed.live.index.tokenizer_for_field(lang.name)?,
            folded: get(crate::analyzer::FOLDED)?,
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

    /// `word` folded as names' words are indexed unstemmed.
    pub fn fold(&mut self, word: &str) -> String {
        tokens(&mut self.folded, word)
            .into_iter()
            .next()
            .unwrap_or_else(|| word.to_string())
    }
}

/// The words `text` is searched by: tokenized, without connectives, at
/// most `MAX_WORDS` (the gateway refuses longer queries; any other
/// caller's are cut, so a query's clauses stay bounded).
pub fn words(indexed: &Indexed, lang: LanguageFields, text: &str) -> tantivy::Result<Vec<String>> {
    let mut words = Analyzers::new(indexed, lang)?.query_words(text);
    words.truncate(MAX_WORDS);
    Ok(words)
}

/// (field, weight) of the fields searched, most telling first.
fn weighted(fields: &Fields, lang: LanguageFields) -> [(Field, f32); 4] {
    [
        (lang.name, 3.0),
        (fields.brand, 2.0),
        (lang.category, 1.5),
        (lang.description, 1.0),
    ]
}

/// About how many postings a search of `words` reads: a known word's
/// documents in every searched field; an unknown one's, those of the name
/// words within its typos (what its typo pass finds), in the three fields
/// typos are forgiven in, and when it is the last, those of the words it
/// starts in all four. Read from term dictionaries and the vocabulary,
/// before any posting.
pub fn postings(indexed: &Indexed, lang: LanguageFields, words: &[String]) -> tantivy::Result<u64> {
    let mut analyzers = Analyzers::new(indexed, lang)?;
    let vocabulary = &indexed.vocabularies[lang.slot];
    let mut total = 0u64;
    for (at, word) in words.iter().enumerate() {
        let stem = analyzers.stem(word);
        let spelled = Spelled { word, stem: &stem };
        let found = documents(indexed, lang, spelled);
        if found > 0 {
            total += found;
            continue;
        }
        total += vocabulary
            .within(word, usize::from(typos(word)), CORRECTIONS)
            .into_iter()
            .map(|(close, _)| u64::from(vocabulary.products(close)) * 3)
            .sum::<u64>();
        if at + 1 == words.len() {
            total += started(vocabulary, &mut analyzers, word)
                .into_iter()
                .map(|(completion, _)| u64::from(vocabulary.products(completion)) * 4)
                .sum::<u64>();
        }
    }
    Ok(total)
}

/// Whether any of `words` is one no product has: only those are searched
/// within typos.
pub fn any_unknown(
    indexed: &Indexed,
    lang: LanguageFields,
    words: &[String],
) -> tantivy::Result<bool> {
    let mut analyzers = Analyzers::new(indexed, lang)?;
    Ok(words.iter().any(|word| {
        let stem = analyzers.stem(word);
        !known(indexed, lang, Spelled { word, stem: &stem })
    }))
}

/// The query for `text`, or None when it has no searchable word.
pub fn build(
    indexed: &Indexed,
    lang: LanguageFields,
    synonyms: &Synonyms,
    text: &str,
    typos_allowed: Typos,
) -> tantivy::Result<Option<Built>> {
    let words = words(indexed, lang, text)?;
    build_words(indexed, lang, synonyms, &words, typos_allowed)
}

/// The query every one of `words` must match, or None without words.
/// Consecutive words that make a multi-word synonym entry ("running
/// shoes") match as they are or as any other entry of its groups.
pub fn build_words(
    indexed: &Indexed,
    lang: LanguageFields,
    synonyms: &Synonyms,
    words: &[String],
    typos_allowed: Typos,
) -> tantivy::Result<Option<Built>> {
    if words.is_empty() {
        return Ok(None);
    }
    let mut analyzers = Analyzers::new(indexed, lang)?;
    let stems: Vec<String> = words.iter().map(|w| analyzers.stem(w)).collect();
    let query = Clauses {
        indexed,
        lang,
        synonyms,
        typos_allowed,
    };
    let mut must: Vec<Union> = Vec::new();
    let mut at = 0;
    while at < words.len() {
        let (len, others) = synonyms
            .phrase_at(lang.slot, &stems[at..])
            .unwrap_or((1, Vec::new()));
        let mut each: Vec<Union> = (at..at + len)
            .map(|i| query.word(&mut analyzers, &words[i], &stems[i], i + 1 == words.len()))
            .collect();
        at += len;
        if others.is_empty() {
            must.append(&mut each);
            continue;
        }
        let mut any = Union::default();
        any.push_all(each);
        for entry in others {
            query.entry(entry, &mut any);
        }
        must.push(any);
    }
    let mut built = Built::of(must);
    built.pairs = stems
        .windows(2)
        .map(|two| Term::from_field_text(lang.pairs, &crate::analyzer::pair(&two[0], &two[1])))
        .collect();
    Ok(Some(built))
}

/// What a query's clauses are built from.
struct Clauses<'a> {
    indexed: &'a Indexed,
    lang: LanguageFields,
    synonyms: &'a Synonyms,
    typos_allowed: Typos,
}

impl Clauses<'_> {
    /// What one typed word (`stem` its stem) may match: itself, the name
    /// words it starts when it is the `last` and no product has it, within
    /// its typos where allowed, a name word it stands for, a synonym.
    fn word(&self, analyzers: &mut Analyzers, word: &str, stem: &str, last: bool) -> Union {
        let (indexed, lang, fields) = (self.indexed, self.lang, &self.indexed.fields);
        let spelled = Spelled { word, stem };
        let mut any = Union::default();
        any.terms.extend(exact_terms(fields, lang, spelled, 2.0));
        any.loose.extend(self.as_typed(analyzers, word, stem));
        // Asked only where it matters (four term lookups): the last word
        // may be a prefix, and a pass within typos forgives unknown words.
        let unknown =
            (last || self.typos_allowed == Typos::Forgiven) && !known(indexed, lang, spelled);
        let vocabulary = &indexed.vocabularies[lang.slot];
        if last && unknown {
            // Weighed between a word as typed and one within typos: exact
            // over prefix over fuzzy.
            for (word, stem) in started(vocabulary, analyzers, word) {
                any.terms.extend(exact_terms(
                    fields,
                    lang,
                    Spelled { word, stem: &stem },
                    1.0,
                ));
            }
        }
        let distance = match self.typos_allowed {
            Typos::Forgiven if unknown => typos(word),
            _ => 0,
        };
        // A word one typo away matches both clauses, two typos away the
        // second only: fewer typos rank first.
        for d in 1..=distance {
            let constants = fuzzy(fields, lang, spelled, d, 0.5 / f32::from(d));
            any.constants.extend(constants);
        }
        // Typos counted on the word as typed, not its stem: "ceramik" is
        // one from the name word "ceramic", whose stem "ceram" is two
        // from the stem "ceramik". Only where the stems are further apart
        // than the typos (the fuzzy clauses find the rest, and cheaper).
        let most = usize::from(distance);
        // None without typos: the words as typed scan no vocabulary.
        let corrections = match most {
            0 => Vec::new(),
            _ => vocabulary.within(word, most, CORRECTIONS),
        };
        for (close, d) in corrections {
            let close = analyzers.stem(close);
            if crate::vocabulary::distance(stem, &close, most).is_none() {
                let constants = corrected(fields, lang, &close, 0.5 / d as f32);
                any.constants.extend(constants);
            }
        }
        for entry in self.synonyms.of(lang.slot, stem) {
            self.entry(entry, &mut any);
        }
        any
    }

    /// The name word as typed (`word`, of stem `stem`), weighted, scoring
    /// where a match's name has it: never matched by (its documents are
    /// among its stem's). Only where it tells matches apart: some name
    /// has it, and some other name only a word sharing its stem.
    fn as_typed(&self, analyzers: &mut Analyzers, word: &str, stem: &str) -> Option<(Term, f32)> {
        let searcher = &self.indexed.searcher;
        let typed = Term::from_field_text(self.lang.words, &analyzers.fold(word));
        let spelled = searcher.doc_freq(&typed).unwrap_or(0);
        let stemmed = Term::from_field_text(self.lang.name, stem);
        let shared = searcher.doc_freq(&stemmed).unwrap_or(0);
        (spelled > 0 && spelled < shared).then_some((typed, AS_TYPED))
    }

    /// A synonym entry (stemmed words, one space between) into `any`: a
    /// word's field terms, or every word of it together ("t-shirt" -> t
    /// AND shirt) as one clause (`Union::push_all`).
    fn entry(&self, entry: &str, any: &mut Union) {
        let exact = |w| exact_terms(&self.indexed.fields, self.lang, Spelled::stemmed(w), 1.0);
        let words: Vec<&str> = entry.split(' ').filter(|w| !w.is_empty()).collect();
        match words.as_slice() {
            [] => {}
            [word] => any.terms.extend(exact(word)),
            _ => {
                let each = words
                    .into_iter()
                    .map(|w| Union::terms(exact(w).collect()))
                    .collect();
                any.push_all(each);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::typos;

    #[test]
    fn longer_words_forgive_more_typos() {
        let counts = [
            typos("tee"),
            typos("boot"),
            typos("shrit"),
            typos("sneakres"),
        ];
        assert_eq!(counts, [0, 1, 1, 1]);
        assert_eq!(typos("sneakeres"), 2);
    }
}
