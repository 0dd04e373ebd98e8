//! A query as unions of field terms: the shape tantivy prunes by
//! block-max WAND, and whose matches a count reads straight from the
//! terms' postings.

use tantivy::Term;
use tantivy::query::{BooleanQuery, BoostQuery, ConstScoreQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

/// Where a count reads matches from: a term's postings, those of every
/// term of its field within so many typos of it, or the documents in
/// every one of some unions (the words of a multi-word synonym).
#[derive(Clone, Debug)]
pub enum Source {
    Term(Term),
    Within(Term, u8),
    All(Vec<Vec<Source>>),
}

/// A clause scoring one constant wherever it matches (a field's words
/// within typos of a word, a name word a typo stands for), and what it
/// matches.
pub struct Constant {
    pub query: Box<dyn Query>,
    pub source: Source,
    pub score: f32,
}

impl Clone for Constant {
    fn clone(&self) -> Self {
        Self {
            query: self.query.box_clone(),
            source: self.source.clone(),
            score: self.score,
        }
    }
}

/// Clauses of constant score a flat form holds at most (the page reads
/// each into a bitset of its own): two words within two typos, three
/// fields each, and a few name words typos stand for. A query with more
/// has no flat form.
pub const MAX_CONSTANTS: usize = 16;

/// Clauses of which a match needs one: field terms with their weights,
/// clauses of constant score, and other queries (multi-word synonyms).
#[derive(Default)]
pub(super) struct Union {
    pub terms: Vec<(Term, f32)>,
    pub constants: Vec<Constant>,
    pub other: Vec<Box<dyn Query>>,
    /// What the other queries match, as sources.
    pub sources: Vec<Source>,
    /// Terms of words that match only all together (a multi-word
    /// synonym's, whose clause in `other` scores nothing): each scores
    /// wherever it is in a match of the query, as a plain term of the
    /// query's (`Built::of`), so that the query stays a union of terms.
    pub loose: Vec<(Term, f32)>,
    /// Whether a clause of `other` is scored (a multi-word synonym with
    /// words within typos): the query then has no flat form.
    scored: bool,
}

/// `clauses` together (all Must, or all Should); one clause as itself (a
/// boolean wrapper hides the terms within from block-max WAND; scores
/// are the same).
fn joined(mut clauses: Vec<(Occur, Box<dyn Query>)>) -> Box<dyn Query> {
    if clauses.len() == 1
        && let Some((_, only)) = clauses.pop()
    {
        return only;
    }
    Box::new(BooleanQuery::new(clauses))
}

impl Union {
    /// One more scored clause, matching what `sources` hold.
    pub fn push(&mut self, query: Box<dyn Query>, sources: Vec<Source>) {
        self.other.push(query);
        self.scored = true;
        self.sources.extend(sources);
    }

    /// One more clause matching what has every one of `parts` (the words
    /// of a multi-word synonym). Where the parts are terms alone, it
    /// scores nothing and their terms are loose (scored wherever they
    /// are); otherwise it is scored as it is.
    pub fn push_all(&mut self, parts: Vec<Union>) {
        let sources = vec![Source::All(parts.iter().map(Union::read_from).collect())];
        for part in &parts {
            self.loose.extend(part.loose.iter().cloned());
        }
        if parts
            .iter()
            .any(|part| part.scored || !part.constants.is_empty())
        {
            return self.push(Union::all(parts), sources);
        }
        for part in &parts {
            self.loose.extend(part.terms.iter().cloned());
        }
        let matched = ConstScoreQuery::new(Union::all(parts), 0.0);
        self.other.push(Box::new(matched));
        self.sources.extend(sources);
    }

    /// What a match of the union is read from.
    fn read_from(&self) -> Vec<Source> {
        let terms = self
            .terms
            .iter()
            .map(|(term, _)| Source::Term(term.clone()));
        let constants = self.constants.iter().map(|c| c.source.clone());
        terms
            .chain(constants)
            .chain(self.sources.iter().cloned())
            .collect()
    }

    /// A union of `terms` alone.
    pub(super) fn terms(terms: Vec<(Term, f32)>) -> Self {
        Union {
            terms,
            ..Union::default()
        }
    }

    /// Every one of `unions`.
    pub fn all(unions: Vec<Union>) -> Box<dyn Query> {
        joined(
            unions
                .into_iter()
                .map(|u| (Occur::Must, u.query()))
                .collect(),
        )
    }

    /// The union as one query, its terms and other clauses at one level:
    /// a union of terms alone is what tantivy prunes by block-max WAND (a
    /// nested union hides its terms).
    pub fn query(self) -> Box<dyn Query> {
        let terms = self.terms.into_iter().map(|(term, weight)| {
            let term = TermQuery::new(term, IndexRecordOption::WithFreqs);
            let boosted = BoostQuery::new(Box::new(term), weight);
            (Occur::Should, Box::new(boosted) as Box<dyn Query>)
        });
        let constants = self.constants.into_iter().map(|c| (Occur::Should, c.query));
        let other = self.other.into_iter().map(|q| (Occur::Should, q));
        joined(terms.chain(constants).chain(other).collect())
    }
}

/// A text query, every one of some unions (each word's field terms,
/// synonyms, words within typos), and what each union's matches are read
/// from: its matches are exactly the documents found in every union's
/// sources, which a count reads without a scorer.
pub struct Built {
    pub query: Box<dyn Query>,
    pub unions: Vec<Vec<Source>>,
    /// When its unions are of weighted terms and at most `MAX_CONSTANTS`
    /// clauses of constant score (but for multi-word synonyms matched
    /// unscored), and it is more than one of them or has loose terms or
    /// constants: all of them in one union (`Flat`).
    pub flat: Option<Flat>,
    /// Each two consecutive words as a term of name pairs
    /// (`analyzer::pair`): a product whose name has more of them ranks
    /// first (`search::near`).
    pub pairs: Vec<Term>,
}

/// Every term of a query's words in one union, and its clauses of
/// constant score: on a document that matches the query they score the
/// same (the sum of its terms' and constants' scores). Without constants,
/// the union is the shape block-max WAND prunes.
pub struct Flat {
    pub query: Box<dyn Query>,
    /// Its terms with their weights, for scoring documents one by one.
    pub terms: Vec<(Term, f32)>,
    pub constants: Vec<Constant>,
}

impl Built {
    /// Every one of `must`, and their loose terms scored where they are.
    pub(super) fn of(must: Vec<Union>) -> Self {
        let unions = must.iter().map(Union::read_from).collect();
        let loose: Vec<(Term, f32)> = must.iter().flat_map(|u| u.loose.iter().cloned()).collect();
        let constants: usize = must.iter().map(|u| u.constants.len()).sum();
        let more = must.len() > 1 || !loose.is_empty() || constants > 0;
        let plain = constants <= MAX_CONSTANTS && must.iter().all(|u| !u.scored);
        let flat = (more && plain).then(|| {
            let terms: Vec<(Term, f32)> = must
                .iter()
                .flat_map(|u| u.terms.iter().cloned())
                .chain(loose.iter().cloned())
                .collect();
            let constants = must.iter().flat_map(|u| u.constants.iter().cloned());
            Flat {
                query: Union::terms(terms.clone()).query(),
                terms,
                constants: constants.collect(),
            }
        });
        let query = if loose.is_empty() {
            Union::all(must)
        } else {
            let must = must.into_iter().map(|u| (Occur::Must, u.query()));
            let loose = Union::terms(loose).query();
            Box::new(BooleanQuery::new(
                must.chain([(Occur::Should, loose)]).collect(),
            ))
        };
        Built {
            query,
            unions,
            flat,
            pairs: Vec::new(),
        }
    }
}
