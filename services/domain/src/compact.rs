//! Records held compactly: each one compressed on its own with LZ4 against
//! a shared dictionary (one typical record: most of a record's bytes are
//! field tags, locales, URLs and words that every record repeats), packed
//! into arenas of 32 KiB, so a record costs its compressed bytes
//! and eight bytes of bookkeeping, not an allocation of its own. Reading a
//! record decompresses that record only. Arenas are filled once and never
//! grow by copying; parts built on several cores join by moving arenas.

use std::sync::Arc;

use bytes::Bytes;

mod arenas;
use arenas::Arenas;

/// Compressed bytes an arena is filled to before the next one starts:
/// small enough that a part's last, unfilled arena wastes little, large
/// enough that the bookkeeping of arenas is nothing.
const ARENA_BYTES: usize = 32 << 10;

/// What records are compressed against.
#[derive(Debug, Clone, PartialEq)]
pub struct Dictionary {
    bytes: Bytes,
    /// The bytes' 64-bit XXH3 hash: what a reader holding records
    /// compressed elsewhere names the dictionary by (equal in every
    /// process that holds the same bytes).
    id: u64,
}

impl Default for Dictionary {
    fn default() -> Self {
        Self::new(Bytes::new())
    }
}

impl Dictionary {
    pub fn new(typical: impl Into<Bytes>) -> Self {
        let bytes = typical.into();
        let id = xxhash_rust::xxh3::xxh3_64(&bytes);
        Self { bytes, id }
    }

    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// One record compressed against this dictionary, `len` bytes long
    /// decompressed.
    pub fn decompress(&self, lz4: &[u8], len: u32) -> Result<Vec<u8>, String> {
        decompress(lz4, len, &self.bytes)
    }

    /// As `decompress`, into `out`, reused from record to record.
    pub fn decompress_into(&self, lz4: &[u8], len: u32, out: &mut Vec<u8>) -> Result<(), String> {
        decompress_into(lz4, len, &self.bytes, out)
    }
}

fn decompress(lz4: &[u8], len: u32, dictionary: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    decompress_into(lz4, len, dictionary, &mut out)?;
    Ok(out)
}

/// As `decompress`, into `out` (its bytes replaced; zeroed only where it
/// grows).
fn decompress_into(
    lz4: &[u8],
    len: u32,
    dictionary: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), String> {
    out.resize(len as usize, 0);
    let n = lz4_flex::block::decompress_into_with_dict(lz4, out, dictionary).map_err(corrupt)?;
    if n != out.len() {
        return Err(corrupt("short record"));
    }
    Ok(())
}

/// `raw` compressed against `dictionary`, in `scratch` (grown to the
/// worst case once, then reused).
fn compress<'s>(raw: &[u8], dictionary: &[u8], scratch: &'s mut Vec<u8>) -> &'s [u8] {
    let bound = lz4_flex::block::get_maximum_output_size(raw.len());
    if scratch.len() < bound {
        scratch.resize(bound, 0);
    }
    match lz4_flex::block::compress_into_with_dict(raw, scratch, dictionary) {
        Ok(n) => &scratch[..n],
        // The output holds the worst case, so this does not happen; a
        // block without the dictionary still reads back with it.
        Err(_) => {
            *scratch = lz4_flex::block::compress(raw);
            &scratch[..]
        }
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

    /// Record `i` replaced by `lz4` (`len` decompressed), in place.
    fn replace(&mut self, i: usize, lz4: &[u8], len: u32) {
        let (start, end) = self.span(i);
        self.bytes.splice(start..end, lz4.iter().copied());
        self.moved(i, end - start, lz4.len(), len);
    }

    /// This arena with record `i` replaced: its bytes copied once, around
    /// the new record, rather than cloned and then moved to make room.
    fn replaced(&self, i: usize, lz4: &[u8], len: u32) -> Arena {
        let (start, end) = self.span(i);
        let mut bytes = Vec::with_capacity(self.bytes.len() - (end - start) + lz4.len());
        bytes.extend_from_slice(&self.bytes[..start]);
        bytes.extend_from_slice(lz4);
        bytes.extend_from_slice(&self.bytes[end..]);
        let mut next = Arena {
            bytes,
            ends: self.ends.clone(),
            lens: self.lens.clone(),
        };
        next.moved(i, end - start, lz4.len(), len);
        next
    }

    /// Record `i`, `was` bytes long, is now `now` (`len` decompressed):
    /// the records after it end that much later or earlier.
    fn moved(&mut self, i: usize, was: usize, now: usize, len: u32) {
        let (grown, shrunk) = (now as u32, was as u32);
        for e in &mut self.ends[i..] {
            *e = *e + grown - shrunk;
        }
        self.lens[i] = len;
    }
}

/// One record's block within a shared arena.
struct Block {
    arena: Arc<Arena>,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for Block {
    fn as_ref(&self) -> &[u8] {
        &self.arena.bytes[self.start..self.end]
    }
}

/// Appends one compressed record, in the last arena while it has room
/// (copied first if another version shares it).
fn append(
    arenas: &mut Arenas,
    firsts: &mut Vec<usize>,
    len: &mut usize,
    compressed: &[u8],
    raw_len: usize,
) {
    let full = arenas
        .last()
        .is_none_or(|a| a.bytes.len() + compressed.len() > ARENA_BYTES.max(a.bytes.capacity()));
    if full {
        firsts.push(*len);
        arenas.push(Arc::new(Arena::with_capacity(
            ARENA_BYTES.max(compressed.len()),
        )));
    }
    if let Some(arena) = arenas.last_mut() {
        arena.bytes.extend_from_slice(compressed);
        arena.ends.push(arena.bytes.len() as u32);
        arena.lens.push(raw_len as u32);
    }
    *len += 1;
}

/// Compressed records, in the order they were added.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Records {
    dictionary: Dictionary,
    /// Shared between versions: a change copies only the arena it touches
    /// (and its chunk of the list).
    arenas: Arenas,
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
        let dictionary = self.dictionary.bytes.clone();
        self.push_against(raw, &dictionary, scratch);
    }

    /// As `push`, compressed against `dictionary` instead of the shared
    /// one (a record that repeats another's bytes); read it back with
    /// `get_against` and the same dictionary.
    pub fn push_against(&mut self, raw: &[u8], dictionary: &[u8], scratch: &mut Vec<u8>) {
        let compressed = compress(raw, dictionary, scratch);
        append(
            &mut self.arenas,
            &mut self.firsts,
            &mut self.len,
            compressed,
            raw.len(),
        );
    }

    /// Appends a record compressed elsewhere against this dictionary, as
    /// `compressed(index)` gives it. Its bytes are checked when it is read.
    pub fn push_compressed(&mut self, lz4: &[u8], len: u32) {
        append(
            &mut self.arenas,
            &mut self.firsts,
            &mut self.len,
            lz4,
            len as usize,
        );
    }

    /// Record `index` as stored: its LZ4 block and its length decompressed.
    pub fn compressed(&self, index: usize) -> Option<(&[u8], u32)> {
        let (a, i) = self.locate(index)?;
        let arena = self.arenas.get(a);
        let (start, end) = arena.span(i);
        Some((&arena.bytes[start..end], arena.lens[i]))
    }

    /// As `compressed`, the block shared rather than borrowed: it keeps
    /// its arena alive (an edit copies an arena others hold), so a reply
    /// sends the held bytes without copying them.
    pub fn compressed_shared(&self, index: usize) -> Option<(Bytes, u32)> {
        let (a, i) = self.locate(index)?;
        let arena = self.arenas.get(a);
        let (start, end) = arena.span(i);
        let len = arena.lens[i];
        let block = Block {
            arena: arena.clone(),
            start,
            end,
        };
        Some((Bytes::from_owner(block), len))
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
            for (arena, first) in part.arenas.into_arenas().zip(part.firsts) {
                out.firsts.push(out.len + first);
                out.arenas.push(arena);
            }
            out.len += part.len;
        }
        out
    }

    /// Record `index` replaced by `raw`, compressed as `push` would;
    /// `scratch` is reused between calls.
    pub fn replace_raw(&mut self, index: usize, raw: &[u8], scratch: &mut Vec<u8>) {
        let dictionary = self.dictionary.bytes.clone();
        self.replace_against(index, raw, &dictionary, scratch);
    }

    /// Record `index` replaced by `raw`, compressed against `dictionary`
    /// as `push_against` would: straight into its arena, with no record
    /// list of its own on the way.
    pub fn replace_against(
        &mut self,
        index: usize,
        raw: &[u8],
        dictionary: &[u8],
        scratch: &mut Vec<u8>,
    ) {
        let compressed = compress(raw, dictionary, scratch);
        self.replace(index, compressed, raw.len() as u32);
    }

    /// Record `index` replaced by `lz4` (`len` bytes decompressed), in
    /// place: only its arena is copied, and only when another version
    /// shares it, so the changes of one version cost one copy of each
    /// arena they touch, not of the list of arenas per change.
    pub fn replace(&mut self, index: usize, lz4: &[u8], len: u32) {
        let Some((a, i)) = self.locate(index) else {
            return;
        };
        self.arenas.update(
            a,
            |arena| arena.replace(i, lz4, len),
            |arena| arena.replaced(i, lz4, len),
        );
    }

    /// Removes record `index`; the last record takes its place (as
    /// `Vec::swap_remove` does). Copies at most two arenas.
    pub fn swap_remove(&mut self, index: usize) {
        if index >= self.len {
            return;
        }
        let last = self.len - 1;
        if index != last
            && let Some((lz4, len)) = self.compressed(last).map(|(b, l)| (b.to_vec(), l))
        {
            self.replace(index, &lz4, len);
        }
        let Some((a, _)) = self.locate(last) else {
            return;
        };
        let arena = self.arenas.get_mut(a);
        arena.ends.pop();
        arena.lens.pop();
        let end = arena.ends.last().copied().unwrap_or(0) as usize;
        arena.bytes.truncate(end);
        if arena.ends.is_empty() {
            // The last record's arena is the last one.
            self.arenas.pop();
            self.firsts.remove(a);
        }
        self.len -= 1;
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
        let mut out = Vec::new();
        self.get_into(index, &mut out)?;
        Ok(out)
    }

    /// As `get`, into `out` (reused when records are read one after
    /// another).
    pub fn get_into(&self, index: usize, out: &mut Vec<u8>) -> Result<(), String> {
        let (lz4, len) = self
            .compressed(index)
            .ok_or_else(|| corrupt(format!("no record {index}")))?;
        decompress_into(lz4, len, &self.dictionary.bytes, out)
    }

    /// Record `index`, added by `push_against` with `dictionary`.
    pub fn get_against(&self, index: usize, dictionary: &[u8]) -> Result<Vec<u8>, String> {
        let (lz4, len) = self
            .compressed(index)
            .ok_or_else(|| corrupt(format!("no record {index}")))?;
        decompress(lz4, len, dictionary)
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
        arenas + self.dictionary.bytes.len()
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

    fn replaced(records: &Records, index: usize, raw: &[u8]) -> Records {
        let mut one = Records::new(records.dictionary().clone());
        one.push(raw, &mut Vec::new());
        let (lz4, len) = one.compressed(0).unwrap();
        let mut next = records.clone();
        next.replace(index, lz4, len);
        next
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
    fn a_record_replaced_raw_is_stored_as_one_pushed() {
        let dictionary = Dictionary::new(record(3));
        let base = filled(0, 300, &dictionary);
        let own = record(2);
        let mut scratch = Vec::new();
        let (mut raw, mut against) = (base.clone(), base.clone());
        for (i, n) in [(0, 9_001), (150, 9_002), (299, 9_003), (150, 9_004)] {
            raw.replace_raw(i, &record(n), &mut scratch);
            against.replace_against(i, &record(n), &own, &mut scratch);
            let mut pushed = Records::new(dictionary.clone());
            pushed.push(&record(n), &mut Vec::new());
            assert_eq!(raw.compressed(i), pushed.compressed(0), "{i}");
            assert_eq!(raw.get(i).unwrap(), record(n));
            let mut pushed = Records::new(dictionary.clone());
            pushed.push_against(&record(n), &own, &mut Vec::new());
            assert_eq!(against.compressed(i), pushed.compressed(0), "{i}");
            assert_eq!(against.get_against(i, &own).unwrap(), record(n));
        }
        // The version they were made from is as it was.
        assert_eq!(base, filled(0, 300, &dictionary));
        assert_eq!(raw.get(1).unwrap(), record(1));
    }

    #[test]
    fn a_shared_block_outlives_an_edit_of_its_arena() {
        let dictionary = Dictionary::new(record(3));
        let mut records = filled(0, 200, &dictionary);
        let (shared, len) = records.compressed_shared(42).unwrap();
        assert_eq!((&shared[..], len), records.compressed(42).unwrap());
        let mut one = Records::new(dictionary.clone());
        one.push(&record(9_999), &mut Vec::new());
        let (lz4, new_len) = one.compressed(0).unwrap();
        // The block holds its arena: the edit copies it first.
        records.replace(42, lz4, new_len);
        assert_eq!(records.get(42).unwrap(), record(9_999));
        assert_eq!(dictionary.decompress(&shared, len).unwrap(), record(42));
        assert!(records.compressed_shared(200).is_none());
    }

    #[test]
    fn swap_remove_keeps_records_dense_and_versions_apart() {
        let dictionary = Dictionary::new(record(3));
        let mut records = filled(0, 2_000, &dictionary);
        let mut model: Vec<Vec<u8>> = (0..2_000).map(record).collect();
        let before = records.clone();
        for index in [0, 1_999, 777, 5, 1_000, 1_000] {
            let index = index % model.len();
            records.swap_remove(index);
            model.swap_remove(index);
        }
        records.push(&record(9_999), &mut Vec::new());
        model.push(record(9_999));
        assert_eq!(records.len(), model.len());
        for (i, want) in model.iter().enumerate() {
            assert_eq!(&records.get(i).unwrap(), want, "record {i}");
        }
        assert_eq!(before.len(), 2_000, "the version removed from is untouched");
        assert_eq!(before.get(0).unwrap(), record(0));
        let mut one = filled(0, 1, &dictionary);
        one.swap_remove(0);
        assert!(one.is_empty() && one.get(0).is_err());
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
        let c = replaced(&all, 3, b"three");
        assert_eq!(c.get(3).unwrap(), b"three");
        assert_eq!(c.get(4).unwrap(), record(4));
        assert_eq!(c.get(51).unwrap(), vec![0xff; 300]);
        assert_eq!(all.get(3).unwrap(), record(3));
        // Read into one buffer, longer records and shorter, each whole.
        let mut out = Vec::new();
        for n in [51, 0, 50, 3, 51, 2] {
            all.get_into(n, &mut out).unwrap();
            assert_eq!(out, all.get(n).unwrap());
        }
        // Moved as stored to another holder of the same dictionary.
        let mut copy = Records::new(all.dictionary().clone());
        for n in 0..all.len() {
            let (lz4, len) = all.compressed(n).unwrap();
            copy.push_compressed(lz4, len);
        }
        assert_eq!(copy.get(10).unwrap(), record(10));
        assert_eq!(copy.get(51).unwrap(), vec![0xff; 300]);
        assert!(copy.compressed(52).is_none());
        // Bytes that are not a record are an error when read, not a panic.
        copy.push_compressed(&[0xf0, 0xff], 1000);
        assert!(copy.get(52).is_err());
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
        let swapped = replaced(&all, 37, &record(1));
        for n in (0..75).filter(|&n| n != 37) {
            assert_eq!(all.get(n).unwrap(), big(n));
            assert_eq!(swapped.get(n).unwrap(), big(n), "record {n}");
        }
        assert_eq!(swapped.get(37).unwrap(), record(1));
        assert_eq!(swapped.len(), 75);
    }

    /// A version's changes edit its own copy of each arena they touch,
    /// the first change copying it: a record grown, shrunk and changed
    /// again beside its neighbours in one arena, another in the next
    /// arena; the version before reads as it was, and untouched arenas
    /// stay shared.
    #[test]
    fn changes_of_one_version_edit_its_copy_of_each_arena_in_place() {
        let dictionary = Dictionary::new(record(7));
        let before = filled(0, 3_000, &dictionary);
        assert!(before.arenas.len() > 2, "{} arenas", before.arenas.len());
        let mut next = before.clone();
        let mut model: Vec<Vec<u8>> = (0..3_000).map(record).collect();
        let second = before.firsts[1];
        let changes: [(usize, Vec<u8>); 5] = [
            (5, vec![0xaa; 900]),
            (6, b"".to_vec()),
            (5, b"five".to_vec()),
            (second, vec![0x55; 2_000]),
            (second + 1, record(2)),
        ];
        let mut scratch = Vec::new();
        for (index, raw) in changes {
            let mut one = Records::new(dictionary.clone());
            one.push(&raw, &mut scratch);
            let (lz4, len) = one.compressed(0).unwrap();
            next.replace(index, lz4, len);
            model[index] = raw;
        }
        for (n, raw) in model.iter().enumerate() {
            assert_eq!(&next.get(n).unwrap(), raw, "record {n} of the next version");
            assert_eq!(
                before.get(n).unwrap(),
                record(n),
                "record {n} of the one before"
            );
        }
        let shared = (0..next.arenas.len())
            .filter(|&a| Arc::ptr_eq(next.arenas.get(a), before.arenas.get(a)))
            .count();
        assert_eq!(shared, next.arenas.len() - 2);
    }
}
