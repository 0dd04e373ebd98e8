//! Strings many records share, held once while a build makes them.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use foldhash::fast::RandomState;

/// Texts held once, in a set's order.
pub type Set = Arc<[Arc<str>]>;

/// Brands, category ids and attribute members repeat across a catalog's
/// products: a build holds each once (16 bytes a use) instead of a
/// `String` each (24 bytes and an allocation of its own a use). At
/// 1,000,000 products that is most of what search holds for the listing it
/// builds after its text index.
///
/// Sets of them (a product's category path, its attributes) repeat too,
/// and are held once the same way (`set`): at 1,000,000 products their
/// own slices were about 120 MB of the facts a build holds at its peak.
#[derive(Debug, Default)]
pub struct Interned {
    strings: HashSet<Arc<str>, RandomState>,
    /// Sets by their members' addresses: members from `get` are held here
    /// for as long as the set, so an address names one text.
    sets: HashMap<Box<[usize]>, Set, RandomState>,
    addresses: Vec<usize>,
    /// Holds nothing (`alone`).
    alone: bool,
}

fn address(member: &Arc<str>) -> usize {
    Arc::as_ptr(member).cast::<u8>().addr()
}

impl Interned {
    /// One that holds nothing: each text and set is its own. For one
    /// product's facts (an edit, a sale), where there is nothing to share
    /// and the maps would only cost allocations.
    pub fn alone() -> Self {
        Self {
            alone: true,
            ..Self::default()
        }
    }

    /// The one `Arc<str>` of `text`.
    pub fn get(&mut self, text: &str) -> Arc<str> {
        if self.alone {
            return text.into();
        }
        if let Some(held) = self.strings.get(text) {
            return held.clone();
        }
        let held: Arc<str> = text.into();
        self.strings.insert(held.clone());
        held
    }

    /// The one shared slice of `members` (in their order), when they are
    /// this `Interned`'s own (`get`); members held elsewhere make a set of
    /// their own, equal in content.
    pub fn set(&mut self, members: &[Arc<str>]) -> Set {
        if self.alone {
            return members.into();
        }
        self.addresses.clear();
        self.addresses.extend(members.iter().map(address));
        if let Some(held) = self.sets.get(self.addresses.as_slice()) {
            return held.clone();
        }
        let held: Set = members.into();
        self.sets
            .insert(self.addresses.as_slice().into(), held.clone());
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

    #[test]
    fn one_set_is_held_once_and_others_apart() {
        let mut interned = Interned::default();
        let (a, b) = (interned.get("a"), interned.get("b"));
        let ab = interned.set(&[a.clone(), b.clone()]);
        let same = [interned.get("a"), interned.get("b")];
        let again = interned.set(&same);
        assert!(Arc::ptr_eq(&ab, &again));
        // Order, length and members tell sets apart.
        let ba = interned.set(&[b.clone(), a.clone()]);
        assert!(!Arc::ptr_eq(&ab, &ba));
        assert_eq!(&*ba, [b.clone(), a.clone()]);
        let just_a = interned.set(std::slice::from_ref(&a));
        assert_eq!(&*just_a, std::slice::from_ref(&a));
        let empty = interned.set(&[]);
        assert!(empty.is_empty());
        // A member held elsewhere: equal in content, not the same set.
        let elsewhere: Arc<str> = "a".into();
        let other = interned.set(&[elsewhere, b.clone()]);
        assert_eq!(other, ab);
        assert!(!Arc::ptr_eq(&other, &ab));
    }

    #[test]
    fn alone_holds_nothing() {
        let mut alone = Interned::alone();
        let (a, again) = (alone.get("a"), alone.get("a"));
        assert_eq!(a, again);
        assert!(!Arc::ptr_eq(&a, &again));
        let one = std::slice::from_ref(&a);
        let (set, same) = (alone.set(one), alone.set(one));
        assert_eq!(set, same);
        assert!(!Arc::ptr_eq(&set, &same));
        assert!(alone.strings.is_empty() && alone.sets.is_empty());
    }
}
