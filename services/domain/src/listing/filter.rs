//! Filters over indexed columns: each becomes "the value's rank is in a
//! range" (or an id set contains the value), with a count known before any
//! record is touched, so the most selective one is taken first and the
//! others only check its records.

use roaring::RoaringBitmap;
use storefront_proto::common::v1::FilterOperator;

use super::column::{Column, Key};
use crate::query::{CompiledFilter, FieldType, OwnedValue};

/// The records a filter asks for, or (`negate`) every other record.
pub struct Predicate<'a> {
    set: Set<'a>,
    negate: bool,
}

enum Set<'a> {
    /// Records whose value is ranked in `lo..hi`.
    Range {
        column: &'a Column,
        lo: u32,
        hi: u32,
    },
    /// Records whose id set contains a value.
    Contains(Option<&'a RoaringBitmap>),
}

impl<'a> Predicate<'a> {
    pub fn new<F>(column: &'a Column, filter: &CompiledFilter<F>) -> Predicate<'a> {
        let negate = filter.op == FilterOperator::Ne;
        if filter.ty == FieldType::TextSet {
            let members = match &filter.value {
                OwnedValue::Text(id) => column.members.get(id.as_str()),
                _ => None,
            };
            let set = Set::Contains(members);
            return Predicate { set, negate };
        }
        let (lo, hi) = column.equal_range(&Key::of_filter(&filter.value));
        let end = column.distinct.len() as u32;
        let (lo, hi) = match filter.op {
            FilterOperator::Eq | FilterOperator::Ne => (lo, hi),
            FilterOperator::Gt => (hi, end),
            FilterOperator::Gte => (lo, end),
            FilterOperator::Lt => (0, lo),
            FilterOperator::Lte => (0, hi),
            // Refused when the filter was compiled.
            FilterOperator::Unspecified => (0, 0),
        };
        let set = Set::Range { column, lo, hi };
        Predicate { set, negate }
    }

    /// How many of the `len` records pass.
    pub fn count(&self, len: u64) -> u64 {
        let inside = match &self.set {
            Set::Range { column, lo, hi } => column.count(*lo, *hi),
            Set::Contains(members) => members.map_or(0, |m| m.len()),
        };
        if self.negate { len - inside } else { inside }
    }

    pub fn test(&self, row: u32) -> bool {
        let inside = match &self.set {
            Set::Range { column, lo, hi } => {
                let rank = column.rank[row as usize];
                *lo <= rank && rank < *hi
            }
            Set::Contains(members) => members.is_some_and(|m| m.contains(row)),
        };
        inside != self.negate
    }

    /// Whether `bitmap` is a set operation on bitmaps held already.
    pub fn has_bitmaps(&self) -> bool {
        match &self.set {
            Set::Range { column, .. } => !column.bitmaps.is_empty(),
            Set::Contains(_) => true,
        }
    }

    /// The passing records as one bitmap held already (one value of a
    /// column with bitmaps, or an id's members, not negated): borrowed, so
    /// that an intersection copies none of it.
    fn held(&self) -> Option<&'a RoaringBitmap> {
        if self.negate {
            return None;
        }
        match self.set {
            Set::Range { column, lo, hi } if hi == lo + 1 => column.bitmaps.get(lo as usize),
            Set::Range { .. } => None,
            Set::Contains(members) => members,
        }
    }

    /// Every passing record out of `len`.
    pub fn bitmap(&self, len: u32) -> RoaringBitmap {
        let inside = match &self.set {
            Set::Range { column, lo, hi } => column.bitmap(*lo, *hi),
            Set::Contains(members) => members.cloned().unwrap_or_default(),
        };
        if self.negate {
            let mut all = RoaringBitmap::new();
            all.insert_range(0..len);
            all - inside
        } else {
            inside
        }
    }
}

/// The records passing every predicate, or None for "all of them". Starts
/// from the most selective predicate; each other one either intersects a
/// bitmap it holds or checks the records left, whichever touches less.
pub fn select(mut predicates: Vec<Predicate<'_>>, len: u32) -> Option<RoaringBitmap> {
    let total = u64::from(len);
    predicates.sort_by_key(|p| p.count(total));
    let mut predicates = predicates.into_iter().peekable();
    let first = predicates.next()?;
    // Two bitmaps held are intersected where they lie; a bitmap held is
    // intersected with the set by reference: none is copied whole first.
    let mut set = match (first.held(), predicates.peek().and_then(Predicate::held)) {
        (Some(a), Some(b)) => {
            predicates.next();
            a & b
        }
        _ => first.bitmap(len),
    };
    for p in predicates {
        if set.is_empty() {
            break;
        }
        if let Some(held) = p.held() {
            set &= held;
        } else if p.has_bitmaps() || p.count(total) < set.len() {
            set &= p.bitmap(len);
        } else {
            set = RoaringBitmap::from_sorted_iter(set.iter().filter(|&row| p.test(row)))
                .unwrap_or_default();
        }
    }
    Some(set)
}
