//! `localeProjection` (issue 51, target 6): an answer with one locale's
//! strings instead of every locale's, as commercetools answers it. Each
//! localised field keeps its shape, an object by locale, with the one
//! entry the shopper reads: the locale asked for, else another of its
//! language (the first in order), else the shop's default (en-AU), else
//! the first there is. A field without any string stays empty.

use std::collections::BTreeMap;

use storefront_proto::names::DEFAULT_LOCALE;

/// How well `key` serves a shopper reading `locale` (lower is better).
pub fn rank(key: &[u8], locale: &str) -> u8 {
    let wanted = locale.as_bytes();
    if key == wanted {
        0
    } else if key.len() >= 2 && wanted.len() >= 2 && key[..2] == wanted[..2] {
        1
    } else if key == DEFAULT_LOCALE.as_bytes() {
        2
    } else {
        3
    }
}

/// `map` with only the entry a reader of `locale` is shown.
pub fn project(map: &mut BTreeMap<String, String>, locale: &str) {
    let best = map
        .keys()
        .min_by_key(|k| rank(k.as_bytes(), locale))
        .cloned();
    if let Some(best) = best {
        map.retain(|k, _| *k == best);
    }
}

impl crate::model::catalog::Product {
    /// This product as a reader of `locale` is shown it (`project`).
    pub fn project(&mut self, locale: &str) {
        for text in [&mut self.name, &mut self.description, &mut self.slug] {
            project(text, locale);
        }
        let variants = self.variants.iter_mut().flatten();
        for variant in std::iter::once(&mut self.master_variant).chain(variants) {
            for media in &mut variant.media {
                project(&mut media.alt, locale);
            }
        }
        for media in &mut self.media {
            project(&mut media.alt, locale);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn projected(pairs: &[(&str, &str)], locale: &str) -> Vec<(String, String)> {
        let mut map: BTreeMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        project(&mut map, locale);
        map.into_iter().collect()
    }

    #[test]
    fn the_locale_then_its_language_then_the_default_then_any() {
        let all = [("de-DE", "Hemd"), ("en-AU", "Shirt"), ("en-US", "Tee")];
        let one = |k: &str, v: &str| vec![(k.to_string(), v.to_string())];
        assert_eq!(projected(&all, "de-DE"), one("de-DE", "Hemd"));
        assert_eq!(projected(&all, "de-AT"), one("de-DE", "Hemd"));
        assert_eq!(projected(&all, "en-US"), one("en-US", "Tee"));
        assert_eq!(projected(&all, "en-NZ"), one("en-AU", "Shirt"));
        assert_eq!(projected(&all, "fr-FR"), one("en-AU", "Shirt"));
        assert_eq!(
            projected(&[("ja-JP", "シャツ")], "fr-FR"),
            one("ja-JP", "シャツ")
        );
        assert!(projected(&[], "de-DE").is_empty());
    }
}
