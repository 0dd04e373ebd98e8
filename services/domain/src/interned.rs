//! Strings many records share, held once while a build makes them.

use std::collections::HashSet;
use std::sync::Arc;

/// Brands, category ids and attribute members repeat across a catalog's
/// products: a build holds each once (16 bytes a use) instead of a
/// `String` each (24 bytes and an allocation of its own a use). At
/// 1,000,000 products that is most of what search holds for the listing it
/// builds after its text index.
#[derive(Debug, Default)]
pub struct Interned(HashSet<Arc<str>, foldhash::fast::RandomState>);

impl Interned {
    /// The one `Arc<str>` of `text`.
    pub fn get(&mut self, text: &str) -> Arc<str> {
        if let Some(held) = self.0.get(text) {
            return held.clone();
        }
        let held: Arc<str> = text.into();
        self.0.insert(held.clone());
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_text_is_held_once_and_another_apart() {
        let mut interned = Interned::default();
        let a = interned.get("colour\u{1f}Navy");
        let b = interned.get(&String::from("colour\u{1f}Navy"));
        let c = interned.get("colour\u{1f}Sand");
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(&*c, "colour\u{1f}Sand");
        assert!(!Arc::ptr_eq(&a, &c));
    }
}
