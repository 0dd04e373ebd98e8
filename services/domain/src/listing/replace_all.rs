//! Several records' values replaced in one column at once (a search
//! follow step holds about ten price changes, each a new name and new
//! prices): the next version's arrays are written in one pass for all of
//! them. Replacing them one by one copied the column once and then shifted
//! its order and starts, and re-ranked every record when a value came or
//! went, once per record: a step of k changes moved each changed column's
//! arrays about 2k times.

use std::collections::BTreeMap;

use super::column::{Column, Key, MISSING};
use super::spare;

/// Where the records of one value of the next version come from.
struct Arrivals<'a> {
    /// The records that take the value, in id order.
    rows: Vec<u32>,
    /// Its place among the values held: before `distinct[at]` when new,
    /// the value itself when held.
    at: usize,
    new: Option<&'a Key>,
}

impl Column {
    /// This column with each `(row, key)` of `moves` holding `key` instead,
    /// written anew (this one is left as it is), when every move is a plain
    /// replace (see `replaced`) and the rows are distinct. None otherwise:
    /// the caller edits a copy in place.
    pub(super) fn replaced_all(&self, moves: &[(u32, Key)], id_rank: &[u32]) -> Option<Column> {
        if !self.bitmaps.is_empty() || self.keeps_bitmaps || !distinct_rows(moves) {
            return None;
        }
        let plain = |k: &Key| !matches!(k, Key::TextSet(_));
        let mut leaving: BTreeMap<usize, Vec<u32>> = BTreeMap::new();
        for (row, key) in moves {
            let old = *self.rank.get(*row as usize)?;
            let held = self.distinct.get(old as usize)?;
            if old == MISSING || !plain(held) || !plain(key) || held == key {
                return None;
            }
            leaving.entry(old as usize).or_default().push(*row);
        }
        let arrivals = self.arrivals(moves, id_rank);
        let joined: BTreeMap<usize, &[u32]> = (arrivals.iter())
            .filter(|a| a.new.is_none())
            .map(|a| (a.at, a.rows.as_slice()))
            .collect();
        let dropped: Vec<usize> = (leaving.iter())
            .filter(|&(v, rows)| self.group(*v).len() == rows.len() && !joined.contains_key(v))
            .map(|(&v, _)| v)
            .collect();
        let mut distinct = self.distinct.clone();
        for &v in dropped.iter().rev() {
            distinct.remove(v);
        }
        for key in arrivals.iter().filter_map(|a| a.new) {
            let at = distinct.binary_search(key).err()?;
            distinct.insert(at, key.clone());
        }
        let rank = self.ranks(&dropped, &arrivals, &distinct)?;
        for rows in leaving.values_mut() {
            rows.sort_unstable();
        }
        let (asc, starts) = self.orders(&leaving, &joined, &dropped, &arrivals, id_rank);
        Some(self.written(distinct, rank, asc, starts))
    }

    /// The values `moves` bring, in order (a held value at its place, a
    /// new one before the held value it sorts below), each with its rows.
    fn arrivals<'a>(&self, moves: &'a [(u32, Key)], id_rank: &[u32]) -> Vec<Arrivals<'a>> {
        let mut by_key: BTreeMap<&Key, Vec<u32>> = BTreeMap::new();
        for (row, key) in moves {
            by_key.entry(key).or_default().push(*row);
        }
        (by_key.into_iter())
            .map(|(key, mut rows)| {
                rows.sort_unstable_by_key(|&r| id_rank[r as usize]);
                match self.distinct.binary_search(key) {
                    Ok(at) => Arrivals {
                        rows,
                        at,
                        new: None,
                    },
                    Err(at) => Arrivals {
                        rows,
                        at,
                        new: Some(key),
                    },
                }
            })
            .collect()
    }

    /// Each record's rank in the next version's `distinct`.
    fn ranks(
        &self,
        dropped: &[usize],
        arrivals: &[Arrivals<'_>],
        distinct: &imbl::Vector<Key>,
    ) -> Option<Vec<u32>> {
        // A held value's next rank: less the dropped values before it,
        // plus the new values sorting below it.
        let added: Vec<usize> = (arrivals.iter())
            .filter(|a| a.new.is_some())
            .map(|a| a.at)
            .collect();
        let (mut gone, mut new) = (0, 0);
        let remap: Vec<u32> = (0..self.distinct.len())
            .map(|v| {
                while added.get(new).is_some_and(|&at| at <= v) {
                    new += 1;
                }
                let next = (v + new - gone) as u32;
                gone += usize::from(dropped.get(gone) == Some(&v));
                next
            })
            .collect();
        let mut rank = spare::take(self.rank.len());
        rank.extend((self.rank.iter()).map(|&r| remap.get(r as usize).copied().unwrap_or(MISSING)));
        for a in arrivals {
            let to = match a.new {
                Some(key) => distinct.binary_search(key).ok()? as u32,
                None => remap[a.at],
            };
            for &row in &a.rows {
                rank[row as usize] = to;
            }
        }
        Some(rank)
    }

    /// The next version's ascending order and starts: runs of values no
    /// move touches copied whole, each touched group written without the
    /// records that leave it (`leaving`, sorted) and with those that join
    /// it (`joined`, in id order), each new value's group in its place.
    fn orders(
        &self,
        leaving: &BTreeMap<usize, Vec<u32>>,
        joined: &BTreeMap<usize, &[u32]>,
        dropped: &[usize],
        arrivals: &[Arrivals<'_>],
        id_rank: &[u32],
    ) -> (Vec<u32>, Vec<u32>) {
        let values = self.distinct.len();
        let mut asc = spare::take(self.asc.len());
        let mut starts = spare::take(values + arrivals.len() + 1);
        // Touched places in order: (place, held, arrival); a new value
        // goes before the held value at its place.
        let mut touched: Vec<(usize, bool, usize)> =
            leaving.keys().map(|&v| (v, true, 0)).collect();
        touched.extend(joined.keys().map(|&v| (v, true, 0)));
        touched.extend(
            (arrivals.iter().enumerate())
                .filter(|(_, a)| a.new.is_some())
                .map(|(i, a)| (a.at, false, i)),
        );
        touched.sort_unstable();
        touched.dedup();
        let mut next = 0;
        for (at, held, arrival) in touched {
            self.copy_groups(next..at, &mut asc, &mut starts);
            next = next.max(at);
            if !held {
                starts.push(asc.len() as u32);
                asc.extend_from_slice(&arrivals[arrival].rows);
                continue;
            }
            next = at + 1;
            if dropped.binary_search(&at).is_ok() {
                continue;
            }
            starts.push(asc.len() as u32);
            let gone = leaving.get(&at).map_or(&[][..], Vec::as_slice);
            let join = joined.get(&at).copied().unwrap_or_default();
            merged(self.group(at), gone, join, id_rank, &mut asc);
        }
        self.copy_groups(next..values, &mut asc, &mut starts);
        starts.push(asc.len() as u32);
        asc.extend_from_slice(self.group(values));
        (asc, starts)
    }

    /// Values `range` as they were, their records and starts appended.
    fn copy_groups(
        &self,
        range: std::ops::Range<usize>,
        asc: &mut Vec<u32>,
        starts: &mut Vec<u32>,
    ) {
        if range.is_empty() {
            return;
        }
        let from = self.starts[range.start];
        let to = self.range(range.end - 1).1;
        let shift = asc.len() as i64 - i64::from(from);
        starts.extend(
            self.starts[range]
                .iter()
                .map(|&s| (i64::from(s) + shift) as u32),
        );
        asc.extend_from_slice(&self.asc[from as usize..to]);
    }
}

/// `group` (records in id order) without `gone` (sorted) and with `join`
/// (in id order) in their places, appended to `out`.
fn merged(group: &[u32], gone: &[u32], join: &[u32], id_rank: &[u32], out: &mut Vec<u32>) {
    let kept = |rows: &[u32], out: &mut Vec<u32>| {
        out.extend(rows.iter().filter(|r| gone.binary_search(r).is_err()));
    };
    let mut from = 0;
    for &row in join {
        let id = id_rank[row as usize];
        let at = from + group[from..].partition_point(|&r| id_rank[r as usize] < id);
        kept(&group[from..at], out);
        out.push(row);
        from = at;
    }
    kept(&group[from..], out);
}

fn distinct_rows(moves: &[(u32, Key)]) -> bool {
    let mut rows: Vec<u32> = moves.iter().map(|(row, _)| *row).collect();
    rows.sort_unstable();
    rows.windows(2).all(|w| w[0] != w[1])
}
