//! One field of a collection, indexed: its distinct values in order, each
//! record's rank among them, the records in ascending order (the
//! descending order is read from it: the same groups, last first), and
//! for fields with few values (or sets of ids) a bitmap per value.

use std::collections::HashMap;
use std::sync::Arc;

use roaring::RoaringBitmap;

use super::spare;
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

/// The sort key of `text` from byte `offset` on: its next eight bytes,
/// big-endian and zero-padded (ordered as the strings are wherever they
/// differ: a zero pad sorts as or before any byte), then how many bytes
/// are left, counted up to 9 (of two equal chunks the text that ends
/// first is first; 9: both go on), then `index` (ties in index order).
fn chunk_key(text: &str, offset: usize, index: u32) -> u128 {
    let rest = text.as_bytes().get(offset..).unwrap_or_default();
    let mut head = [0u8; 8];
    let n = rest.len().min(8);
    head[..n].copy_from_slice(&rest[..n]);
    let left = rest.len().min(9) as u128;
    (u128::from(u64::from_be_bytes(head)) << 64) | (left << 32) | u128::from(index)
}

/// Each record's rank among the distinct values (or `MISSING`), and those
/// values in order. Records are numbered by value through a hash map, so
/// that only the distinct values are sorted.
fn ranks(values: &[Value<'_>]) -> (Vec<u32>, Vec<Key>) {
    let mut seen: foldhash::HashMap<Value<'_>, u32> = foldhash::HashMap::default();
    let mut firsts: Vec<Value<'_>> = Vec::new();
    let mut rank: Vec<u32> = values
        .iter()
        .map(|&value| {
            if value == Value::Missing {
                return MISSING;
            }
            *seen.entry(value).or_insert_with(|| {
                firsts.push(value);
                firsts.len() as u32 - 1
            })
        })
        .collect();
    drop(seen);
    let mut sorted: Vec<u32> = (0..firsts.len() as u32).collect();
    sorted.sort_unstable_by(|&a, &b| firsts[a as usize].cmp(&firsts[b as usize]));
    let mut final_rank = vec![0u32; firsts.len()];
    for (r, &first) in sorted.iter().enumerate() {
        final_rank[first as usize] = r as u32;
    }
    let distinct = sorted
        .iter()
        .filter_map(|&first| Key::of(firsts[first as usize]))
        .collect();
    for r in rank.iter_mut().filter(|r| **r != MISSING) {
        *r = final_rank[*r as usize];
    }
    (rank, distinct)
}

/// As `ranks`, for a column of texts (None for any other): all of them
/// sorted eight bytes at a time, equal neighbours one value. Keys and ids
/// are a million distinct texts, where hashing each only to find it new
/// was most of the column's cost.
fn text_ranks(values: &[Value<'_>]) -> Option<(Vec<u32>, Vec<Key>)> {
    let mut present: Vec<(u32, &str)> = Vec::with_capacity(values.len());
    for (row, value) in values.iter().enumerate() {
        match value {
            Value::Text(text) => present.push((row as u32, text)),
            Value::Missing => {}
            _ => return None,
        }
    }
    let mut rank = vec![MISSING; values.len()];
    let mut distinct: Vec<Key> = Vec::new();
    let mut last = None;
    for i in sorted_texts(present.len(), |i| present[i as usize].1) {
        let (row, text) = present[i as usize];
        if last != Some(text) {
            distinct.push(Key::Text(text.into()));
            last = Some(text);
        }
        rank[row as usize] = distinct.len() as u32 - 1;
    }
    Some((rank, distinct))
}

/// `0..len` ordered by `text(i)`, ties in index order: eight bytes at a
/// time, and only texts equal so far go on to their next eight, so a
/// head that thousands share ("premium-leather-...", in keys and names)
/// costs integer compares, not a string compare per pair.
pub(super) fn sorted_texts<'t>(len: usize, text: impl Fn(u32) -> &'t str) -> Vec<u32> {
    let mut order: Vec<u32> = (0..len as u32).collect();
    let mut keys: Vec<u128> = Vec::new();
    // Runs of `order` still to sort: start, end, byte offset.
    let mut runs = vec![(0, len, 0)];
    while let Some((start, end, offset)) = runs.pop() {
        let run = &mut order[start..end];
        keys.clear();
        keys.extend(run.iter().map(|&i| chunk_key(text(i), offset, i)));
        keys.sort_unstable();
        for (slot, &key) in run.iter_mut().zip(&keys) {
            *slot = key as u32;
        }
        let mut a = 0;
        while a < keys.len() {
            let head = keys[a] >> 32;
            let b = a + keys[a..].partition_point(|k| k >> 32 == head);
            if b - a > 1 && head & 0xff == 9 {
                runs.push((start + a, start + b, offset + 8));
            }
            a = b;
        }
    }
    order
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
        let (rank, distinct) = text_ranks(values).unwrap_or_else(|| ranks(values));
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
            (0..distinct.len())
                .map(|v| sorted_bitmap(&asc[starts[v] as usize..starts[v + 1] as usize]))
                .collect()
        } else {
            Vec::new()
        };
        Column {
            members: Arc::new(members(values)),
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
