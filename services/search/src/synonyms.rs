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
}
