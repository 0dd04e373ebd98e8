//! A record's value replaced in a column that readers of the version
//! before still hold: the next version's arrays are written once from the
//! held ones with the change in them, not copied whole and then shifted
//! in place (each of a rename's arrays was read and written about three
//! times over: at 1,000,000 products, copying and shifting the name and
//! price columns was about half of the mesh's CPU under price changes).

use std::sync::Arc;

use super::column::{Column, Key, MISSING};
use super::spare;
use crate::query::Value;

/// What a replace does to a column's values: the record leaves value
/// `from` (dropped when it was the last with it) and joins value `to`
/// (counted after the drop; added when new).
#[derive(Clone, Copy)]
struct Move {
    from: usize,
    dropped: bool,
    to: usize,
    added: bool,
}

impl Move {
    /// Value `rank` (of the version before) after the move; none stays none.
    #[inline]
    fn rank(self, rank: u32) -> u32 {
        let present = rank != MISSING;
        let down = u32::from(self.dropped & present & (rank > self.from as u32));
        let rank = rank - down;
        let up = u32::from(self.added & present & (rank >= self.to as u32));
        rank + up
    }

    /// `starts` of the version before after the move (one record fewer in
    /// `from`, dropped when empty; one more in `to`, added when new).
    fn starts(self, starts: &[u32]) -> Vec<u32> {
        let skip = usize::from(self.dropped);
        // After the record left: `from`'s start kept, every later one a
        // record earlier, and the one after `from` gone with it when it
        // was `from`'s last. Pushes those of `lo..hi`, plus `add`.
        let held = |lo: usize, hi: usize, add: u32, out: &mut Vec<u32>| {
            let split = (self.from + 1).clamp(lo, hi);
            out.extend(starts[lo..split].iter().map(|&s| s + add));
            out.extend(starts[split + skip..hi + skip].iter().map(|&s| s - 1 + add));
        };
        let len = starts.len() - skip;
        let mut out = spare::take(len + usize::from(self.added));
        // Up to `to` as they were; a new value starts where the value
        // after it did; every later one a record further.
        let cut = if self.added { self.to } else { self.to + 1 };
        held(0, cut, 0, &mut out);
        if self.added {
            held(self.to, self.to + 1, 0, &mut out);
        }
        held(cut, len, 1, &mut out);
        out
    }
}

impl Column {
    /// This column with record `row` holding `value` instead, written anew
    /// (this one is left as it is), when it is a plain replace: a value
    /// held and one to hold (neither none nor a set), no bitmaps per
    /// value. None otherwise: the caller copies the column and edits it.
    pub(super) fn replaced(&self, row: u32, value: Value<'_>, id_rank: &[u32]) -> Option<Column> {
        let old = *self.rank.get(row as usize)?;
        let key = Key::of(value)?;
        let plain = |k: &Key| !matches!(k, Key::TextSet(_));
        let held = self.distinct.get(old as usize)?;
        if old == MISSING || !self.bitmaps.is_empty() || self.keeps_bitmaps {
            return None;
        }
        if !plain(held) || !plain(&key) || *held == key {
            return None;
        }
        let from = old as usize;
        let (lo, hi) = self.range(from);
        let dropped = hi - lo == 1;
        let mut distinct = self.distinct.clone();
        if dropped {
            distinct.remove(from);
        }
        let (to, added) = match distinct.binary_search(&key) {
            Ok(to) => (to, false),
            Err(at) => {
                distinct.insert(at, key);
                (at, true)
            }
        };
        let change = Move {
            from,
            dropped,
            to,
            added,
        };
        let mut rank = spare::take(self.rank.len());
        rank.extend(self.rank.iter().map(|&r| change.rank(r)));
        rank[row as usize] = to as u32;
        let starts = change.starts(&self.starts);
        let asc = self.moved(row, change, id_rank);
        Some(self.written(distinct, rank, asc, starts))
    }

    /// The next version of this column from its arrays written anew (no
    /// bitmaps per value; the same id sets).
    pub(super) fn written(
        &self,
        distinct: imbl::Vector<Key>,
        rank: Vec<u32>,
        asc: Vec<u32>,
        starts: Vec<u32>,
    ) -> Column {
        Column {
            distinct,
            rank,
            asc,
            starts,
            bitmaps: Vec::new(),
            members: Arc::clone(&self.members),
            keeps_bitmaps: false,
        }
    }

    /// The ascending order with `row` moved from its place in `change.from`
    /// to its place (by id) in `change.to`.
    fn moved(&self, row: u32, change: Move, id_rank: &[u32]) -> Vec<u32> {
        let (lo, hi) = self.range(change.from);
        let id = id_rank[row as usize];
        let leave = lo + self.asc[lo..hi].partition_point(|&r| id_rank[r as usize] < id);
        // The value `to` names in this version's numbering: the one after
        // the drop shifted back, or for a new value the one it goes before.
        let skip = usize::from(change.dropped && change.to >= change.from);
        let group = change.to + skip;
        let join = if change.added {
            self.range(group).0
        } else {
            let (lo, hi) = self.range(group);
            lo + self.asc[lo..hi].partition_point(|&r| id_rank[r as usize] < id)
        };
        let asc = &self.asc;
        let mut out = spare::take(asc.len());
        if join <= leave {
            out.extend_from_slice(&asc[..join]);
            out.push(row);
            out.extend_from_slice(&asc[join..leave]);
        } else {
            out.extend_from_slice(&asc[..leave]);
            out.extend_from_slice(&asc[leave + 1..join]);
            out.push(row);
        }
        let rest = if join <= leave { leave + 1 } else { join };
        out.extend_from_slice(&asc[rest..]);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::column::{Column, Key};
    use crate::query::Value;

    /// A small deterministic generator (the test needs no crate for it).
    struct Lcg(u64);

    impl Lcg {
        fn below(&mut self, n: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (self.0 >> 33) % n
        }

        /// `n` records in a random id order: by id, and each one's place.
        fn ids(&mut self, n: usize) -> (Vec<u32>, Vec<u32>) {
            let mut by_id: Vec<u32> = (0..n as u32).collect();
            for i in (1..n).rev() {
                by_id.swap(i, self.below(i as u64 + 1) as usize);
            }
            let mut id_rank = vec![0u32; n];
            for (rank, &row) in by_id.iter().enumerate() {
                id_rank[row as usize] = rank as u32;
            }
            (by_id, id_rank)
        }
    }

    fn same(a: &Column, b: &Column) -> bool {
        a.distinct == b.distinct
            && a.rank == b.rank
            && a.asc == b.asc
            && a.starts == b.starts
            && a.bitmaps == b.bitmaps
            && a.keeps_bitmaps == b.keeps_bitmaps
    }

    /// Each replace written anew from the column before is the replace
    /// made in place on a copy, through chains of replaces that drop
    /// values, add them, move records up and down, in columns of numbers
    /// and of texts, with records without a value among them.
    #[test]
    fn a_replace_written_anew_is_the_replace_made_in_place() {
        let texts: Vec<String> = (0..400).map(|i| format!("name {i:03}")).collect();
        let mut rng = Lcg(7);
        let mut written = 0;
        for round in 0..60 {
            let n = 80 + rng.below(120) as usize;
            let spread = 40 + rng.below(300);
            let numbers = round % 2 == 0;
            let value = |v: u64| match v {
                0 => Value::Missing,
                v if numbers => Value::Integer(v as i64),
                v => Value::Text(&texts[v as usize]),
            };
            let values: Vec<Value<'_>> = (0..n).map(|_| value(rng.below(spread))).collect();
            let (by_id, id_rank) = rng.ids(n);
            let mut column = Column::build(&values, &by_id);
            for _ in 0..40 {
                let row = rng.below(n as u64) as u32;
                let new = value(1 + rng.below(spread + 20));
                if column.value(row) == Key::of(new).as_ref() {
                    continue;
                }
                let mut in_place = column.clone();
                in_place.remove(row, &id_rank);
                in_place.insert(row, new, &id_rank);
                if let Some(anew) = column.replaced(row, new, &id_rank) {
                    assert!(same(&anew, &in_place), "round {round}, row {row}");
                    written += 1;
                }
                column = in_place;
            }
        }
        assert!(written > 1_000, "the written path ran {written} times");
    }

    /// Versions large enough that each is written into the arrays of the
    /// one before it (dropped: `spare`) answer as the column built anew
    /// from their values: nothing of a dropped version shows through.
    #[test]
    fn versions_written_into_dropped_arrays_are_the_column_built_anew() {
        let mut rng = Lcg(5);
        let n = super::super::spare::SMALLEST * 2 + 17;
        let mut values: Vec<Value<'_>> = (0..n)
            .map(|_| Value::Integer(rng.below(5_000) as i64))
            .collect();
        let (by_id, id_rank) = rng.ids(n);
        let mut column = Column::build(&values, &by_id);
        let mut written = 0;
        for _ in 0..12 {
            let row = rng.below(n as u64) as u32;
            let new = Value::Integer(5_000 + rng.below(5_000) as i64);
            values[row as usize] = new;
            let Some(next) = column.replaced(row, new, &id_rank) else {
                continue;
            };
            // The version before dropped first: its arrays are the next's.
            column = next;
            assert!(same(&column, &Column::build(&values, &by_id)));
            let mut copy = column.clone();
            copy.remove(row, &id_rank);
            copy.insert(row, new, &id_rank);
            assert!(same(&copy, &column));
            written += 1;
        }
        assert!(written > 8, "the written path ran {written} times");
    }

    /// Several replaces written anew at once are those replaces made in
    /// place one after another: values dropped by every record leaving
    /// them, taken by another record meanwhile, new ones (several between
    /// two held values), records joining a value others leave.
    #[test]
    fn replaces_written_anew_together_are_the_replaces_made_in_place() {
        let texts: Vec<String> = (0..400).map(|i| format!("name {i:03}")).collect();
        let mut rng = Lcg(11);
        let mut written = 0;
        for round in 0..200 {
            // More than 64 values: fewer keep a bitmap each, edited in place.
            let n = 100 + rng.below(150) as usize;
            let spread = 70 + rng.below(120);
            let numbers = round % 2 == 0;
            let value = |v: u64| match v {
                0 => Value::Missing,
                v if numbers => Value::Integer(v as i64 * 2),
                v => Value::Text(&texts[v as usize * 2 % 400]),
            };
            let values: Vec<Value<'_>> = (0..n).map(|_| value(rng.below(spread))).collect();
            let (by_id, id_rank) = rng.ids(n);
            let column = Column::build(&values, &by_id);
            let mut rows: Vec<u32> = (0..n as u32).collect();
            let mut moves = Vec::new();
            for _ in 0..1 + rng.below(12) {
                let row = rows.swap_remove(rng.below(rows.len() as u64) as usize);
                // Odd numbers and texts between the held ones: new values.
                let new = match (numbers, rng.below(3)) {
                    (true, 0) => Value::Integer(rng.below(spread) as i64 * 2 + 1),
                    (false, 0) => Value::Text(&texts[(rng.below(spread) * 2 + 1) as usize % 400]),
                    _ => value(1 + rng.below(spread)),
                };
                if column.value(row) != Key::of(new).as_ref() {
                    moves.push((row, new));
                }
            }
            let mut in_place = column.clone();
            for &(row, new) in &moves {
                in_place.remove(row, &id_rank);
                in_place.insert(row, new, &id_rank);
            }
            let keys: Option<Vec<(u32, Key)>> = moves
                .iter()
                .map(|&(row, v)| Some((row, Key::of(v)?)))
                .collect();
            if let Some(anew) = keys.and_then(|k| column.replaced_all(&k, &id_rank)) {
                assert!(
                    same(&anew, &in_place),
                    "round {round}, moves {}",
                    moves.len()
                );
                written += 1;
            }
        }
        assert!(written > 100, "the written path ran {written} times");
    }
}
