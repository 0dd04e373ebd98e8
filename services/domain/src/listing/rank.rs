//! Ordering records for a page: packed sort tuples ranked by selection,
//! or a walk of a precomputed order that ranks only the groups it needs.

use std::collections::BinaryHeap;

use roaring::RoaringBitmap;

use super::{Listing, PACKED, Ranked, SortKey};
use crate::query::Schema;

impl<S: Schema> Listing<S> {
    /// Orders `rows` by `keys` (then id) and returns `start..end` of them.
    /// Each row's keys are read once into a packed tuple, so comparisons
    /// touch no column.
    pub fn rank(
        &self,
        rows: Vec<Ranked>,
        keys: &[(SortKey, bool)],
        start: usize,
        end: usize,
    ) -> Vec<Ranked> {
        let end = end.min(rows.len());
        if start >= end {
            return Vec::new();
        }
        if end * 16 < rows.len() {
            return self.top(rows, keys, start, end);
        }
        let mut packed: Vec<([u64; PACKED], Ranked)> =
            rows.into_iter().map(|r| (self.pack(&r, keys), r)).collect();
        let cmp = |a: &([u64; PACKED], Ranked), b: &([u64; PACKED], Ranked)| a.0.cmp(&b.0);
        if end < packed.len() {
            packed.select_nth_unstable_by(end - 1, cmp);
            packed.truncate(end);
        }
        packed.sort_unstable_by(cmp);
        packed.drain(start..end).map(|(_, r)| r).collect()
    }

    /// As `rank`, for a page near the front of many rows: the first `end`
    /// kept in a heap, so nothing is copied for the rows that miss it.
    pub(super) fn top(
        &self,
        rows: Vec<Ranked>,
        keys: &[(SortKey, bool)],
        start: usize,
        end: usize,
    ) -> Vec<Ranked> {
        let mut heap: BinaryHeap<([u64; PACKED], u32, i64)> = BinaryHeap::with_capacity(end + 1);
        for r in rows {
            // Most rows lose on the first key alone: no full tuple for them.
            if heap.len() == end
                && let (Some(worst), Some(&(key, desc))) = (heap.peek(), keys.first())
            {
                let (value, width) = self.key_of(&r, key, desc);
                let lead = if width == 64 { value } else { value << 32 };
                if lead > worst.0[0] & (u64::MAX << (64 - width)) {
                    continue;
                }
            }
            let entry = (self.pack(&r, keys), r.row, r.extra);
            if heap.len() < end {
                heap.push(entry);
            } else if let Some(mut worst) = heap.peek_mut()
                && entry.0 < worst.0
            {
                *worst = entry;
            }
        }
        let mut best = heap.into_sorted_vec();
        best.drain(start..)
            .map(|(_, row, extra)| Ranked { row, extra })
            .collect()
    }

    /// The sort keys of `r` as one tuple ordered as `keys` then id order
    /// it: 64 bits for a caller's value, 32 per column rank and for the id
    /// rank, each inverted when descending.
    fn pack(&self, r: &Ranked, keys: &[(SortKey, bool)]) -> [u64; PACKED] {
        let mut words = [0u64; PACKED];
        let mut bits = 0usize;
        let mut push = |value: u64, width: usize| {
            if width == 64 {
                bits = bits.next_multiple_of(64);
                words[bits / 64] = value;
            } else {
                words[bits / 64] |= value << (32 - bits % 64);
            }
            bits += width;
        };
        for &(key, desc) in keys {
            let (value, width) = self.key_of(r, key, desc);
            push(value, width);
        }
        push(u64::from(self.id_rank[r.row as usize]), 32);
        words
    }

    /// One key of `r` as it is packed: its value and width in bits.
    fn key_of(&self, r: &Ranked, key: SortKey, desc: bool) -> (u64, usize) {
        match key {
            SortKey::Extra => {
                let v = (r.extra as u64) ^ (1 << 63);
                (if desc { !v } else { v }, 64)
            }
            SortKey::Column(c) => {
                let v = u64::from(self.columns[c].column.rank[r.row as usize]);
                (if desc { !v & 0xffff_ffff } else { v }, 32)
            }
        }
    }

    /// Walks the first key's order group by group (records with an equal
    /// first key), ranking a group by the other keys only where it overlaps
    /// the page.
    pub(super) fn walk(
        &self,
        keys: &[(SortKey, bool)],
        set: Option<&RoaringBitmap>,
        start: usize,
        end: usize,
    ) -> Vec<u32> {
        let (first, desc) = keys[0];
        let SortKey::Column(c) = first else {
            return Vec::new();
        };
        let column = &self.columns[c].column;
        let wanted = |row: &u32| set.is_none_or(|s| s.contains(*row));
        if keys.len() == 1 {
            return column
                .rows(desc, 0)
                .filter(wanted)
                .skip(start)
                .take(end - start)
                .collect();
        }
        let mut out = Vec::with_capacity(end - start);
        let mut seen = 0;
        for group in column.groups(desc, 0) {
            if seen >= end {
                break;
            }
            let size = group.len();
            if set.is_none() && seen + size <= start {
                seen += size;
                continue;
            }
            let members: Vec<Ranked> = group
                .iter()
                .filter(|r| wanted(r))
                .map(|&row| Ranked { row, extra: 0 })
                .collect();
            let from = start.saturating_sub(seen);
            let to = (end - seen).min(members.len());
            seen += members.len();
            out.extend(
                self.rank(members, &keys[1..], from, to)
                    .iter()
                    .map(|r| r.row),
            );
        }
        out
    }
}
