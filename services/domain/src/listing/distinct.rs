//! A column's distinct values in order and each record's rank among them.
//!
//! Built for every column at each start, by the catalog and by search, so
//! each kind of column takes the cheapest path that gives the same answer:
//! a hash map when the values are few (brands, statuses, flags, prices,
//! category and attribute sets), a sort when they are many (keys, ids,
//! creation times), where hashing each value only to find it new cost more
//! than sorting them all. At 1,000,000 products the two listings' columns
//! were 13% of a start's CPU (`examples/listing_build.rs`).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::column::{Key, MISSING};
use crate::query::Value;

/// Values hashed before a column is taken to have too many to hash: then
/// it is sorted instead.
pub(super) const HASHED: usize = 1 << 16;

/// Each record's rank among the distinct values (or `MISSING`), and those
/// values in order.
pub(super) fn ranks(values: &[Value<'_>]) -> (Vec<u32>, Vec<Key>) {
    ranks_with(values, HASHED)
}

/// `ranks`, hashing at most `cap` distinct values before sorting instead.
pub(super) fn ranks_with(values: &[Value<'_>], cap: usize) -> (Vec<u32>, Vec<Key>) {
    let kind = values.iter().find(|v| **v != Value::Missing).copied();
    let numbered = match kind {
        None => Some((vec![MISSING; values.len()], Vec::new())),
        Some(Value::Text(_)) => number(values, cap, |v| match v {
            Value::Text(text) => Some(text),
            _ => None,
        }),
        Some(Value::TextSet(_)) => number(values, cap, |v| match v {
            Value::TextSet(set) => Some(SameArcs(set)),
            _ => None,
        }),
        Some(_) => number(values, cap, Some),
    };
    if let Some((provisional, firsts)) = numbered {
        return in_order(provisional, &firsts);
    }
    text_ranks(values)
        .or_else(|| scalar_ranks(values))
        .unwrap_or_else(|| {
            let (provisional, firsts) = number(values, usize::MAX, Some)
                .unwrap_or_else(|| (vec![MISSING; values.len()], Vec::new()));
            in_order(provisional, &firsts)
        })
}

/// A set of texts compared by which `Arc`s it holds: a build interns its
/// sets' members, so equal sets mostly hold the same ones, and hashing
/// their addresses is cheaper than their texts. Sets with equal texts in
/// other `Arc`s are numbered apart, then made one by `in_order`; sets not
/// interned at all exceed the cap and are hashed by their texts.
#[derive(Clone, Copy)]
struct SameArcs<'a>(&'a [Arc<str>]);

impl Hash for SameArcs<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_usize(self.0.len());
        for member in self.0 {
            state.write_usize(Arc::as_ptr(member).cast::<u8>() as usize);
        }
    }
}

impl PartialEq for SameArcs<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.len() == other.0.len() && self.0.iter().zip(other.0).all(|(a, b)| Arc::ptr_eq(a, b))
    }
}

impl Eq for SameArcs<'_> {}

/// Each record numbered by its value's first appearance (by `identity`,
/// or `MISSING`), with the first record of each number; None once more
/// than `cap` numbers were given, or a value has no identity.
fn number<'a, K: Hash + Eq>(
    values: &[Value<'a>],
    cap: usize,
    identity: impl Fn(Value<'a>) -> Option<K>,
) -> Option<(Vec<u32>, Vec<Value<'a>>)> {
    let mut seen: foldhash::HashMap<K, u32> = foldhash::HashMap::default();
    let mut firsts: Vec<Value<'a>> = Vec::new();
    let mut provisional = Vec::with_capacity(values.len());
    for &value in values {
        if value == Value::Missing {
            provisional.push(MISSING);
            continue;
        }
        let n = *seen.entry(identity(value)?).or_insert_with(|| {
            firsts.push(value);
            firsts.len() as u32 - 1
        });
        if firsts.len() > cap {
            return None;
        }
        provisional.push(n);
    }
    Some((provisional, firsts))
}

/// Numbers by first appearance made ranks in value order; numbers of
/// equal values become one rank.
fn in_order(mut rank: Vec<u32>, firsts: &[Value<'_>]) -> (Vec<u32>, Vec<Key>) {
    let mut sorted: Vec<u32> = (0..firsts.len() as u32).collect();
    sorted.sort_unstable_by(|&a, &b| firsts[a as usize].cmp(&firsts[b as usize]));
    let mut final_rank = vec![0u32; firsts.len()];
    let mut distinct: Vec<Key> = Vec::new();
    let mut last = None;
    for &first in &sorted {
        let value = firsts[first as usize];
        if last != Some(value) {
            distinct.extend(Key::of(value));
            last = Some(value);
        }
        final_rank[first as usize] = distinct.len() as u32 - 1;
    }
    for r in rank.iter_mut().filter(|r| **r != MISSING) {
        *r = final_rank[*r as usize];
    }
    (rank, distinct)
}

/// A number, flag or time as bits that sort as the value does, in the
/// top 96 bits of a sort key (the low 32 are the record); None for any
/// other value.
fn scalar_bits(value: Value<'_>) -> Option<u128> {
    const SIGN: u64 = 1 << 63;
    Some(match value {
        Value::Integer(i) => u128::from(i as u64 ^ SIGN) << 64,
        Value::Boolean(b) => u128::from(b) << 64,
        Value::Timestamp(seconds, nanos) => {
            (u128::from(seconds as u64 ^ SIGN) << 64) | (u128::from(nanos as u32 ^ (1 << 31)) << 32)
        }
        _ => return None,
    })
}

/// As `ranks`, for a column of one kind of number, flag or time (None for
/// any other): every record's value sorted with it.
fn scalar_ranks(values: &[Value<'_>]) -> Option<(Vec<u32>, Vec<Key>)> {
    let kind = std::mem::discriminant(values.iter().find(|v| **v != Value::Missing)?);
    let mut keys: Vec<u128> = Vec::with_capacity(values.len());
    for (row, &value) in values.iter().enumerate() {
        if value == Value::Missing {
            continue;
        }
        if std::mem::discriminant(&value) != kind {
            return None;
        }
        keys.push(scalar_bits(value)? | row as u128);
    }
    keys.sort_unstable();
    let mut rank = vec![MISSING; values.len()];
    let mut distinct: Vec<Key> = Vec::new();
    let mut last = None;
    for key in keys {
        let row = key as u32 as usize;
        if last != Some(key >> 32) {
            distinct.extend(Key::of(values[row]));
            last = Some(key >> 32);
        }
        rank[row] = distinct.len() as u32 - 1;
    }
    Some((rank, distinct))
}

/// The sort key of `text` from byte `offset` on: its next eight bytes,
/// big-endian and zero-padded (ordered as the strings are wherever they
/// differ: a zero pad sorts as or before any byte), then how many bytes
/// are left, counted up to 9 (of two equal chunks the text that ends
/// first is first; 9: both go on), then `index` (ties in index order).
fn chunk_key(text: &str, offset: usize, index: u32) -> u128 {
    let rest = text.as_bytes().get(offset..).unwrap_or_default();
    let head = match rest.first_chunk::<8>() {
        Some(eight) => u64::from_be_bytes(*eight),
        None => rest
            .iter()
            .enumerate()
            .fold(0, |head, (i, &b)| head | u64::from(b) << (56 - 8 * i)),
    };
    let left = rest.len().min(9) as u128;
    (u128::from(head) << 64) | (left << 32) | u128::from(index)
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
    let (order, new) = grouped_texts(present.len(), |i| present[i as usize].1);
    for (i, is_new) in order.into_iter().zip(new) {
        let (row, text) = present[i as usize];
        if is_new {
            distinct.push(Key::Text(text.into()));
        }
        rank[row as usize] = distinct.len() as u32 - 1;
    }
    Some((rank, distinct))
}

/// `0..len` ordered by `text(i)` (as `str`s compare), ties in index
/// order: eight bytes at a
/// time, and only texts equal so far go on to their next eight, so a
/// head that thousands share ("premium-leather-...", in keys and names)
/// costs integer compares, not a string compare per pair.
pub fn sorted_texts<'t>(len: usize, text: impl Fn(u32) -> &'t str) -> Vec<u32> {
    grouped_texts(len, text).0
}

/// `sorted_texts`, and whether each place in that order holds a text
/// other than the one before: known from the chunks the sort compared,
/// so no text is compared again (at 1,000,000 keys, comparing neighbours
/// whole was a tenth of building the column).
fn grouped_texts<'t>(len: usize, text: impl Fn(u32) -> &'t str) -> (Vec<u32>, Vec<bool>) {
    let mut order: Vec<u32> = (0..len as u32).collect();
    let mut new = vec![false; len];
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
            } else {
                // One text, or equal texts that ended in this chunk.
                new[start + a] = true;
            }
            a = b;
        }
    }
    (order, new)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use crate::listing::Column;

    /// Each record's rank by a search of the sorted distinct values.
    fn reference(values: &[Value<'_>]) -> (Vec<u32>, Vec<Key>) {
        let sorted: BTreeSet<Value<'_>> = values
            .iter()
            .copied()
            .filter(|v| *v != Value::Missing)
            .collect();
        let sorted: Vec<Value<'_>> = sorted.into_iter().collect();
        let rank = values
            .iter()
            .map(|v| match sorted.binary_search(v) {
                Ok(at) => at as u32,
                Err(_) => MISSING,
            })
            .collect();
        (rank, sorted.into_iter().filter_map(Key::of).collect())
    }

    /// Texts with long shared heads, some values held in two `Arc`s.
    fn pool() -> Vec<Arc<str>> {
        let words = [
            "premium-leather-",
            "premium-leather-boot",
            "a",
            "",
            "z\u{e9}",
        ];
        let mut pool: Vec<Arc<str>> = words.iter().map(|w| Arc::from(*w)).collect();
        pool.extend(
            words
                .iter()
                .take(3)
                .map(|w| Arc::<str>::from(w.to_string())),
        );
        pool
    }

    /// Per pick, a set of `n` texts of the pool from `a` on.
    fn sets(pool: &[Arc<str>], picks: &[(usize, usize, bool)]) -> Vec<Vec<Arc<str>>> {
        (picks.iter())
            .map(|&(a, n, _)| {
                (0..n)
                    .map(|i| pool[(a + 3 * i) % pool.len()].clone())
                    .collect()
            })
            .collect()
    }

    proptest! {
        #[test]
        fn hashed_sorted_and_reference_ranks_agree(
            kind in 0u8..5,
            picks in proptest::collection::vec((0usize..16, 0usize..4, any::<bool>()), 0..200),
            numbers in proptest::collection::vec(-3i64..3, 16),
        ) {
            let pool = pool();
            let sets = sets(&pool, &picks);
            let values: Vec<Value<'_>> = picks
                .iter()
                .zip(&sets)
                .map(|(&(a, _, present), set)| match (present, kind) {
                    (false, _) => Value::Missing,
                    (_, 0) => Value::Text(&pool[a % pool.len()]),
                    (_, 1) => Value::TextSet(set),
                    (_, 2) => Value::Integer(numbers[a] * (i64::MAX / 3)),
                    (_, 3) => Value::Timestamp(numbers[a], numbers[15 - a] as i32 * 7),
                    _ => Value::Boolean(a % 2 == 0),
                })
                .collect();
            let expected = reference(&values);
            prop_assert_eq!(&ranks_with(&values, usize::MAX), &expected);
            prop_assert_eq!(&ranks_with(&values, 0), &expected);
            prop_assert_eq!(&ranks_with(&values, 2), &expected);
        }

        #[test]
        fn bitmaps_and_members_hold_each_value_s_records(
            picks in proptest::collection::vec((0usize..16, 0usize..4, any::<bool>()), 0..200),
        ) {
            let pool = pool();
            let sets = sets(&pool, &picks);
            let values: Vec<Value<'_>> = picks
                .iter()
                .zip(&sets)
                .map(|(&(.., present), set)| if present { Value::TextSet(set) } else { Value::Missing })
                .collect();
            let by_id: Vec<u32> = (0..values.len() as u32).collect();
            let column = Column::build(&values, &by_id);
            for (v, bitmap) in column.bitmaps.iter().enumerate() {
                let rows: Vec<u32> = (0..values.len() as u32)
                    .filter(|&r| column.rank[r as usize] == v as u32)
                    .collect();
                prop_assert_eq!(bitmap.iter().collect::<Vec<u32>>(), rows);
            }
            for text in pool.iter() {
                let rows: Vec<u32> = (0..values.len() as u32)
                    .filter(|&r| matches!(values[r as usize], Value::TextSet(s) if s.contains(text)))
                    .collect();
                let held = column.members.get(&**text).map(|b| b.iter().collect::<Vec<u32>>());
                prop_assert_eq!(held.unwrap_or_default(), rows);
            }
        }
    }
}
