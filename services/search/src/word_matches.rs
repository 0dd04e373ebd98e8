//! Words' matches kept between searches: per segment, the bitset of the
//! documents in a word's union (`count::union`), as Lucene's query cache
//! keeps the matches of clauses searched often. A shop's searches repeat
//! their words (a head of a few hundred words makes most queries), and a
//! word's union is most of a search's count: its terms in four fields,
//! its synonyms, its postings decoded block by block. A segment never
//! changes once written (a delete is a mask beside it, and a union holds
//! deleted documents, which the count masks), so a kept union is right
//! for as long as its segment is searched; one no search asks for again
//! is the least recently used, and goes first. A word within typos keeps
//! with its union the bitset of each typo clause read apart (the page
//! scores by them), so its automata are not walked again either.

use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};

use lru::LruCache;
use tantivy::index::SegmentId;

/// Bytes of bitsets kept at most: a union is an eighth of a byte a
/// document of its segment, so 16 MB keep about 1,300 words' unions at
/// 100,000 products and 130 at 1,000,000.
const BUDGET: usize = 16 << 20;
/// Words seen once remembered (by a hash of the word and segment): a
/// union is kept the second time it is read, so that a word searched
/// once (the long tail) costs no copy and pushes out no word of the head.
const SEEN: usize = 8192;

/// A word's key: its sources, as bytes (`search::kept::key`).
pub type Key = Arc<[u8]>;

/// Words' unions kept per segment, least recently used first out.
pub struct WordMatches {
    inner: Mutex<Inner>,
}

struct Inner {
    kept: LruCache<(SegmentId, Key), Arc<[u64]>>,
    bytes: usize,
    seen: LruCache<u64, ()>,
    hasher: foldhash::fast::FixedState,
    /// Words found kept (tests: that a search used them).
    #[cfg(test)]
    found: usize,
}

impl Default for WordMatches {
    fn default() -> Self {
        Self {
            inner: Mutex::new(Inner {
                kept: LruCache::unbounded(),
                bytes: 0,
                seen: LruCache::new(std::num::NonZeroUsize::new(SEEN).expect("not zero")),
                hasher: foldhash::fast::FixedState::default(),
                #[cfg(test)]
                found: 0,
            }),
        }
    }
}

impl WordMatches {
    /// Word `key` in `segment`, when kept (`Union::of` reads it).
    pub fn get(&self, segment: SegmentId, key: &Key) -> Option<Arc<[u64]>> {
        let kept = {
            let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let kept = inner.kept.get(&(segment, key.clone())).cloned();
            #[cfg(test)]
            {
                inner.found += usize::from(kept.is_some());
            }
            kept
        };
        let from = if kept.is_some() { "kept" } else { "postings" };
        metrics::counter!("search_word_unions_total", "from" => from).increment(1);
        kept
    }

    /// Offers word `key`'s union `bits` in `segment`, just read, with the
    /// bitsets of its sources read apart (`apart`, in the word's order):
    /// kept if it was read before (and still remembered), else remembered.
    pub fn offer(&self, segment: SegmentId, key: &Key, bits: &[u64], apart: &[&[u64]]) {
        {
            let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
            let hash = inner.hasher.hash_one((segment, &key[..]));
            if inner.seen.pop(&hash).is_none() {
                inner.seen.put(hash, ());
                return;
            }
        }
        // Copied outside the lock.
        let parts = std::iter::once(bits).chain(apart.iter().copied());
        let copy: Arc<[u64]> = parts.flatten().copied().collect();
        let size = std::mem::size_of_val(&copy[..]);
        if size > BUDGET {
            return;
        }
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = inner.kept.put((segment, key.clone()), copy) {
            inner.bytes -= std::mem::size_of_val(&old[..]);
        }
        inner.bytes += size;
        while inner.bytes > BUDGET {
            let Some((_, out)) = inner.kept.pop_lru() else {
                break;
            };
            inner.bytes -= std::mem::size_of_val(&out[..]);
        }
    }

    /// Unions kept, and how many times one was found kept.
    #[cfg(test)]
    pub fn len(&self) -> (usize, usize) {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        (inner.kept.len(), inner.found)
    }
}

/// A kept word read: its union, then the bitset of each of its sources
/// read apart, each as long.
pub struct Union<'a> {
    all: &'a [u64],
    apart: &'a [u64],
    words: usize,
    count: usize,
}

impl<'a> Union<'a> {
    /// `kept` as a union and `count` bitsets read apart (None: a kept
    /// word of another shape, which its key rules out).
    pub fn of(kept: &'a [u64], count: usize) -> Option<Self> {
        let words = kept.len() / (count + 1);
        (words * (count + 1) == kept.len()).then(|| Self {
            all: &kept[..words],
            apart: &kept[words..],
            words,
            count,
        })
    }

    pub fn all(&self) -> &'a [u64] {
        self.all
    }

    /// The bitsets read apart, in the word's order.
    pub fn apart(&self) -> impl Iterator<Item = &'a [u64]> + use<'a> {
        let (apart, words) = (self.apart, self.words);
        (0..self.count).map(move |i| &apart[i * words..(i + 1) * words])
    }
}
