//! Word pairs of a name as terms of their own: each word with the next
//! and with the one after ("linen summer shirt" holds "linen summer",
//! "linen shirt" and "summer shirt"), stemmed, a space between. Whether
//! two query words stand within one word of each other, in order, is then
//! one term's postings (`search::near`), no positions read: the shingles
//! search engines rank proximity with.

use tantivy::tokenizer::{Token, TokenFilter, TokenStream, Tokenizer};

/// Makes pairs of the words of the stream it wraps.
#[derive(Clone, Copy)]
pub struct Pairs;

/// The term of words `a` then `b` within one word of each other.
pub fn pair(a: &str, b: &str) -> String {
    format!("{a} {b}")
}

impl TokenFilter for Pairs {
    type Tokenizer<T: Tokenizer> = PairsFilter<T>;

    fn transform<T: Tokenizer>(self, inner: T) -> PairsFilter<T> {
        PairsFilter { inner }
    }
}

#[derive(Clone)]
pub struct PairsFilter<T> {
    inner: T,
}

impl<T: Tokenizer> Tokenizer for PairsFilter<T> {
    type TokenStream<'a> = PairsStream<T::TokenStream<'a>>;

    fn token_stream<'a>(&'a mut self, text: &'a str) -> Self::TokenStream<'a> {
        PairsStream {
            tail: self.inner.token_stream(text),
            words: Default::default(),
            seen: 0,
            pending: 0,
            token: Token::default(),
        }
    }
}

pub struct PairsStream<T> {
    tail: T,
    /// The last three words, the latest last.
    words: [String; 3],
    /// Words read so far.
    seen: usize,
    /// Pairs of the latest word still to give: with the word before it
    /// (1) and with the one before that (2).
    pending: usize,
    token: Token,
}

impl<T: TokenStream> TokenStream for PairsStream<T> {
    fn advance(&mut self) -> bool {
        while self.pending == 0 {
            if !self.tail.advance() {
                return false;
            }
            self.words.rotate_left(1);
            self.words[2].clear();
            self.words[2].push_str(&self.tail.token().text);
            self.seen += 1;
            self.pending = (self.seen - 1).min(2);
        }
        let earlier = &self.words[2 - self.pending];
        self.token.text.clear();
        self.token.text.push_str(earlier);
        self.token.text.push(' ');
        self.token.text.push_str(&self.words[2]);
        self.token.position = self.tail.token().position;
        self.pending -= 1;
        true
    }

    fn token(&self) -> &Token {
        &self.token
    }

    fn token_mut(&mut self) -> &mut Token {
        &mut self.token
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{LowerCaser, SimpleTokenizer, TextAnalyzer};

    use super::*;

    #[test]
    fn each_word_pairs_with_the_next_two() {
        let mut pairs = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .filter(Pairs)
            .build();
        let terms = |pairs: &mut TextAnalyzer, text: &str| {
            let mut stream = pairs.token_stream(text);
            let mut out = Vec::new();
            while stream.advance() {
                out.push(stream.token().text.clone());
            }
            out
        };
        assert_eq!(
            terms(&mut pairs, "Linen Summer Shirt, blue"),
            [
                "linen summer",
                "linen shirt",
                "summer shirt",
                "summer blue",
                "shirt blue"
            ]
        );
        assert_eq!(terms(&mut pairs, "Mug"), Vec::<String>::new());
        assert_eq!(terms(&mut pairs, "mug mug"), ["mug mug"]);
        assert_eq!(pair("linen", "shirt"), "linen shirt");
    }
}
