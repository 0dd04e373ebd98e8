//! One field of a collection, indexed: its distinct values in order, each
//! record's rank among them, the records in ascending order (the
//! descending order is read from it: the same groups, last first), and
//! for fields with few values (or sets of ids) a bitmap per value.

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;

use super::{distinct, spare};
use crate::query::{OwnedValue, Value};

/// The rank of a record without the field: above every value, as
/// `Value::Missing` sorts above every value.
pub const MISSING: u32 = u32::MAX;
/// Fields with at most this many distinct values keep a bitmap per value.
pub(super) const BITMAP_VALUES: usize = 64;

/// An owned field value, ordered as `Value` is.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Text(Arc<str>),
    Integer(i64),
    Boolean(bool),
    Timestamp(i64, i32),
    TextSet(Arc<[Box<str>]>),
}

impl Key {
    pub(super) fn of(value: Value<'_>) -> Option<Key> {
        Some(match value {
            Value::Text(s) => Key::Text(s.into()),
            Value::Integer(i) => Key::Integer(i),
            Value::Boolean(b) => Key::Boolean(b),
            Value::Timestamp(s, n) => Key::Timestamp(s, n),
            Value::TextSet(set) => Key::TextSet(set.iter().map(|s| Box::from(&**s)).collect()),
            Value::Missing => return None,
        })
    }

    pub(crate) fn of_filter(value: &OwnedValue) -> Key {
        match value {
            OwnedValue::Text(s) => Key::Text(s.as_str().into()),
            OwnedValue::Integer(i) => Key::Integer(*i),
            OwnedValue::Boolean(b) => Key::Boolean(*b),
            OwnedValue::Timestamp(s, n) => Key::Timestamp(*s, *n),
        }
    }
}

#[derive(Debug)]
pub struct Column {
    /// Distinct values, ascending. A persistent vector shared between
    /// versions: a change that brings or drops a value copies a path of
    /// its tree (at 100,000 names, cloning each value was most of a
    /// rename's cost).
    pub distinct: imbl::Vector<Key>,
    /// Per record: the index of its value in `distinct`, or `MISSING`.
    pub rank: Vec<u32>,
    /// Records by (value, id). Not kept descending as well: a live change
    /// copies and shifts each array of a column it changes, and at 100,000
    /// records a second order was a third of that.
    pub asc: Vec<u32>,
    /// `starts[v]`: where value `v` begins in `asc`; `starts[distinct.len()]`
    /// is where the records without the field begin.
    pub starts: Vec<u32>,
    /// Per distinct value, its records (fields with few values only).
    pub bitmaps: Vec<RoaringBitmap>,
    /// For sets of ids: the records containing each id.
    pub members: Arc<HashMap<Box<str>, RoaringBitmap>>,
    /// Whether `bitmaps` are kept (few values); an edit that brings more
    /// values than that drops them for good.
    pub(super) keeps_bitmaps: bool,
}

/// A copy's large arrays are written into arrays a dropped version left
/// (`spare`), not into memory fresh from the system.
impl Clone for Column {
    fn clone(&self) -> Self {
        Column {
            distinct: self.distinct.clone(),
            rank: copied(&self.rank),
            asc: copied(&self.asc),
            starts: copied(&self.starts),
            bitmaps: self.bitmaps.clone(),
            members: Arc::clone(&self.members),
            keeps_bitmaps: self.keeps_bitmaps,
        }
    }
}

/// A dropped version's large arrays are kept a moment for the next one's.
impl Drop for Column {
    fn drop(&mut self) {
        spare::give(std::mem::take(&mut self.rank));
        spare::give(std::mem::take(&mut self.asc));
        spare::give(std::mem::take(&mut self.starts));
    }
}

fn copied(array: &[u32]) -> Vec<u32> {
    let mut copy = spare::take(array.len());
    copy.extend_from_slice(array);
    copy
}

impl Column {
    /// How many records have no value.
    pub fn missing(&self) -> usize {
        let first_missing = self.starts.last().copied().unwrap_or(0) as usize;
        self.asc.len().saturating_sub(first_missing)
    }

    /// Indexes `values` (one per record); `by_id` lists the records in id
    /// order, which breaks ties. The orders come from a counting sort of
    /// the records taken in id order.
    pub fn build(values: &[Value<'_>], by_id: &[u32]) -> Column {
        let (rank, distinct) = distinct::ranks(values);
        // starts[v + 1] counts value v, then becomes where v begins.
        let mut starts = vec![0u32; distinct.len() + 1];
        for &r in rank.iter().filter(|&&r| r != MISSING) {
            starts[r as usize + 1] += 1;
        }
        for v in 1..starts.len() {
            starts[v] += starts[v - 1];
        }
        // Where the next record of each value goes; the last slot is the
        // records without one.
        let mut next = starts.clone();
        let mut asc = vec![0u32; values.len()];
        for &row in by_id {
            let slot = match rank[row as usize] {
                MISSING => distinct.len(),
                r => r as usize,
            };
            asc[next[slot] as usize] = row;
            next[slot] += 1;
        }
        let keeps_bitmaps = distinct.len() <= BITMAP_VALUES;
        let bitmaps = if keeps_bitmaps {
            bitmaps_of(&rank, distinct.len())
        } else {
            Vec::new()
        };
        let members = match distinct.first() {
            Some(Key::TextSet(_)) if keeps_bitmaps => members_of_sets(&distinct, &bitmaps),
            _ => members(values),
        };
        Column {
            members: Arc::new(members),
            distinct: distinct.into_iter().collect(),
            rank,
            asc,
            starts,
            bitmaps,
            keeps_bitmaps,
        }
    }

    /// The value of record `row`, if it has one.
    pub fn value(&self, row: u32) -> Option<&Key> {
        self.distinct.get(self.rank[row as usize] as usize)
    }

    /// The records of value `slot` in the ascending order (slot
    /// `distinct.len()` is the records without a value).
    pub(super) fn group(&self, slot: usize) -> &[u32] {
        let (start, end) = self.range(slot);
        &self.asc[start..end]
    }

    /// Where the group of value `slot` is in the ascending order.
    pub(super) fn range(&self, slot: usize) -> (usize, usize) {
        let start = self.starts[slot] as usize;
        let end = match self.starts.get(slot + 1) {
            Some(&end) => end as usize,
            None => self.asc.len(),
        };
        (start, end)
    }

    /// The records in the requested direction, group by group (records
    /// of one value, in id order), from the `from`th record on: the first
    /// group is cut to start there. Descending is the groups last first;
    /// the records without a value, a group sorting above every value,
    /// come first.
    pub fn groups(&self, desc: bool, from: usize) -> Groups<'_> {
        let d = self.distinct.len();
        let (next, skip) = if from >= self.asc.len() {
            (d + 1, 0)
        } else if !desc {
            let slot = self.starts.partition_point(|&s| s as usize <= from) - 1;
            (slot, from - self.starts[slot] as usize)
        } else {
            let missing = self.asc.len() - self.starts[d] as usize;
            if from < missing {
                (0, from)
            } else {
                // Value `v` starts at `missing + starts[d] - starts[v + 1]`
                // descending: the last value whose start is at or before.
                let past = self.starts[d] as usize - (from - missing);
                let slot = self.starts[..=d].partition_point(|&s| (s as usize) < past) - 1;
                let before = self.starts[d] as usize - self.starts[slot + 1] as usize;
                (d - slot, from - missing - before)
            }
        };
        Groups {
            column: self,
            desc,
            next,
            skip,
        }
    }

    /// The records in the requested direction from the `from`th on.
    pub fn rows(&self, desc: bool, from: usize) -> impl Iterator<Item = u32> + '_ {
        self.groups(desc, from).flatten().copied()
    }

    /// The distinct values equal to `key`, as a range of ranks.
    pub fn equal_range(&self, key: &Key) -> (u32, u32) {
        let point = |below: &dyn Fn(&Key) -> bool| {
            let split = self.distinct.binary_search_by(|d| {
                if below(d) {
                    std::cmp::Ordering::Less
                } else {
                    std::cmp::Ordering::Greater
                }
            });
            split.unwrap_or_else(|at| at) as u32
        };
        (point(&|d| d < key), point(&|d| d <= key))
    }

    /// How many records have a value ranked in `lo..hi`.
    pub fn count(&self, lo: u32, hi: u32) -> u64 {
        u64::from(self.starts[hi as usize] - self.starts[lo as usize])
    }

    /// The records whose value is ranked in `lo..hi`.
    pub fn bitmap(&self, lo: u32, hi: u32) -> RoaringBitmap {
        if !self.bitmaps.is_empty() {
            let mut out = RoaringBitmap::new();
            for b in &self.bitmaps[lo as usize..hi as usize] {
                out |= b;
            }
            return out;
        }
        sorted_bitmap(
            &self.asc[self.starts[lo as usize] as usize..self.starts[hi as usize] as usize],
        )
    }
}

/// Groups of a column's records with one value, in order (`Column::groups`).
pub struct Groups<'a> {
    column: &'a Column,
    desc: bool,
    /// How many groups are behind: the next is slot `next` ascending,
    /// `distinct.len() - next` descending.
    next: usize,
    /// Records of the next group before the position asked.
    skip: usize,
}

impl<'a> Iterator for Groups<'a> {
    type Item = &'a [u32];

    fn next(&mut self) -> Option<&'a [u32]> {
        let d = self.column.distinct.len();
        while self.next <= d {
            let slot = if self.desc { d - self.next } else { self.next };
            self.next += 1;
            let group = &self.column.group(slot)[std::mem::take(&mut self.skip)..];
            if !group.is_empty() {
                return Some(group);
            }
        }
        None
    }
}

fn sorted_bitmap(rows: &[u32]) -> RoaringBitmap {
    let mut rows = rows.to_vec();
    rows.sort_unstable();
    RoaringBitmap::from_sorted_iter(rows).unwrap_or_default()
}

/// A bitmap per value of `rank`'s `values` values: each value's records
/// gathered in record order, nothing sorted.
fn bitmaps_of(rank: &[u32], values: usize) -> Vec<RoaringBitmap> {
    let mut rows: Vec<Vec<u32>> = vec![Vec::new(); values];
    for (row, &r) in rank.iter().enumerate() {
        if let Some(rows) = rows.get_mut(r as usize) {
            rows.push(row as u32);
        }
    }
    rows.into_iter()
        .map(|rows| RoaringBitmap::from_sorted_iter(rows).unwrap_or_default())
        .collect()
}

/// `members`, for few distinct sets: each element's records are the union
/// of the records of the sets holding it, not a lookup per record and
/// element (a category or attribute column held 40 sets over 1,000,000
/// records).
fn members_of_sets(
    distinct: &[Key],
    bitmaps: &[RoaringBitmap],
) -> HashMap<Box<str>, RoaringBitmap> {
    let mut members: HashMap<Box<str>, RoaringBitmap> = HashMap::new();
    for (set, records) in distinct.iter().zip(bitmaps) {
        let Key::TextSet(elements) = set else {
            continue;
        };
        for element in elements.iter() {
            match members.get_mut(element) {
                Some(all) => *all |= records,
                None => {
                    members.insert(element.clone(), records.clone());
                }
            }
        }
    }
    members
}

/// For a set-valued field, the records holding each element.
fn members(values: &[Value<'_>]) -> HashMap<Box<str>, RoaringBitmap> {
    // Every record's category ids are looked up here: foldhash, not the
    // default SipHash, which was most of this at a million products.
    let mut rows: foldhash::HashMap<&str, Vec<u32>> = foldhash::HashMap::default();
    for (row, value) in values.iter().enumerate() {
        if let Value::TextSet(set) = value {
            for element in set.iter() {
                rows.entry(&**element).or_default().push(row as u32);
            }
        }
    }
    rows.into_iter()
        .map(|(element, mut rows)| {
            rows.dedup();
            let bitmap = RoaringBitmap::from_sorted_iter(rows).unwrap_or_default();
            (element.into(), bitmap)
        })
        .collect()
}
