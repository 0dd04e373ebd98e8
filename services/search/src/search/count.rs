//! Counting a search's matches into its total and facets, unscored: from
//! the postings of its words (a bitset per word, ANDed), each word a union
//! of terms, typo automata and multi-word synonyms (`Built::unions`).

use std::cell::RefCell;
use std::sync::Arc;

use storefront_platform::error::ServiceError;
use tantivy::postings::BlockSegmentPostings;
use tantivy::query::{AutomatonWeight, DfaWrapper, FuzzyTermQuery};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, Score, SegmentReader, Term};

use super::kept;
use super::{Plan, internal};
use crate::facets::{BATCH, Counts, SegmentDocs};
use crate::text_query::{Built, Source};
use crate::word_matches::{self, Key, WordMatches};

/// Bitsets of one search, one bit a document: per segment its matches,
/// one union while it is intersected with them, and those a multi-word
/// synonym's words are read into. Kept per thread between searches so
/// that none allocates (and faults in) its own: an eighth of a byte a
/// document for each segment and one more, on each thread that searches
/// (the async workers and the blocking pool's, which the per-core permits
/// keep few and which exit when idle): about 250 KB a thread at 1,000,000
/// products.
#[derive(Default)]
pub(super) struct Scratch {
    matched: Vec<Vec<u64>>,
    more: Vec<u64>,
    spare: Vec<Vec<u64>>,
    /// Per segment, the matches of each clause of constant score, as the
    /// count read them (where `Prepared::apart`): the page scores by them
    /// without reading their postings (and walking a typo's automaton
    /// over the terms) again. At most `MAX_CONSTANTS` a segment.
    constants: Vec<Vec<Vec<u64>>>,
    /// Whether `matched` holds this search's matches.
    read: bool,
    /// Whether `constants` holds this search's clauses.
    apart: bool,
}

impl Scratch {
    /// Segment `at`'s matches, when this search read them from postings.
    pub fn matched(&self, at: usize) -> Option<&[u64]> {
        if !self.read {
            return None;
        }
        self.matched.get(at).map(Vec::as_slice)
    }

    /// Segment `at`'s matches of each clause of constant score, when this
    /// search's count read them apart.
    pub fn constants(&self, at: usize) -> Option<&[Vec<u64>]> {
        if !(self.read && self.apart) {
            return None;
        }
        self.constants.get(at).map(Vec::as_slice)
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

thread_local! {
    /// Bitsets a page reads clauses of constant score into (`lead`) where
    /// the count did not read them apart (`Scratch::constants`, which holds
    /// as much: at most 16, `MAX_CONSTANTS` in text_query, 2 MB a thread at
    /// 1,000,000 products, on threads that counted a search within typos).
    static CONSTANTS: RefCell<Vec<Vec<u64>>> = RefCell::default();
}

/// `f` with `n` of this thread's bitsets for clauses of constant score.
pub(super) fn with_constants<R>(n: usize, f: impl FnOnce(&mut [Vec<u64>]) -> R) -> R {
    CONSTANTS.with_borrow_mut(|bits| {
        if bits.len() < n {
            bits.resize_with(n, Vec::new);
        }
        f(&mut bits[..n])
    })
}

/// `f` with this thread's scratch bitsets.
pub(super) fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with_borrow_mut(f)
}

/// Whether `doc` is set in `bits`.
pub(super) fn has(bits: &[u64], doc: DocId) -> bool {
    bits.get(doc as usize / 64)
        .is_some_and(|word| word & (1 << (doc % 64)) != 0)
}

impl Plan<'_> {
    /// The matches kept, counted into `counts`; no frequency or field
    /// length is read. Each segment's matches are left in `scratch`
    /// (`Scratch::matched`).
    pub(super) fn count(
        &self,
        text: &Prepared<'_>,
        counts: &mut Counts,
        scratch: &mut Scratch,
    ) -> Result<u64, ServiceError> {
        let keep = |row| self.keeps(row);
        let keep: Option<&dyn Fn(u32) -> bool> = (!self.filter.is_empty()).then_some(&keep);
        let mut total = 0;
        let Scratch {
            matched,
            more,
            spare,
            constants,
            read,
            apart,
        } = scratch;
        let segments = self.indexed.segments.len();
        matched.resize_with(segments, Vec::new);
        constants.resize_with(segments, Vec::new);
        for constants in constants.iter_mut() {
            constants.resize_with(text.constants.len(), Vec::new);
        }
        let per_segment = self.segments().zip(matched.iter_mut().zip(constants));
        let kept = Kept {
            matches: &self.indexed.live.word_matches,
            keys: &text.keys,
        };
        for ((reader, segment), (bits, constants)) in per_segment {
            let sources = (&text.unions[..], &text.slots[..]);
            matches(reader, sources, [bits, more], spare, constants, Some(&kept))?;
            total += count_bits(bits, segment, counts, keep);
        }
        *read = true;
        *apart = text.apart;
        Ok(total)
    }
}

/// A source of matches ready to be read segment by segment: a typo's
/// automaton built once a search.
pub(super) enum Ready<'a> {
    Term(&'a Term),
    Within(Field, AutomatonWeight<DfaWrapper>),
    All(Vec<Vec<Ready<'a>>>),
}

/// What a search reads its matches from, ready: each word's union of
/// sources, and (where its flat form has them) its clauses of constant
/// score with their scores.
pub(super) struct Prepared<'a> {
    unions: Vec<Vec<Ready<'a>>>,
    /// Per word, per source: the clause of constant score it also is.
    slots: Vec<Vec<Option<usize>>>,
    /// Whether every clause of constant score is a source of a word, so
    /// that the count reads each apart (`Scratch::constants`).
    apart: bool,
    /// Per word, the key its union (and the bitsets of its sources read
    /// apart) is kept by between searches.
    keys: Vec<Key>,
    pub constants: Vec<(Ready<'a>, Score)>,
}

/// Typo automata built for one search, by word and typos: a word within
/// typos is sought in three fields, two of them with the same text.
type Automata = Vec<((Vec<u8>, u8), Arc<DfaWrapper>)>;

impl<'a> Prepared<'a> {
    pub fn new(text: &'a Built) -> Result<Self, ServiceError> {
        let mut automata = Automata::new();
        let unions = (text.unions.iter())
            .map(|sources| ready(sources, &mut automata))
            .collect::<Result<_, _>>()?;
        let flat = text.flat.iter().flat_map(|flat| &flat.constants);
        let constants: Vec<_> = (flat.clone())
            .map(|c| Ok((one(&c.source, &mut automata)?, c.score)))
            .collect::<Result<_, ServiceError>>()?;
        // None without clauses of constant score (most searches): no
        // source has a slot, and nothing is allocated for it.
        let slots: Vec<Vec<Option<usize>>> = match constants.is_empty() {
            true => Vec::new(),
            false => (text.unions.iter())
                .map(|sources| {
                    let slot = |s: &Source| flat.clone().position(|c| same(s, &c.source));
                    sources.iter().map(slot).collect()
                })
                .collect(),
        };
        let apart = (0..constants.len()).all(|c| slots.iter().flatten().any(|&s| s == Some(c)));
        let keys = (text.unions.iter().enumerate())
            .map(|(at, sources)| kept::key(sources, slots.get(at).map_or(&[][..], Vec::as_slice)))
            .collect();
        Ok(Self {
            unions,
            slots,
            apart,
            keys,
            constants,
        })
    }
}

/// Whether two sources read the same postings (a word's union and the
/// flat form's clauses are made of the same sources, apart).
fn same(a: &Source, b: &Source) -> bool {
    match (a, b) {
        (Source::Term(a), Source::Term(b)) => a == b,
        (Source::Within(a, n), Source::Within(b, m)) => a == b && n == m,
        _ => false,
    }
}

fn ready<'a>(
    sources: &'a [Source],
    automata: &mut Automata,
) -> Result<Vec<Ready<'a>>, ServiceError> {
    sources.iter().map(|source| one(source, automata)).collect()
}

fn one<'a>(source: &'a Source, automata: &mut Automata) -> Result<Ready<'a>, ServiceError> {
    Ok(match source {
        Source::Term(term) => Ready::Term(term),
        Source::Within(term, typos) => {
            let key = (term.serialized_value_bytes().to_vec(), *typos);
            let dfa = match automata.iter().find(|(k, _)| *k == key) {
                Some((_, dfa)) => dfa.clone(),
                None => {
                    let query = FuzzyTermQuery::new(term.clone(), *typos, true);
                    let dfa = Arc::new(query.automaton().map_err(internal)?);
                    automata.push((key, dfa.clone()));
                    dfa
                }
            };
            Ready::Within(term.field(), AutomatonWeight::new(term.field(), dfa))
        }
        Source::All(parts) => Ready::All(
            (parts.iter())
                .map(|part| ready(part, automata))
                .collect::<Result<_, _>>()?,
        ),
    })
}

/// Where a search's words' unions are kept between searches, and each
/// word's key (`Prepared::keys`).
struct Kept<'a> {
    matches: &'a WordMatches,
    keys: &'a [Key],
}

/// Sets in `bits` the documents of `reader` found in every one of
/// `unions`: one bitset a union (the second of `bits` while it is read),
/// intersected word by word (tantivy's intersection of unions seeks each
/// union doc by doc: most of a two-word search's time). A word's union
/// kept from an earlier search (`kept`), with the bitsets of its sources
/// read apart, is not read again. `spare` lends the bitsets a multi-word
/// synonym is read into.
fn matches(
    reader: &SegmentReader,
    (unions, slots): (&[Vec<Ready<'_>>], &[Vec<Option<usize>>]),
    [bits, more]: [&mut Vec<u64>; 2],
    spare: &mut Vec<Vec<u64>>,
    apart: &mut [Vec<u64>],
    kept: Option<&Kept<'_>>,
) -> Result<(), ServiceError> {
    if unions.is_empty() {
        bits.clear();
        return Ok(());
    }
    let segment = reader.segment_id();
    let slots = |at: usize| slots.get(at).map_or(&[][..], Vec::as_slice);
    for (at, sources) in unions.iter().enumerate() {
        let key = kept.and_then(|kept| Some((kept.matches, kept.keys.get(at)?)));
        let hit = key.and_then(|(matches, key)| matches.get(segment, key));
        let own = slots(at).iter().flatten().copied();
        if let Some(hit) = hit
            && let Some(union) = word_matches::Union::of(&hit, own.clone().count())
        {
            match at {
                0 => {
                    bits.clear();
                    bits.extend_from_slice(union.all());
                }
                _ => and(bits, union.all()),
            }
            for (slot, read) in own.zip(union.apart()) {
                if let Some(bits) = apart.get_mut(slot) {
                    bits.clear();
                    bits.extend_from_slice(read);
                }
            }
            continue;
        }
        let into = if at == 0 { &mut *bits } else { &mut *more };
        union(reader, (sources, slots(at)), into, spare, apart)?;
        if let Some((matches, key)) = key {
            let read: Option<Vec<&[u64]>> = own.map(|s| apart.get(s).map(Vec::as_slice)).collect();
            if let Some(read) = read {
                matches.offer(segment, key, into, &read);
            }
        }
        if at > 0 {
            and(bits, more);
        }
    }
    Ok(())
}

fn and(bits: &mut [u64], other: &[u64]) {
    for (b, o) in bits.iter_mut().zip(other) {
        *b &= o;
    }
}

/// Sets in `bits` (cleared, one bit a document of `reader`) every
/// document in the postings of one of `sources`, each decoded a block at
/// a time, no union of cursors (tantivy's merges them doc by doc, which
/// was a quarter of a one-word search's time at 1,000,000 products). A
/// source with a slot (`slots`, by position) is read into its bitset of
/// `apart` first.
pub(super) fn union(
    reader: &SegmentReader,
    (sources, slots): (&[Ready<'_>], &[Option<usize>]),
    bits: &mut Vec<u64>,
    spare: &mut Vec<Vec<u64>>,
    apart: &mut [Vec<u64>],
) -> Result<(), ServiceError> {
    bits.clear();
    bits.resize((reader.max_doc() as usize).div_ceil(64), 0);
    for (at, source) in sources.iter().enumerate() {
        let slot = slots.get(at).copied().flatten();
        if let Some(own) = slot.and_then(|slot| apart.get_mut(slot)) {
            let one = (std::slice::from_ref(source), &[][..]);
            union(reader, one, own, spare, &mut [])?;
            for (b, o) in bits.iter_mut().zip(own.iter()) {
                *b |= o;
            }
            continue;
        }
        match source {
            Ready::Term(term) => {
                let index = reader.inverted_index(term.field()).map_err(internal)?;
                let postings = index
                    .read_block_postings(term, IndexRecordOption::Basic)
                    .map_err(|e| internal(e.into()))?;
                if let Some(postings) = postings {
                    set(postings, bits);
                }
            }
            Ready::Within(field, weight) => {
                let index = reader.inverted_index(*field).map_err(internal)?;
                for info in weight.get_match_term_infos(reader).map_err(internal)? {
                    let postings = index
                        .read_block_postings_from_terminfo(&info, IndexRecordOption::Basic)
                        .map_err(|e| internal(e.into()))?;
                    set(postings, bits);
                }
            }
            Ready::All(parts) => {
                let mut all = spare.pop().unwrap_or_default();
                let mut more = spare.pop().unwrap_or_default();
                let parts = (&parts[..], &[][..]);
                let read = matches(reader, parts, [&mut all, &mut more], spare, &mut [], None);
                for (b, a) in bits.iter_mut().zip(all.iter()) {
                    *b |= a;
                }
                spare.extend([all, more]);
                read?;
            }
        }
    }
    Ok(())
}

/// The documents set in `bits`, in order.
pub(super) fn docs(bits: &[u64]) -> impl Iterator<Item = DocId> + '_ {
    (bits.iter().enumerate()).flat_map(|(at, &word)| word_docs(at, word))
}

/// The documents set in `word`, word `at` of a bitset, in order.
pub(super) fn word_docs(at: usize, mut word: u64) -> impl Iterator<Item = DocId> {
    std::iter::from_fn(move || {
        (word != 0).then(|| {
            let doc = (at * 64) as DocId + word.trailing_zeros();
            word &= word - 1;
            doc
        })
    })
}

/// Sets the bit of every document of `postings` in `bits`.
pub(super) fn set(mut postings: BlockSegmentPostings, bits: &mut [u64]) {
    loop {
        let docs = postings.docs();
        if docs.is_empty() {
            return;
        }
        for &doc in docs {
            if let Some(word) = bits.get_mut(doc as usize / 64) {
                *word |= 1 << (doc % 64);
            }
        }
        postings.advance();
    }
}

/// The documents set in `bits`, in order, `BATCH` at a time, counted by
/// `segment` (`SegmentDocs::count`); the number counted.
fn count_bits(
    bits: &[u64],
    segment: &SegmentDocs,
    counts: &mut Counts,
    keep: Option<&dyn Fn(u32) -> bool>,
) -> u64 {
    if keep.is_none() {
        return segment.count_all(bits, counts);
    }
    let mut total = 0;
    let mut docs: [DocId; BATCH] = [0; BATCH];
    let mut n = 0;
    for (at, &word) in bits.iter().enumerate() {
        let mut word = word;
        while word != 0 {
            docs[n] = (at * 64) as DocId + word.trailing_zeros();
            n += 1;
            if n == BATCH {
                total += segment.count(&docs, counts, keep);
                n = 0;
            }
            word &= word - 1;
        }
    }
    total + segment.count(&docs[..n], counts, keep)
}
