//! The synonym table (`SEARCH_SYNONYMS`) as a query compares it: every
//! entry analysed once per language (lower-cased, accents folded,
//! stemmed), so plural, case and accent variants of an entry are the
//! entry, and a search stems no table.

use tantivy::tokenizer::TextAnalyzer;

use crate::analyzer;

/// Per language (`LanguageFields::slot`), the groups of stemmed entries,
/// each entry its words joined by one space.
#[derive(Default)]
pub struct Synonyms([Vec<Vec<String>>; 2]);

fn stemmed(analyzer: &mut TextAnalyzer, entry: &str) -> String {
    let mut stream = analyzer.token_stream(entry);
    let mut words = Vec::new();
    while stream.advance() {
        words.push(stream.token().text.clone());
    }
    words.join(" ")
}

impl Synonyms {
    pub fn new(groups: &[Vec<String>]) -> Self {
        Self(std::array::from_fn(|slot| {
            let mut analyzer = analyzer::stemming(slot);
            groups
                .iter()
                .map(|group| {
                    let mut entries: Vec<String> = group
                        .iter()
                        .map(|entry| stemmed(&mut analyzer, entry))
                        .filter(|entry| !entry.is_empty())
                        .collect();
                    entries.dedup();
                    entries
                })
                .filter(|entries| entries.len() > 1)
                .collect()
        }))
    }

    /// The other entries of every group of language `slot` holding `stem`.
    pub fn of<'a>(&'a self, slot: usize, stem: &'a str) -> impl Iterator<Item = &'a str> {
        self.0
            .get(slot)
            .into_iter()
            .flatten()
            .filter(move |group| group.iter().any(|entry| entry == stem))
            .flatten()
            .map(String::as_str)
            .filter(move |entry| *entry != stem)
    }
}

impl Synonyms {
    /// The longest entry of two or more words that `stems` (a query's
    /// words from some point on, stemmed) begins with: its length in
    /// words and the other entries of every group holding it, so that
    /// "running shoes" may stand for "sneaker" as a whole.
    pub fn phrase_at<'a>(&'a self, slot: usize, stems: &[String]) -> Option<(usize, Vec<&'a str>)> {
        let len = self
            .0
            .get(slot)?
            .iter()
            .flatten()
            .filter_map(|entry| {
                let words = entry.split(' ').count();
                let starts = words >= 2
                    && words <= stems.len()
                    && entry.split(' ').zip(stems).all(|(w, s)| w == s);
                starts.then_some(words)
            })
            .max()?;
        let phrase = stems[..len].join(" ");
        let others: Vec<&str> = self
            .0
            .get(slot)?
            .iter()
            .filter(|group| group.contains(&phrase))
            .flatten()
            .map(String::as_str)
            .filter(|entry| *entry != phrase)
            .collect();
        Some((len, others))
    }
}

#[cfg(test)]
mod tests {
    use super::Synonyms;

    #[test]
    fn entries_compare_stemmed_folded_and_per_language() {
        let groups = vec![
            vec!["Sneakers".to_string(), "trainers".into(), "T-Shirt".into()],
            vec!["crème".into(), "Cremes".into()],
            vec!["Mütze".into(), "beanie".into()],
        ];
        let synonyms = Synonyms::new(&groups);
        let en: Vec<&str> = synonyms.of(0, "trainer").collect();
        assert_eq!(en, ["sneaker", "t shirt"]);
        assert_eq!(synonyms.of(0, "sneaker").count(), 2);
        // "crème" and "cremes" stem alike: one entry, nothing else to offer.
        assert_eq!(synonyms.of(0, "creme").count(), 0);
        let de: Vec<&str> = synonyms.of(1, "mutz").collect();
        assert_eq!(de, ["beani"]);
        assert_eq!(synonyms.of(2, "trainer").count(), 0);
    }

    #[test]
    fn a_query_s_words_may_make_a_multi_word_entry() {
        let groups = vec![
            vec!["sneaker".to_string(), "running shoes".into()],
            vec!["trail running shoes".into(), "hiking boot".into()],
        ];
        let synonyms = Synonyms::new(&groups);
        let stems = |text: &str| -> Vec<String> { text.split(' ').map(String::from).collect() };
        assert_eq!(
            synonyms.phrase_at(0, &stems("run shoe red")),
            Some((2, vec!["sneaker"]))
        );
        // The longest entry wins.
        assert_eq!(
            synonyms.phrase_at(0, &stems("trail run shoe")),
            Some((3, vec!["hike boot"]))
        );
        assert_eq!(synonyms.phrase_at(0, &stems("run")), None);
        assert_eq!(synonyms.phrase_at(0, &stems("red run shoe")), None);
        assert_eq!(synonyms.phrase_at(1, &stems("run shoe")), None);
    }
}
