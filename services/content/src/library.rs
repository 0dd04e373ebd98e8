//! Loaded content, looked up along a locale's fallback chain.

use std::collections::HashMap;

use storefront_proto::content::v1::{Banner, Document};

use crate::config::DEFAULT_LOCALE;
use crate::files::{Entry, Item, item};

#[derive(Default)]
pub struct Library {
    documents: HashMap<(String, String), Document>,
    banners: HashMap<String, Vec<Banner>>,
    fallbacks: HashMap<String, String>,
}

impl Library {
    pub fn new(entries: Vec<Entry>, fallbacks: HashMap<String, String>) -> anyhow::Result<Self> {
        let mut library = Self {
            fallbacks,
            ..Default::default()
        };
        for entry in entries {
            match item(entry)? {
                Item::Document {
                    key,
                    locale,
                    document,
                } => {
                    library.documents.insert((key, locale), document);
                }
                Item::Banner { locale, banner } => {
                    library.banners.entry(locale).or_default().push(banner)
                }
            }
        }
        for banners in library.banners.values_mut() {
            banners.sort_by(|a, b| a.position.cmp(&b.position).then_with(|| a.key.cmp(&b.key)));
        }
        Ok(library)
    }

    pub fn len(&self) -> usize {
        self.documents.len() + self.banners.values().map(Vec::len).sum::<usize>()
    }

    /// `locale`, then its fallbacks, ending at the default locale.
    pub fn chain(&self, locale: &str) -> Vec<String> {
        let mut chain = vec![locale.to_string()];
        while let Some(next) = chain.last().and_then(|l| self.fallbacks.get(l)) {
            if chain.contains(next) {
                break;
            }
            chain.push(next.clone());
        }
        if !chain.iter().any(|l| l == DEFAULT_LOCALE) {
            chain.push(DEFAULT_LOCALE.to_string());
        }
        chain
    }

    /// The document `key` in the first locale of the chain that has it.
    pub fn document(&self, key: &str, locale: &str) -> Option<Document> {
        self.chain(locale)
            .into_iter()
            .find_map(|l| self.documents.get(&(key.to_string(), l)).cloned())
    }

    /// The banners of the first locale of the chain that has any, keeping
    /// only those inside their schedule at `now` (seconds).
    pub fn banners(&self, locale: &str, now: i64) -> (String, Vec<Banner>) {
        for l in self.chain(locale) {
            if let Some(all) = self.banners.get(&l) {
                let live = all
                    .iter()
                    .filter(|b| {
                        b.starts_at.is_none_or(|s| s.seconds <= now)
                            && b.ends_at.is_none_or(|e| now < e.seconds)
                    })
                    .cloned()
                    .collect();
                return (l, live);
            }
        }
        (DEFAULT_LOCALE.to_string(), Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{DEMO, parse};

    fn demo() -> Library {
        let fallbacks = HashMap::from([
            ("en-NZ".to_string(), "en-AU".to_string()),
            ("de-AT".to_string(), "de-DE".to_string()),
        ]);
        Library::new(parse(DEMO).unwrap(), fallbacks).unwrap()
    }

    #[test]
    fn chains_fall_back_to_the_default() {
        let l = demo();
        assert_eq!(l.chain("en-NZ"), ["en-NZ", "en-AU"]);
        assert_eq!(l.chain("de-AT"), ["de-AT", "de-DE", "en-AU"]);
        assert_eq!(l.chain("en-AU"), ["en-AU"]);
        assert_eq!(l.document("footer", "en-NZ").unwrap().locale, "en-AU");
        assert_eq!(
            l.document("page:shipping", "en-NZ").unwrap().locale,
            "en-NZ"
        );
        assert!(l.document("page:nowhere", "en-AU").is_none());
    }

    #[test]
    fn banners_keep_to_their_schedule() {
        let l = demo();
        let now = 1_795_000_000; // 2026-11
        let (locale, banners) = l.banners("en-AU", now);
        let keys: Vec<&str> = banners.iter().map(|b| b.key.as_str()).collect();
        assert_eq!(
            (locale.as_str(), keys),
            ("en-AU", vec!["summer-sale", "welcome"])
        );
        let (locale, _) = l.banners("fr-FR", now);
        assert_eq!(locale, "en-AU");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        assert!(parse("{\"kind\": \"page\", \"locale\": \"en-AU\"}").is_err());
        let entries = parse(r#"{"kind": "banner", "locale": "en-AU", "key": "k", "title": "t", "image": {"url": "u", "alt": "a"}, "linkUrl": "/", "startsAt": "soon"}"#).unwrap();
        assert!(Library::new(entries, HashMap::new()).is_err());
    }
}
