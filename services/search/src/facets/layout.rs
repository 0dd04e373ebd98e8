//! How a search's counts are kept and read out, made once per index with
//! its rows: the (brand, category) pairs rows count by, and each facet
//! column's distinct values as the facet values they count for. A set of
//! ids counts for each of its ids; spreading counts by arrays made here
//! means no search hashes a value's strings (per search, a map of every
//! counted set's members was a tenth of a one-word search's own time).

use storefront_domain::catalog::split_attribute;
use storefront_domain::listing::{Column, Key};

/// Per distinct value of a column (by rank), the facet values it counts
/// for: one for a text or a boolean, each member for a set.
pub(super) struct Spread {
    /// Where each distinct value's members start in `members`, and one
    /// more past the last value's.
    starts: Box<[u32]>,
    /// Facet values by id.
    members: Box<[u32]>,
    values: Box<[Box<str>]>,
}

impl Spread {
    pub fn new<'c>(column: &'c Column) -> Self {
        let mut ids: foldhash::HashMap<&str, u32> = Default::default();
        let mut values: Vec<&str> = Vec::new();
        let mut starts = Vec::with_capacity(column.distinct.len() + 1);
        let mut members = Vec::new();
        starts.push(0);
        for key in column.distinct.iter() {
            let mut add = |value: &'c str| {
                let next = values.len() as u32;
                let id = *ids.entry(value).or_insert_with(|| {
                    values.push(value);
                    next
                });
                members.push(id);
            };
            match key {
                Key::Text(s) => add(s),
                Key::Boolean(b) => add(if *b { "true" } else { "false" }),
                Key::TextSet(set) => set.iter().for_each(|s| add(s)),
                Key::Integer(_) | Key::Timestamp(..) => {}
            }
            starts.push(members.len() as u32);
        }
        Self {
            starts: starts.into(),
            members: members.into(),
            values: values.into_iter().map(Box::from).collect(),
        }
    }

    /// Counts by facet value id from `counts` by distinct value (a slot
    /// past the values, none, counts for nothing).
    pub fn spread(&self, counts: &[u64]) -> Vec<u64> {
        let mut by_value = vec![0; self.values.len()];
        for (at, &count) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
            let (Some(&from), Some(&to)) = (self.starts.get(at), self.starts.get(at + 1)) else {
                continue;
            };
            for &id in &self.members[from as usize..to as usize] {
                by_value[id as usize] += count;
            }
        }
        by_value
    }

    /// How many distinct values the column had.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    /// Facet value `id`.
    pub fn value(&self, id: usize) -> &str {
        &self.values[id]
    }
}

/// The attribute column's facet values (`name<separator>value`), each
/// with its name's id.
pub(super) struct Attributes {
    pub spread: Spread,
    /// By facet value id: its name's id (`u32::MAX`: not an attribute).
    name_of: Box<[u32]>,
    pub names: Box<[Box<str>]>,
}

impl Attributes {
    fn new(column: &Column) -> Self {
        let spread = Spread::new(column);
        let mut ids: foldhash::HashMap<&str, u32> = Default::default();
        let mut names = Vec::new();
        let name_of = (spread.values.iter())
            .map(|member| {
                let Some((name, _)) = split_attribute(member) else {
                    return u32::MAX;
                };
                let next = names.len() as u32;
                *ids.entry(name).or_insert_with(|| {
                    names.push(Box::from(name));
                    next
                })
            })
            .collect();
        Self {
            name_of,
            names: names.into(),
            spread,
        }
    }

    /// Facet value `id`'s name id and value, when it is an attribute.
    pub fn split(&self, id: usize) -> Option<(usize, &str)> {
        let name = *self.name_of.get(id).filter(|&&n| n != u32::MAX)?;
        let (_, value) = split_attribute(self.spread.value(id))?;
        Some((name as usize, value))
    }
}

/// What a search counts by and reads its counts out with.
pub struct Layout {
    /// Each (brand rank, category rank) a row has, at its
    /// `brand_category`.
    pub(super) pairs: Box<[(u32, u32)]>,
    pub(super) brands: Spread,
    pub(super) categories: Spread,
    pub(super) in_stock: Spread,
    pub(super) attributes: Attributes,
}

impl Layout {
    /// The layout of rows counted by `pairs`, with the columns they rank.
    pub(super) fn new(pairs: Vec<(u32, u32)>, columns: [&Column; 4]) -> Self {
        let [brand, category, in_stock, attributes] = columns;
        Self {
            pairs: pairs.into(),
            brands: Spread::new(brand),
            categories: Spread::new(category),
            in_stock: Spread::new(in_stock),
            attributes: Attributes::new(attributes),
        }
    }
}
