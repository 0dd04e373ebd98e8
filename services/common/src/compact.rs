//! Records held compactly: each one compressed on its own with LZ4 against
//! a shared dictionary (one typical record: most of a record's bytes are
//! field tags, locales, URLs and words that every record repeats), packed
//! into arenas of about a megabyte, so a record costs its compressed bytes
//! and eight bytes of bookkeeping, not an allocation of its own. Reading a
//! record decompresses that record only. Arenas are filled once and never
//! grow by copying; parts built on several cores join by moving arenas.

use bytes::Bytes;

/// Compressed bytes an arena is filled to before the next one starts.
const ARENA_BYTES: usize = 1 << 20;

/// What records are compressed against.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Dictionary(Bytes);

impl Dictionary {
    pub fn new(typical: impl Into<Bytes>) -> Self {
        Self(typical.into())
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
struct Arena {
    bytes: Vec<u8>,
    /// Per record: where it ends in `bytes`.
    ends: Vec<u32>,
    /// Per record: its length uncompressed.
    lens: Vec<u32>,
}

impl Arena {
    fn with_capacity(bytes: usize) -> Self {
        Self {
            bytes: Vec::with_capacity(bytes),
            ..Self::default()
        }
    }

    fn span(&self, i: usize) -> (usize, usize) {
        let start = i.checked_sub(1).map_or(0, |p| self.ends[p]) as usize;
        (start, self.ends[i] as usize)
    }
}

/// Compressed records, in the order they were added.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    dictionary: Dictionary,
    arenas: Vec<Arena>,
    /// The index of each arena's first record.
    firsts: Vec<usize>,
    len: usize,
}

fn corrupt(e: impl std::fmt::Display) -> String {
    format!("stored record: {e}")
}

impl Records {
    pub fn new(dictionary: Dictionary) -> Self {
        Self {
            dictionary,
            ..Self::default()
        }
    }

    pub fn dictionary(&self) -> &Dictionary {
        &self.dictionary
    }

    /// Compresses and appends `raw`; `scratch` is reused between calls.
    pub fn push(&mut self, raw: &[u8], scratch: &mut Vec<u8>) {
        let bound = lz4_flex::block::get_maximum_output_size(raw.len());
        if scratch.len() < bound {
            scratch.resize(bound, 0);
        }
        let compressed =
            match lz4_flex::block::compress_into_with_dict(raw, scratch, &self.dictionary.0) {
                Ok(n) => &scratch[..n],
                // The output holds the worst case, so this does not happen; a
                // block without the dictionary still reads back with it.
                Err(_) => {
                    *scratch = lz4_flex::block::compress(raw);
                    &scratch[..]
                }
            };
        let full = self
            .arenas
            .last()
            .is_none_or(|a| a.bytes.len() + compressed.len() > ARENA_BYTES.max(a.bytes.capacity()));
        if full {
            self.firsts.push(self.len);
            self.arenas
                .push(Arena::with_capacity(ARENA_BYTES.max(compressed.len())));
        }
        if let Some(arena) = self.arenas.last_mut() {
            arena.bytes.extend_from_slice(compressed);
            arena.ends.push(arena.bytes.len() as u32);
            arena.lens.push(raw.len() as u32);
        }
        self.len += 1;
    }

    /// Gives back the unused end of the last arena (once no more records
    /// come): at most one arena's bytes are copied.
    pub fn finish(&mut self) {
        if let Some(a) = self.arenas.last_mut() {
            a.bytes.shrink_to_fit();
            a.ends.shrink_to_fit();
            a.lens.shrink_to_fit();
        }
    }

    /// `parts` (compressed against the same dictionary) one after another,
    /// each finished; their arenas are moved, not copied.
    pub fn concat(dictionary: Dictionary, parts: Vec<Records>) -> Records {
        let mut out = Records::new(dictionary);
        for mut part in parts {
            part.finish();
            for (arena, first) in part.arenas.into_iter().zip(part.firsts) {
                out.firsts.push(out.len + first);
                out.arenas.push(arena);
            }
            out.len += part.len;
        }
        out
    }

    /// These records with record `index` replaced by `raw`: the arena
    /// holding it is rebuilt, the others are shared copies.
    pub fn replaced(&self, index: usize, raw: &[u8]) -> Records {
        let mut out = self.clone();
        let Some((a, i)) = self.locate(index) else {
            return out;
        };
        let old = &self.arenas[a];
        let mut rebuilt = Records::new(self.dictionary.clone());
        let mut scratch = Vec::new();
        for r in 0..old.ends.len() {
            let record = if r == i {
                raw.to_vec()
            } else {
                self.get(self.firsts[a] + r).unwrap_or_default()
            };
            rebuilt.push(&record, &mut scratch);
        }
        // One arena's worth of records refills one arena (or two, when the
        // new record is larger): spliced in place of the old one.
        rebuilt.finish();
        out.arenas.splice(a..=a, rebuilt.arenas);
        out.firsts
            .splice(a..=a, rebuilt.firsts.iter().map(|f| self.firsts[a] + f));
        out
    }

    /// The arena and position within it of record `index`.
    fn locate(&self, index: usize) -> Option<(usize, usize)> {
        if index >= self.len {
            return None;
        }
        let a = self.firsts.partition_point(|&f| f <= index) - 1;
        Some((a, index - self.firsts[a]))
    }

    /// Record `index`, decompressed.
    pub fn get(&self, index: usize) -> Result<Vec<u8>, String> {
        let (a, i) = self
            .locate(index)
            .ok_or_else(|| corrupt(format!("no record {index}")))?;
        let arena = &self.arenas[a];
        let (start, end) = arena.span(i);
        let mut out = vec![0; arena.lens[i] as usize];
        let n = lz4_flex::block::decompress_into_with_dict(
            &arena.bytes[start..end],
            &mut out,
            &self.dictionary.0,
        )
        .map_err(corrupt)?;
        if n != out.len() {
            return Err(corrupt("short record"));
        }
        Ok(out)
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held: compressed records, bookkeeping and the dictionary.
    pub fn held_bytes(&self) -> usize {
        let arenas: usize = self
            .arenas
            .iter()
            .map(|a| a.bytes.capacity() + a.ends.capacity() * 8)
            .sum();
        arenas + self.dictionary.0.len()
    }

    /// Bytes of the records uncompressed.
    pub fn raw_bytes(&self) -> u64 {
        self.arenas
            .iter()
            .flat_map(|a| &a.lens)
            .map(|&l| u64::from(l))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(n: usize) -> Vec<u8> {
        format!("{{\"name\":\"product {n}\",\"locale\":\"en-AU\",\"url\":\"https://x/{n}\"}}")
            .repeat(n % 4 + 1)
            .into_bytes()
    }

    fn filled(from: usize, to: usize, dictionary: &Dictionary) -> Records {
        let mut records = Records::new(dictionary.clone());
        let mut scratch = Vec::new();
        for n in from..to {
            records.push(&record(n), &mut scratch);
        }
        records
    }

    #[test]
    fn records_read_back_as_written_and_smaller() {
        let dictionary = Dictionary::new(record(7));
        let a = filled(0, 50, &dictionary);
        let mut b = Records::new(dictionary.clone());
        let mut scratch = Vec::new();
        b.push(b"", &mut scratch);
        b.push(&[0xff; 300], &mut scratch);
        let all = Records::concat(dictionary, vec![a, b]);
        assert_eq!(all.len(), 52);
        for n in 0..50 {
            assert_eq!(all.get(n).unwrap(), record(n));
        }
        assert_eq!(all.get(50).unwrap(), b"");
        assert_eq!(all.get(51).unwrap(), vec![0xff; 300]);
        assert!(all.get(52).is_err());
        assert!((all.held_bytes() as u64) < all.raw_bytes() + 2 * ARENA_BYTES as u64);
        let c = all.replaced(3, b"three");
        assert_eq!(c.get(3).unwrap(), b"three");
        assert_eq!(c.get(4).unwrap(), record(4));
        assert_eq!(c.get(51).unwrap(), vec![0xff; 300]);
        assert_eq!(all.get(3).unwrap(), record(3));
    }

    #[test]
    fn many_arenas_join_and_one_record_is_replaced_in_its_own() {
        let dictionary = Dictionary::new(record(7));
        // Incompressible records of 100 KB: about ten per arena.
        let big = |n: usize| -> Vec<u8> {
            let mut x = n as u64 + 1;
            (0..100_000)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (x >> 56) as u8
                })
                .collect()
        };
        let mut parts = Vec::new();
        let mut scratch = Vec::new();
        for p in 0..3 {
            let mut part = Records::new(dictionary.clone());
            for n in p * 25..(p + 1) * 25 {
                part.push(&big(n), &mut scratch);
            }
            parts.push(part);
        }
        let all = Records::concat(dictionary, parts);
        assert!(all.arenas.len() >= 6);
        let swapped = all.replaced(37, &record(1));
        for n in (0..75).filter(|&n| n != 37) {
            assert_eq!(all.get(n).unwrap(), big(n));
            assert_eq!(swapped.get(n).unwrap(), big(n), "record {n}");
        }
        assert_eq!(swapped.get(37).unwrap(), record(1));
        assert_eq!(swapped.len(), 75);
    }
}
