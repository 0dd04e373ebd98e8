//! The page of a search by relevance: the best matches by how many pairs
//! of its words stand near in the name (`near`), then relevance, then the
//! tie order; only matches that could make the page are scored.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use storefront_platform::error::ServiceError;
use tantivy::query::{EnableScoring, Query, Scorer, TermQuery, Weight};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED};

use super::near::{self, Near};
use super::{Plan, count, internal, relevance};
use crate::facets::SegmentDocs;
use crate::text_query::{Built, Flat};

/// The best `keep` matches, worst on top: (fewer near pairs, relevance
/// descending as a u64, place in the tie order, row), smaller is better.
pub(super) struct Leaders {
    heap: BinaryHeap<(u8, u64, u32, u32)>,
    keep: usize,
    /// Once `keep` are kept: the worst's pairs near; scores below `below`
    /// cannot make the cut with as many pairs (the worst kept is better),
    /// and below `beyond` are at best as relevant as the worst. Most
    /// matches are turned away by one comparison of raw scores.
    worst: Option<(u8, Score, Score)>,
}

impl Leaders {
    pub fn new(keep: usize) -> Self {
        Self {
            heap: BinaryHeap::new(),
            keep,
            worst: None,
        }
    }

    /// The rows kept, best first.
    pub fn rows(self) -> impl Iterator<Item = u32> {
        self.heap.into_sorted_vec().into_iter().map(|e| e.3)
    }

    /// The score a match with `pairs` near must reach to be kept:
    /// strictly beat the worst (`strict`), or at least tie it.
    #[inline]
    fn bar(&self, pairs: u8, strict: bool) -> Score {
        if self.keep == 0 {
            return Score::INFINITY;
        }
        match self.worst {
            None => Score::NEG_INFINITY,
            Some((worst, below, beyond)) => match worst.cmp(&pairs) {
                Ordering::Greater => Score::INFINITY,
                Ordering::Less => Score::NEG_INFINITY,
                Ordering::Equal if strict => beyond,
                Ordering::Equal => below,
            },
        }
    }

    /// Offers a match with `pairs` of its words near.
    #[inline]
    fn offer(&mut self, pairs: u8, tie: u32, row: u32, score: Score) {
        let lead = u64::MAX - ((relevance(score) as u64) ^ (1 << 63));
        let entry = (u8::MAX - pairs, lead, tie, row);
        if self.heap.len() < self.keep {
            self.heap.push(entry);
        } else if let Some(mut worst) = self.heap.peek_mut()
            && entry < *worst
        {
            *worst = entry;
        } else {
            return;
        }
        if self.heap.len() == self.keep
            && let Some(&(far, lead, _, _)) = self.heap.peek()
        {
            let worst = ((u64::MAX - lead) ^ (1 << 63)) as i64;
            self.worst = Some((u8::MAX - far, below(worst), below(worst.saturating_add(1))));
        }
    }
}

/// A score under which `relevance` is surely below `worst` (one step of
/// f32 under it, far more than the rounding of the conversion).
pub(super) fn below(worst: i64) -> Score {
    let at = (worst as f64 / super::STEPS) as Score;
    if at > 0.0 && at.is_finite() {
        Score::from_bits(at.to_bits() - 1)
    } else {
        Score::NEG_INFINITY
    }
}

/// How many postings a pruned pass over a flat union reads, at least, for
/// each match's term sought instead: seeking is a skip list's walk and a
/// block's decoding, and a pruned pass reads the documents of each word
/// that lack the others. Measured at 100,000 products: two words with 450
/// matches in 21,000 postings (8 terms) were paged a fifth faster one by
/// one; 1,270 in 48,000 as fast; 1,670 in 40,000 a tenth slower.
const POSTINGS_A_SEEK: u64 = 5;

/// Whether a group of `few` matches with as many pairs near, among
/// `total`, is scored match by match (each term sought to it) rather than
/// by a pruned pass over the query's terms offering only the group's. The
/// pass scores about `keep` * `total` / `few` matches before its page is
/// full and it prunes; seeking costs about `few`.
fn seeks(few: u64, total: u64, keep: usize) -> bool {
    few.saturating_mul(few) <= total.saturating_mul(keep.max(1) as u64)
}

impl Plan<'_> {
    /// The best matches kept into `leaders`: those with the most pairs of
    /// words near first (`near`, where the count left each segment's
    /// matches), each group by a pass of its own. A group of few is scored
    /// match by match; any other by `weight` pruned: where the query has a
    /// flat form (words that are unions of terms alone), the flat union
    /// by block-max WAND (a match is scored only where its block of
    /// postings could beat the worst leader), only the group's matches
    /// offered: the intersection it stands for is never walked. A flat
    /// form with clauses of constant score (words within typos) instead
    /// scores every match in one pass (`lead_every`).
    pub(super) fn lead(
        &self,
        text: &Built,
        prepared: &count::Prepared<'_>,
        leaders: &mut Leaders,
        scratch: &count::Scratch,
        total: u64,
    ) -> Result<(), ServiceError> {
        let searcher = &self.indexed.searcher;
        let (query, flat) = match (&text.flat, scratch.matched(0).is_some()) {
            (Some(flat), true) => (flat.query.as_ref(), Some(flat)),
            _ => (text.query.as_ref(), None),
        };
        let among = flat.is_some();
        let matched = |at| scratch.matched(at).filter(|_| among);
        let one_by_one = |few| {
            self.seek_max
                .map_or(seeks(few, total, self.keep), |max| few <= max)
        };
        near::with(|near| {
            let read = scratch.matched(0).is_some()
                && near.read(self.segments().map(|(r, _)| r), &text.pairs, |at| {
                    scratch.matched(at)
                })?;
            let near = read.then_some(&*near);
            let every = |flat| !prepared.constants.is_empty() || self.each(flat, total);
            if let Some(flat) = flat.filter(|&flat| every(flat)) {
                let score = Scoring::terms(searcher, flat)?;
                return self.lead_every(&score, &prepared.constants, scratch, near, leaders);
            }
            // Only for pruned passes and a group's seeking without a flat
            // form: one pass over every match needs none.
            let weight = query
                .weight(EnableScoring::enabled_from_searcher(searcher))
                .map_err(internal)?;
            let most = near.map_or(0, Near::most);
            for pairs in (0..=most).rev() {
                if leaders.bar(pairs, false) == Score::INFINITY {
                    break;
                }
                match near {
                    Some(near) if pairs > 0 => match near.having(pairs) {
                        0 => {}
                        few if one_by_one(few) => {
                            let score = Scoring::new(searcher, flat, weight.as_ref())?;
                            self.lead_seeking(&score, near, pairs, leaders)?
                        }
                        _ => {
                            self.lead_pruned(weight.as_ref(), &matched, Some(near), pairs, leaders)?
                        }
                    },
                    // No pair near: all the other matches.
                    _ => self.lead_pruned(weight.as_ref(), &matched, near, pairs, leaders)?,
                }
            }
            Ok(())
        })
    }

    /// Offers every kept match with `pairs` near, each scored alone.
    fn lead_seeking(
        &self,
        score: &Scoring<'_>,
        near: &Near,
        pairs: u8,
        leaders: &mut Leaders,
    ) -> Result<(), ServiceError> {
        for (at, (reader, segment)) in self.segments().enumerate() {
            let mut docs = near
                .docs(at)
                .filter(|&doc| near.pairs(at, doc) == pairs)
                .peekable();
            if docs.peek().is_none() {
                continue;
            }
            let mut scorers = score.scorers(reader)?;
            for doc in docs {
                let Some((row, tie)) = segment.entry(doc) else {
                    continue;
                };
                if !self.keeps(row) {
                    continue;
                }
                if let Some(score) = scorers.score(doc) {
                    leaders.offer(pairs, tie, row, score);
                }
            }
        }
        Ok(())
    }

    /// Whether all `total` matches of `flat` are scored one by one
    /// (`lead_every`) rather than by pruned passes over its terms.
    fn each(&self, flat: &Flat, total: u64) -> bool {
        if let Some(each) = self.each {
            return each;
        }
        let searcher = &self.indexed.searcher;
        // Terms no document has cost no seek.
        let (terms, postings) = (flat.terms.iter())
            .map(|(term, _)| searcher.doc_freq(term).unwrap_or(0))
            .filter(|&n| n > 0)
            .fold((0u64, 0u64), |(terms, sum), n| (terms + 1, sum + n));
        total.saturating_mul(terms).saturating_mul(POSTINGS_A_SEEK) <= postings
    }

    /// The segments with their places, the largest first.
    fn by_size(&self) -> impl Iterator<Item = (usize, (&SegmentReader, &SegmentDocs))> {
        let mut segments: Vec<_> = self.segments().enumerate().collect();
        segments.sort_by_key(|(_, (reader, _))| std::cmp::Reverse(reader.max_doc()));
        segments.into_iter()
    }

    /// Offers every kept match with its pairs near, scored one by one: its
    /// terms sought to it, and the clauses of constant score (`constants`:
    /// words within typos) read from a bitset each. Such a query has
    /// matches none of its terms has, which block-max WAND over its terms
    /// would never meet, and tantivy's union of the clauses costs twice
    /// the count. Where a segment has none of the terms, a match scores
    /// at most the sum of the clauses found in it: once the page's bar is
    /// above that, the segment's other matches are not read (a word
    /// within typos has thousands of matches scoring alike, and the first
    /// of them in tie order fill the page).
    fn lead_every(
        &self,
        score: &Scoring<'_>,
        constants: &[(count::Ready<'_>, Score)],
        scratch: &count::Scratch,
        near: Option<&Near>,
        leaders: &mut Leaders,
    ) -> Result<(), ServiceError> {
        count::with_constants(constants.len(), |bits| {
            for (i, (at, (reader, segment))) in self.by_size().enumerate() {
                let Some(matched) = scratch.matched(at) else {
                    continue;
                };
                // As in `lead_pruned`.
                let strict = i == 0 && segment.ordered();
                // As the count read them, else read again.
                let bits: &[Vec<u64>] = match scratch.constants(at) {
                    Some(read) if read.len() == constants.len() => read,
                    _ => {
                        for ((source, _), bits) in constants.iter().zip(bits.iter_mut()) {
                            let one = (std::slice::from_ref(source), &[][..]);
                            count::union(reader, one, bits, &mut Vec::new(), &mut [])?;
                        }
                        bits
                    }
                };
                let mut scorers = score.scorers(reader)?;
                let ceiling = scorers.is_empty().then(|| ceiling(constants, bits));
                let most = near.map_or(0, Near::most);
                for (w, &word) in matched.iter().enumerate() {
                    // Once no match left can reach the page's bar.
                    if ceiling.is_some_and(|c| c < leaders.bar(most, strict)) {
                        break;
                    }
                    for doc in count::word_docs(w, word) {
                        #[cfg(test)]
                        self.scored
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let pairs = near.map_or(0, |near| near.pairs(at, doc));
                        let bar = leaders.bar(pairs, strict);
                        if bar == Score::INFINITY {
                            continue;
                        }
                        let fixed: Score = (constants.iter().zip(bits.iter()))
                            .filter(|(_, bits)| count::has(bits, doc))
                            .map(|((_, score), _)| score)
                            .sum();
                        let score = scorers.score(doc).unwrap_or(0.0) + fixed;
                        if score >= bar
                            && let Some((row, tie)) = segment.entry(doc)
                            && self.keeps(row)
                        {
                            leaders.offer(pairs, tie, row, score);
                        }
                    }
                }
            }
            Ok(())
        })
    }

    /// Offers the matches with `pairs` near (all matches without `near`),
    /// by `weight` pruned, among `matched` where given.
    fn lead_pruned<'m>(
        &self,
        weight: &dyn Weight,
        matched: &dyn Fn(usize) -> Option<&'m [u64]>,
        near: Option<&Near>,
        pairs: u8,
        leaders: &mut Leaders,
    ) -> Result<(), ServiceError> {
        // The largest segment first. Where its documents are in tie order,
        // every leader with as many pairs near was met before any match
        // still to come, so a match only as relevant as the worst leader
        // cannot displace it: only strictly better ones are asked for, and
        // blocks of equals skipped. A later segment's match may tie better
        // than leaders met before.
        for (i, (at, (reader, segment))) in self.by_size().enumerate() {
            let strict = i == 0 && segment.ordered();
            let bar = |leaders: &Leaders| leaders.bar(pairs, strict);
            if bar(leaders) == Score::INFINITY {
                return Ok(());
            }
            let matched = matched(at);
            let group = |doc| near.map_or(0, |near| near.pairs(at, doc)) == pairs;
            weight
                .for_each_pruning(bar(leaders), reader, &mut |doc, score| {
                    if matched.is_none_or(|bits| count::has(bits, doc))
                        && group(doc)
                        && let Some((row, tie)) = segment.entry(doc)
                        && self.keeps(row)
                    {
                        leaders.offer(pairs, tie, row, score);
                    }
                    bar(leaders)
                })
                .map_err(internal)?;
        }
        Ok(())
    }
}

/// How documents are scored one by one: each term of a flat query sought
/// on its own (a union's scorer, sought far, scores every document of the
/// next 4,096 to refill its window), else the query's scorer.
enum Scoring<'a> {
    Terms(Vec<(Box<dyn Weight>, f32)>),
    Query(&'a dyn Weight),
}

impl<'a> Scoring<'a> {
    fn new(
        searcher: &tantivy::Searcher,
        flat: Option<&Flat>,
        weight: &'a dyn Weight,
    ) -> Result<Self, ServiceError> {
        match flat {
            Some(flat) => Self::terms(searcher, flat),
            None => Ok(Scoring::Query(weight)),
        }
    }

    /// Each term of `flat` on its own.
    fn terms(searcher: &tantivy::Searcher, flat: &Flat) -> Result<Self, ServiceError> {
        let scoring = || EnableScoring::enabled_from_searcher(searcher);
        let terms = flat.terms.iter().map(|(term, boost)| {
            let query = TermQuery::new(term.clone(), IndexRecordOption::WithFreqs);
            Ok((query.weight(scoring())?, *boost))
        });
        let terms = terms.collect::<tantivy::Result<_>>().map_err(internal)?;
        Ok(Scoring::Terms(terms))
    }

    fn scorers(&self, reader: &SegmentReader) -> Result<Scorers, ServiceError> {
        match self {
            // Without the terms this segment lacks.
            Scoring::Terms(terms) => terms
                .iter()
                .map(|(weight, boost)| weight.scorer(reader, *boost))
                .filter(|scorer| scorer.as_ref().is_ok_and(|s| s.doc() != TERMINATED))
                .collect::<tantivy::Result<_>>()
                .map(Scorers)
                .map_err(internal),
            Scoring::Query(weight) => {
                Ok(Scorers(vec![weight.scorer(reader, 1.0).map_err(internal)?]))
            }
        }
    }
}

/// The best score a match can have from clauses of constant score alone
/// (`constants`, each read into `bits`): the sum of those matching
/// anything in the segment, added in the order a match's are, so that no
/// match's sum of a subset of them rounds above it.
fn ceiling(constants: &[(count::Ready<'_>, Score)], bits: &[Vec<u64>]) -> Score {
    (constants.iter().zip(bits))
        .filter(|(_, bits)| bits.iter().any(|&word| word != 0))
        .map(|((_, score), _)| score)
        .sum()
}

/// One segment's scorers, sought forward to each document scored.
struct Scorers(Vec<Box<dyn Scorer>>);

impl Scorers {
    /// Whether no term of the query is in the segment.
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The score of `doc` (at or after every document scored before),
    /// None when no scorer has it.
    fn score(&mut self, doc: DocId) -> Option<Score> {
        let mut sum = None;
        for scorer in &mut self.0 {
            if scorer.doc() < doc {
                scorer.seek(doc);
            }
            if scorer.doc() == doc {
                *sum.get_or_insert(0.0) += scorer.score();
            }
        }
        sum
    }
}
