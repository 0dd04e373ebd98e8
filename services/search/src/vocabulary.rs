//! The words of product names, per language, with how many products have
//! each in their name: what suggestions complete the word being typed
//! from. Kept as a sorted list beside the index rather than as an
//! unstemmed name field in it, which cost a tenth of building the index.

use tantivy::tokenizer::TextAnalyzer;

/// Name words and, per word, the products whose name has it.
#[derive(Debug, Default)]
pub struct Vocabulary {
    /// Sorted by word.
    words: Vec<(Box<str>, u32)>,
}

/// Counts name words as products are indexed; merged into a vocabulary.
#[derive(Default)]
pub struct Counter {
    counts: foldhash::HashMap<String, u32>,
    seen: Vec<String>,
}

impl Counter {
    /// Counts the words of one product's name (each once).
    pub fn add(&mut self, words: &mut TextAnalyzer, name: &str) {
        self.seen.clear();
        let mut stream = words.token_stream(name);
        while stream.advance() {
            let word = &stream.token().text;
            if !self.seen.contains(word) {
                self.seen.push(word.clone());
            }
        }
        for word in self.seen.drain(..) {
            *self.counts.entry(word).or_default() += 1;
        }
    }

    pub fn merge(&mut self, other: Counter) {
        for (word, count) in other.counts {
            *self.counts.entry(word).or_default() += count;
        }
    }

    pub fn finish(self) -> Vocabulary {
        let mut words: Vec<(Box<str>, u32)> = self
            .counts
            .into_iter()
            .map(|(w, c)| (w.into_boxed_str(), c))
            .collect();
        words.sort_unstable();
        Vocabulary { words }
    }
}

impl Vocabulary {
    /// The `limit` words starting with `prefix` that the most products
    /// have (ties alphabetically).
    pub fn complete(&self, prefix: &str, limit: usize) -> Vec<&str> {
        let start = self.words.partition_point(|(w, _)| &**w < prefix);
        let mut matches: Vec<(&str, u32)> = self.words[start..]
            .iter()
            .take_while(|(w, _)| w.starts_with(prefix))
            .map(|(w, c)| (&**w, *c))
            .collect();
        matches.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        matches.into_iter().take(limit).map(|(w, _)| w).collect()
    }
}

#[cfg(test)]
mod tests {
    use tantivy::tokenizer::{LowerCaser, SimpleTokenizer};

    use super::*;

    #[test]
    fn completions_are_the_most_used_words_with_the_prefix() {
        let mut words = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .build();
        let (mut a, mut b) = (Counter::default(), Counter::default());
        a.add(&mut words, "Linen Shirt Shirt");
        a.add(&mut words, "Wool Shirt");
        b.add(&mut words, "Shiny Shoe");
        b.add(&mut words, "Short Shirt");
        a.merge(b);
        let v = a.finish();
        assert_eq!(v.complete("sh", 10), ["shirt", "shiny", "shoe", "short"]);
        assert_eq!(v.complete("shi", 1), ["shirt"]);
        assert!(v.complete("x", 5).is_empty());
        assert_eq!(v.complete("", 2), ["shirt", "linen"]);
    }
}
