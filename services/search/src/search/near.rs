//! Word proximity: which matches have two consecutive query words within
//! one word of each other, in order, in their name ("linen shirt" in
//! "Linen Shirt" or "Linen Summer Shirt", not "Shirt in Linen"), read
//! from the postings of the name's word pairs (`analyzer::pair`). Names
//! are a few words, so this is the proximity a shopper sees; descriptions
//! are not paired.

use std::cell::RefCell;

use storefront_platform::error::ServiceError;
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, SegmentReader, Term};

use super::{count, internal};

/// Per segment, the matches with each pair near and with any. Kept per
/// thread between searches, as `count::Scratch` is: a bit a document per
/// pair and one more (at most 10 bitsets, 1.25 MB a thread at 1,000,000
/// products; one pair, 250 KB, for two words).
#[derive(Default)]
pub(super) struct Near {
    /// Per segment, per pair: the matches having it near.
    pairs: Vec<Vec<Vec<u64>>>,
    /// Per segment: the matches having some pair near.
    any: Vec<Vec<u64>>,
    /// Matches by how many pairs they have near (from one).
    having: Vec<u64>,
}

thread_local! {
    static NEAR: RefCell<Near> = RefCell::default();
}

/// `f` with this thread's proximity bitsets.
pub(super) fn with<R>(f: impl FnOnce(&mut Near) -> R) -> R {
    NEAR.with_borrow_mut(f)
}

impl Near {
    /// Reads, per segment, which of its `matched` documents have each of
    /// `pairs` near; whether any has one. Reads nothing when one
    /// segment's matches were not left by the count.
    pub fn read<'a, 'm>(
        &mut self,
        segments: impl Iterator<Item = &'a SegmentReader>,
        pairs: &[Term],
        matched: impl Fn(usize) -> Option<&'m [u64]>,
    ) -> Result<bool, ServiceError> {
        if pairs.is_empty() {
            return Ok(false);
        }
        let segments: Vec<&SegmentReader> = segments.collect();
        self.pairs.resize_with(segments.len(), Vec::new);
        self.any.resize_with(segments.len(), Vec::new);
        for (at, reader) in segments.into_iter().enumerate() {
            let Some(matched) = matched(at) else {
                return Ok(false);
            };
            let words = (reader.max_doc() as usize).div_ceil(64);
            let per_pair = &mut self.pairs[at];
            per_pair.resize_with(pairs.len(), Vec::new);
            let any = &mut self.any[at];
            any.clear();
            any.resize(words, 0);
            for (term, bits) in pairs.iter().zip(per_pair.iter_mut()) {
                bits.clear();
                bits.resize(words, 0);
                let index = reader.inverted_index(term.field()).map_err(internal)?;
                let postings = index
                    .read_block_postings(term, IndexRecordOption::Basic)
                    .map_err(|e| internal(e.into()))?;
                if let Some(postings) = postings {
                    count::set(postings, bits);
                }
                // Only matches are ranked (a pair's postings also hold
                // documents deleted since, and any filtered out).
                for ((b, m), a) in bits.iter_mut().zip(matched).zip(any.iter_mut()) {
                    *b &= m;
                    *a |= *b;
                }
            }
        }
        let mut having = std::mem::take(&mut self.having);
        having.clear();
        having.resize(pairs.len() + 1, 0);
        for at in 0..self.any.len() {
            if pairs.len() == 1 {
                having[1] += self.any[at]
                    .iter()
                    .map(|w| u64::from(w.count_ones()))
                    .sum::<u64>();
                continue;
            }
            for doc in self.docs(at) {
                having[usize::from(self.pairs(at, doc))] += 1;
            }
        }
        self.having = having;
        Ok(self.having.iter().any(|&n| n > 0))
    }

    /// The most pairs a match has near.
    pub fn most(&self) -> u8 {
        self.having.iter().rposition(|&n| n > 0).unwrap_or(0) as u8
    }

    /// Matches with `pairs` near (from one).
    pub fn having(&self, pairs: u8) -> u64 {
        self.having.get(usize::from(pairs)).copied().unwrap_or(0)
    }

    /// Segment `at`'s matches with a pair near.
    pub fn any(&self, at: usize) -> &[u64] {
        self.any.get(at).map_or(&[], Vec::as_slice)
    }

    /// Segment `at`'s matches with a pair near, in order.
    pub fn docs(&self, at: usize) -> impl Iterator<Item = DocId> + '_ {
        count::docs(self.any(at))
    }

    /// How many pairs document `doc` of segment `at` has near.
    pub fn pairs(&self, at: usize, doc: DocId) -> u8 {
        self.pairs.get(at).map_or(0, |per_pair| {
            per_pair.iter().filter(|bits| count::has(bits, doc)).count() as u8
        })
    }
}
