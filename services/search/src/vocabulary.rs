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

impl Vocabulary {
    /// Whether some product's name has `word`.
    pub fn has(&self, word: &str) -> bool {
        self.words
            .binary_search_by(|(w, _)| (**w).cmp(word))
            .is_ok()
    }

    /// How many products have `word` in their name (0: none).
    pub fn products(&self, word: &str) -> u32 {
        self.words
            .binary_search_by(|(w, _)| (**w).cmp(word))
            .map_or(0, |at| self.words[at].1)
    }

    /// The word closest to `word` within `max` typos (Damerau-Levenshtein)
    /// that the most products have, other than `word` itself: what a
    /// search that found nothing suggests.
    pub fn closest(&self, word: &str, max: usize) -> Option<&str> {
        self.within(word, max, 1).into_iter().next().map(|(w, _)| w)
    }

    /// At most `limit` words within `max` typos of `word` (not `word`),
    /// fewest typos first, then the most used. Reads every word once: the
    /// vocabulary is of names, thousands of words, not products.
    pub fn within(&self, word: &str, max: usize, limit: usize) -> Vec<(&str, usize)> {
        let mut from = Distances::new(word);
        let len = from.word.len();
        let mut found: Vec<(usize, std::cmp::Reverse<u32>, &str)> = self
            .words
            .iter()
            .filter(|(w, _)| &**w != word && w.chars().count().abs_diff(len) <= max)
            .filter_map(|(w, c)| Some((from.to(w, max)?, std::cmp::Reverse(*c), &**w)))
            .collect();
        found.sort_unstable();
        found
            .into_iter()
            .take(limit)
            .map(|(d, _, w)| (w, d))
            .collect()
    }
}

/// The Damerau-Levenshtein distance of `a` and `b` (optimal string
/// alignment: an adjacent transposition is one edit), or None above `max`.
pub fn distance(a: &str, b: &str, max: usize) -> Option<usize> {
    Distances::new(a).to(b, max)
}

/// Distances from one word to others, its letters and the rows kept from
/// one word to the next: a typo is measured against every word of the
/// vocabulary, and five vectors a word were most of that.
struct Distances {
    word: Vec<char>,
    other: Vec<char>,
    /// Three rows: two back (transpositions), one back, this one.
    before: Vec<usize>,
    last: Vec<usize>,
    row: Vec<usize>,
}

impl Distances {
    fn new(word: &str) -> Self {
        Self {
            word: word.chars().collect(),
            other: Vec::new(),
            before: Vec::new(),
            last: Vec::new(),
            row: Vec::new(),
        }
    }

    /// The distance to `other`, or None above `max`.
    fn to(&mut self, other: &str, max: usize) -> Option<usize> {
        let Self {
            word: a,
            other: b,
            before,
            last,
            row,
        } = self;
        b.clear();
        b.extend(other.chars());
        before.clear();
        before.resize(b.len() + 1, 0);
        last.clear();
        last.extend(0..=b.len());
        row.clear();
        row.resize(b.len() + 1, 0);
        for i in 1..=a.len() {
            row[0] = i;
            let mut least = row[0];
            for j in 1..=b.len() {
                let cost = usize::from(a[i - 1] != b[j - 1]);
                let mut d = (last[j] + 1).min(row[j - 1] + 1).min(last[j - 1] + cost);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    d = d.min(before[j - 2] + 1);
                }
                row[j] = d;
                least = least.min(d);
            }
            if least > max {
                return None;
            }
            std::mem::swap(before, last);
            std::mem::swap(last, row);
        }
        Some(last[b.len()]).filter(|d| *d <= max)
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

    #[test]
    fn a_transposition_is_one_typo_and_the_closest_common_word_is_suggested() {
        assert_eq!(distance("candels", "candles", 2), Some(1));
        assert_eq!(distance("candels", "sandals", 2), Some(2));
        assert_eq!(distance("candels", "sandals", 1), None);
        assert_eq!(distance("mugz", "mug", 1), Some(1));
        assert_eq!(distance("", "ab", 2), Some(2));
        assert_eq!(distance("abc", "abc", 0), Some(0));
        let mut words = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(LowerCaser)
            .build();
        let mut c = Counter::default();
        for name in ["Mug", "Mug", "Mud Mask", "Rug"] {
            c.add(&mut words, name);
        }
        let v = c.finish();
        assert_eq!(v.closest("mugz", 1), Some("mug"));
        assert_eq!(v.closest("mug", 1), Some("mud"), "never the word itself");
        assert_eq!(v.closest("zzqxv", 2), None);
    }

    /// One word measured against many in turn (the rows kept from word to
    /// word, longer and shorter) measures each as it alone would.
    #[test]
    fn distances_from_one_word_to_many_are_each_as_measured_alone() {
        let others = [
            "candles",
            "c",
            "",
            "sandals",
            "candelabra",
            "cnadels",
            "kandels",
            "candels",
            "ca",
            "échelle",
            "candels",
        ];
        for word in ["candels", "", "éch", "cnad"] {
            let mut from = Distances::new(word);
            for other in others {
                for max in 0..4 {
                    assert_eq!(
                        from.to(other, max),
                        distance(word, other, max),
                        "{word} -> {other} within {max}"
                    );
                }
            }
        }
    }
}
