//! A query as unions of field terms: the shape tantivy prunes by
//! block-max WAND, and whose matches a count reads straight from the
//! terms' postings.

use tantivy::Term;
use tantivy::query::{BooleanQuery, BoostQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;

/// Where a count reads matches from: a term's postings, or those of
/// every term of its field within so many typos of it.
#[derive(Clone, Debug)]
pub enum Source {
    Term(Term),
    Within(Term, u8),
}

/// Clauses of which a match needs one: field terms with their weights,
/// and other queries (within typos, multi-word synonyms).
pub(super) struct Union {
    pub terms: Vec<(Term, f32)>,
    pub other: Vec<Box<dyn Query>>,
    /// What the other queries match, as sources (None: one matches
    /// something no union of postings is, as a multi-word synonym).
    pub sources: Option<Vec<Source>>,
}

impl Default for Union {
    fn default() -> Self {
        Self {
            terms: Vec::new(),
            other: Vec::new(),
            sources: Some(Vec::new()),
        }
    }
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
    /// One more clause, matching what `sources` hold (None: unknown).
    pub fn push(&mut self, query: Box<dyn Query>, sources: Option<Vec<Source>>) {
        self.other.push(query);
        match (&mut self.sources, sources) {
            (Some(all), Some(more)) => all.extend(more),
            (all, _) => *all = None,
        }
    }

    /// What a match of the union is read from (None: not postings alone).
    fn read_from(&self) -> Option<Vec<Source>> {
        let more = self.sources.as_ref()?;
        let terms = self
            .terms
            .iter()
            .map(|(term, _)| Source::Term(term.clone()));
        Some(terms.chain(more.iter().cloned()).collect())
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
        let other = self.other.into_iter().map(|q| (Occur::Should, q));
        joined(terms.chain(other).collect())
    }
}

/// A text query and, when it is every one of some unions (each word's
/// field terms, one-word synonyms, words within typos), what each union's
/// matches are read from: its matches are then exactly the documents
/// found in every union's postings, which a count reads without a scorer.
pub struct Built {
    pub query: Box<dyn Query>,
    pub unions: Option<Vec<Vec<Source>>>,
    /// When it is every one of several unions of weighted terms alone:
    /// all their terms in one union (`Flat`).
    pub flat: Option<Flat>,
    /// Each two consecutive words as a term of name pairs
    /// (`analyzer::pair`): a product whose name has more of them ranks
    /// first (`search::near`).
    pub pairs: Vec<Term>,
}

/// Every term of a query's words in one union: on a document that
/// matches the query it scores the same (the sum of its terms' scores),
/// and it is the shape block-max WAND prunes.
pub struct Flat {
    pub query: Box<dyn Query>,
    /// Its terms with their weights, for scoring a few documents term by
    /// term.
    pub terms: Vec<(Term, f32)>,
}

impl Built {
    /// Every one of `must`.
    pub(super) fn of(must: Vec<Union>) -> Self {
        let unions = must.iter().map(Union::read_from).collect();
        let flat = (must.len() > 1 && must.iter().all(|u| u.other.is_empty())).then(|| {
            let terms: Vec<(Term, f32)> =
                must.iter().flat_map(|u| u.terms.iter().cloned()).collect();
            Flat {
                query: Union {
                    terms: terms.clone(),
                    ..Union::default()
                }
                .query(),
                terms,
            }
        });
        Built {
            query: Union::all(must),
            unions,
            flat,
            pairs: Vec::new(),
        }
    }
}
