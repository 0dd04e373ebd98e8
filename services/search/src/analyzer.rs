//! How text becomes terms, for the index and for queries alike: words
//! split on anything not alphanumeric, words over 40 bytes dropped,
//! lower-cased, accents folded (`café` is `cafe`, `Häuser` `hauser`, as
//! German's stemmer would fold the umlaut anyway), then stemmed (English
//! or German Snowball, as tantivy's own `en_stem`). Stems are cached per analyzer: a catalog's text repeats a
//! small vocabulary, and stemming was an eighth of building the index.
//! Names are also indexed folded but unstemmed (`FOLDED`), so that a word
//! as typed outranks another that only shares its stem.

use std::borrow::Cow;

use tantivy::tokenizer::{
    AsciiFoldingFilter, LowerCaser, RemoveLongFilter, SimpleTokenizer, TextAnalyzer,
    TextAnalyzerBuilder, Token, TokenFilter, TokenStream, Tokenizer,
};

mod pairs;
use pairs::Pairs;
pub use pairs::pair;

/// Analyzer names, as fields refer to them.
pub const ENGLISH: &str = "english";
pub const GERMAN: &str = "german";
/// The pairs of stemmed words of a name (`pairs`), per language.
pub const ENGLISH_PAIRS: &str = "english_pairs";
pub const GERMAN_PAIRS: &str = "german_pairs";
/// Words split, lower-cased and folded as the stemming analyzers do, not
/// stemmed: names as spelled (`Schale` is not `Schal`, whose German stem
/// it shares).
pub const FOLDED: &str = "folded";

/// Words cached by one analyzer at most; the cache starts over beyond it.
const MAX_CACHED: usize = 100_000;

/// The analyzers by name, in `LanguageFields::slot` order.
const LANGUAGES: [(&str, frostem::Algorithm); 2] = [
    (ENGLISH, frostem::Algorithm::English),
    (GERMAN, frostem::Algorithm::German),
];

/// Words of language `slot` (0 English, 1 German) split, folded and
/// stemmed, as every stemmed field and query has them.
fn stemmed(slot: usize) -> TextAnalyzerBuilder<impl Tokenizer> {
    let (_, algorithm) = LANGUAGES[slot.min(LANGUAGES.len() - 1)];
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .filter(CachedStemmer(algorithm))
}

/// The stemming analyzer of language `slot`.
pub fn stemming(slot: usize) -> TextAnalyzer {
    stemmed(slot).build()
}

/// Words split and folded as `stemmed` does, unstemmed.
fn folded() -> TextAnalyzer {
    TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(AsciiFoldingFilter)
        .build()
}

pub fn register(index: &tantivy::Index) {
    index.tokenizers().register(FOLDED, folded());
    for (slot, (name, _)) in LANGUAGES.iter().enumerate() {
        index.tokenizers().register(name, stemming(slot));
    }
    for (slot, name) in [ENGLISH_PAIRS, GERMAN_PAIRS].into_iter().enumerate() {
        index
            .tokenizers()
            .register(name, stemmed(slot).filter(Pairs).build());
    }
}

/// A Snowball stemmer remembering the stems it has made.
#[derive(Clone, Copy)]
pub struct CachedStemmer(frostem::Algorithm);

impl TokenFilter for CachedStemmer {
    type Tokenizer<T: Tokenizer> = CachedStemmerFilter<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> CachedStemmerFilter<T> {
        CachedStemmerFilter {
            stemmer: frostem::Stemmer::new(self.0),
            stems: foldhash::HashMap::default(),
            inner,
        }
    }
}

#[derive(Clone)]
pub struct CachedStemmerFilter<T> {
    stemmer: frostem::Stemmer,
    stems: foldhash::HashMap<String, String>,
    inner: T,
}

impl<T: Tokenizer> Tokenizer for CachedStemmerFilter<T> {
    type TokenStream<'a> = CachedStemmerStream<'a, T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        if self.stems.len() > MAX_CACHED {
            self.stems.clear();
        }
        CachedStemmerStream {
            tail: self.inner.token_stream(text),
            stemmer: &self.stemmer,
            stems: &mut self.stems,
        }
    }
}

pub struct CachedStemmerStream<'a, T> {
    tail: T,
    stemmer: &'a frostem::Stemmer,
    stems: &'a mut foldhash::HashMap<String, String>,
}

impl<T: TokenStream> TokenStream for CachedStemmerStream<'_, T> {
    fn advance(&mut self) -> bool {
        if !self.tail.advance() {
            return false;
        }
        let token = self.tail.token_mut();
        if let Some(stem) = self.stems.get(token.text.as_str()) {
            token.text.clear();
            token.text.push_str(stem);
        } else {
            let stem = match self.stemmer.stem(&token.text) {
                Cow::Borrowed(same) => same.to_string(),
                Cow::Owned(stem) => stem,
            };
            let word = std::mem::replace(&mut token.text, stem.clone());
            self.stems.insert(word, stem);
        }
        true
    }

    fn token(&self) -> &Token {
        self.tail.token()
    }

    fn token_mut(&mut self) -> &mut Token {
        self.tail.token_mut()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn terms(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
        let mut stream = analyzer.token_stream(text);
        let mut out = Vec::new();
        while stream.advance() {
            out.push(stream.token().text.clone());
        }
        out
    }

    #[test]
    fn stems_as_tantivy_s_own_analyzers_do_and_the_cache_changes_nothing() {
        let index = tantivy::Index::create_in_ram(tantivy::schema::Schema::builder().build());
        register(&index);
        let mut ours = index.tokenizers().get(ENGLISH).unwrap();
        let mut theirs = index.tokenizers().get("en_stem").unwrap();
        let text = "Running shoes, SHIRTS and Dresses: the relaxed-fit linens! \
                    Pneumonoultramicroscopicsilicovolcanoconiosis-and-more-letters-than-forty x";
        let expected = terms(&mut theirs, text);
        assert_eq!(terms(&mut ours, text), expected);
        // Again, every word now from the cache.
        assert_eq!(terms(&mut ours, text), expected);
        let mut german = index.tokenizers().get(GERMAN).unwrap();
        assert_eq!(
            terms(&mut german, "Klassische Baumwollhemden und Häuser"),
            ["klassisch", "baumwollhemd", "und", "haus"]
        );
        // Accents folded, in both languages.
        assert_eq!(
            terms(&mut ours, "Café CRÈME"),
            terms(&mut ours, "cafe creme")
        );
        assert_eq!(terms(&mut ours, "Café CRÈME"), ["cafe", "creme"]);
        assert_eq!(terms(&mut german, "Crème Hauser"), ["crem", "haus"]);
        // Name pairs are of the same stems.
        let mut pairs = index.tokenizers().get(ENGLISH_PAIRS).unwrap();
        assert_eq!(terms(&mut pairs, "Linen SHIRTS"), ["linen shirt"]);
        let mut pairs = index.tokenizers().get(GERMAN_PAIRS).unwrap();
        assert_eq!(terms(&mut pairs, "Häuser und"), ["haus und"]);
        // Folded as the stems are, but whole.
        let mut folded = index.tokenizers().get(FOLDED).unwrap();
        assert_eq!(
            terms(&mut folded, "Keramik-Schale CAFÉ"),
            ["keramik", "schale", "cafe"]
        );
        assert_eq!(terms(&mut german, "Schale Schal"), ["schal", "schal"]);
    }
}
