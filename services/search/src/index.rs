//! The tantivy index of the catalog: localised, stemmed text fields per
//! language and each product's position in the export (`ord`, the row of
//! the listing index). Each product's encoded summary is kept once, beside
//! it, compressed on its own (`compact::Records`), so a page decompresses
//! its own products only. Filters, sorts and facets use the shared listing
//! index over the products' facts, not stored documents.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use storefront_domain::catalog::ProductSchema;
use storefront_domain::compact::Records;
use storefront_domain::currencies::Currencies;
use storefront_domain::listing::Listing;
use storefront_platform::error::ServiceError;
use tantivy::schema::{
    FAST, Field, INDEXED, IndexRecordOption, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::{
    Index, IndexReader, IndexSettings, IndexSortByField, Order, Searcher, SegmentReader,
    TantivyDocument,
};

use crate::analyzer;
use crate::facets::{FacetRows, SegmentDocs};
use crate::vocabulary::Vocabulary;

/// The fields searched for one language.
#[derive(Clone, Copy)]
pub struct LanguageFields {
    pub name: Field,
    /// The name's pairs of words within one word of each other
    /// (`analyzer::pair`).
    pub pairs: Field,
    /// The name's words unstemmed (`analyzer::FOLDED`): scored, never
    /// matched by (`text_query`), so that a word as typed ranks above one
    /// sharing its stem.
    pub words: Field,
    pub description: Field,
    pub category: Field,
    /// Which of the index's per-language tables (`vocabularies`) it uses.
    pub slot: usize,
}

#[derive(Clone, Copy)]
pub struct Fields {
    pub en: LanguageFields,
    pub de: LanguageFields,
    pub brand: Field,
    /// The product's row, indexed as well as fast: what a change deletes
    /// by. (Indexing the ids instead built a term dictionary of a million
    /// random strings at every start: a third of tantivy's indexing time.)
    pub ord: Field,
    /// The product's place in the relevance tie order (`tie_key`), fast
    /// only: the index keeps its documents sorted by it.
    pub tie: Field,
}

impl Fields {
    /// `de-*` searches German fields; every other locale English.
    pub fn for_locale(&self, locale: &str) -> LanguageFields {
        if locale.starts_with("de") {
            self.de
        } else {
            self.en
        }
    }
}

/// What every version of one built index shares: the tantivy index, its
/// reader (reloaded when a change is committed) and what documents are
/// made from.
pub struct Live {
    pub index: Index,
    pub reader: IndexReader,
    /// Category id -> its name per indexed language, for documents.
    pub category_names: HashMap<String, [String; 2]>,
    /// The listing's currencies: price column `i` is `currencies.code(i)`.
    pub currencies: Arc<Currencies>,
    /// Words' matches kept between searches, by segment.
    pub word_matches: crate::word_matches::WordMatches,
}

/// One version of the index and the listing index over the same products:
/// a search reads one version from start to end (its `searcher` is a
/// point-in-time view), while changes make the next.
#[derive(Clone)]
pub struct Indexed {
    pub live: Arc<Live>,
    pub searcher: Searcher,
    pub fields: Fields,
    /// Filters, sorts and facet values by row (`ord`).
    pub listing: Listing<ProductSchema>,
    /// Each row's place in the order relevance ties are broken by
    /// (popularity descending, then row: `tie_key`).
    pub tie_order: Arc<[u32]>,
    /// Each row's encoded listing summary.
    pub summaries: Records,
    /// Name words per language (by `LanguageFields::slot`), as of the last
    /// full build.
    pub vocabularies: Arc<[Vocabulary; 2]>,
    /// What a search reads per hit, per segment, by document.
    pub segments: Arc<[SegmentDocs]>,
    /// The (brand, category) pairs `segments` count hits by
    /// (`facets::Layout`), made with them.
    pub facet_layout: Arc<crate::facets::Layout>,
    pub catalog_version: u64,
    /// Category id -> key, for facet labels.
    pub category_keys: Arc<HashMap<String, String>>,
    /// Product ids in id order with their rows.
    pub ids: Arc<Vec<(Arc<str>, u32)>>,
}

impl Indexed {
    pub fn len(&self) -> usize {
        self.summaries.len()
    }

    /// The encoded summary of row `row`.
    pub fn summary(&self, row: u32) -> Result<Bytes, String> {
        self.summaries.get(row as usize).map(Bytes::from)
    }

    /// The row of product `id`.
    pub fn row(&self, id: &str) -> Option<u32> {
        self.ids
            .binary_search_by(|(held, _)| (**held).cmp(id))
            .ok()
            .map(|at| self.ids[at].1)
    }
}

/// Frequencies for scoring (documents alone for name pairs, which are
/// only matched); no positions: proximity is read from name pairs.
fn text(tokenizer: &str, record: IndexRecordOption) -> TextOptions {
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(tokenizer)
        .set_index_option(record);
    TextOptions::default().set_indexing_options(indexing)
}

fn language(
    b: &mut tantivy::schema::SchemaBuilder,
    tag: &str,
    (stem, pairs): (&'static str, &'static str),
    slot: usize,
) -> LanguageFields {
    let mut field = |name: &str, tokenizer, record| {
        b.add_text_field(&format!("{name}_{tag}"), text(tokenizer, record))
    };
    LanguageFields {
        name: field("name", stem, IndexRecordOption::WithFreqs),
        pairs: field("pairs", pairs, IndexRecordOption::Basic),
        words: field("words", analyzer::FOLDED, IndexRecordOption::WithFreqs),
        description: field("description", stem, IndexRecordOption::WithFreqs),
        category: field("category", stem, IndexRecordOption::WithFreqs),
        slot,
    }
}

/// Documents in tie order: a search by relevance keeps the first of
/// equally scored matches it meets, so the page can skip every block of
/// postings that cannot score strictly above its worst (`search::lead`).
pub fn tie_sort() -> IndexSortByField {
    IndexSortByField {
        field: "tie".into(),
        order: Order::Asc,
    }
}

/// A new in-RAM index with the catalog's schema and analyzers, sorting
/// each segment it writes in tie order unless its documents are
/// `fed_in_order`: then each segment, a part of the feed, already is, and
/// tantivy's sort would re-map every posting list and the document store
/// for nothing. Such an index is to sort from when it is built
/// (`sort_from_now`).
pub fn create(fed_in_order: bool) -> tantivy::Result<(Index, Fields)> {
    let mut b = Schema::builder();
    let fields = Fields {
        en: language(
            &mut b,
            "en",
            (analyzer::ENGLISH, analyzer::ENGLISH_PAIRS),
            0,
        ),
        de: language(&mut b, "de", (analyzer::GERMAN, analyzer::GERMAN_PAIRS), 1),
        brand: b.add_text_field("brand", text("default", IndexRecordOption::WithFreqs)),
        ord: b.add_u64_field("ord", FAST | INDEXED),
        tie: b.add_u64_field("tie", FAST),
    };
    let settings = IndexSettings {
        sort_by_field: (!fed_in_order).then(tie_sort),
        ..IndexSettings::default()
    };
    let index = Index::builder()
        .schema(b.build())
        .settings(settings)
        .create_in_ram()?;
    analyzer::register(&index);
    Ok((index, fields))
}

/// `index` sorting the segments written from now on in tie order, and
/// merging its segments in that order (each one already in it).
pub fn sort_from_now(index: &mut Index) {
    index.settings_mut().sort_by_field = Some(tie_sort());
}

/// Where a product stands in the tie order: more popular first, then
/// by row. (By row, not id: known as each document is written, and a
/// product whose row or popularity changes is written again.)
pub fn tie_key(row: u32, popularity: u32) -> u64 {
    (u64::from(u32::MAX - popularity) << 32) | u64::from(row)
}

/// `doc` stamped with its product's row and tie key.
pub fn stamp(doc: &mut TantivyDocument, fields: &Fields, row: u32, popularity: u32) {
    doc.add_u64(fields.ord, u64::from(row));
    doc.add_u64(fields.tie, tie_key(row, popularity));
}

/// Per segment, each document's row (`u32::MAX`: none).
pub type RowsOfDocs = Vec<Box<[u32]>>;

/// What a search reads of each document, per segment, and the pairs its
/// facet values count by.
pub fn segments(
    rows: RowsOfDocs,
    facets: &FacetRows,
    tie_order: &[u32],
) -> (Arc<[SegmentDocs]>, Arc<crate::facets::Layout>) {
    let segments = rows
        .into_iter()
        .map(|rows| facets.for_segment(rows, tie_order))
        .collect();
    (segments, facets.layout().clone())
}

/// Each row's place in the tie order (`tie_key`,
/// `storefront_domain::catalog::tie_rows`).
pub fn tie_order(listing: &Listing<ProductSchema>) -> Result<Vec<u32>, ServiceError> {
    let order = storefront_domain::catalog::tie_rows(listing)?;
    let mut place = vec![0; order.len()];
    for (i, &row) in order.iter().enumerate() {
        place[row as usize] = i as u32;
    }
    Ok(place)
}

/// Per segment, each document's row, from the `ord` column (none for a
/// deleted document).
pub fn rows_of_docs(searcher: &Searcher, ord: Field, len: usize) -> tantivy::Result<RowsOfDocs> {
    (searcher.segment_readers().iter())
        .map(|reader| rows_of_segment(reader, ord, len))
        .collect()
}

/// Each document's row in one segment, as `rows_of_docs`.
pub fn rows_of_segment(
    reader: &SegmentReader,
    ord: Field,
    len: usize,
) -> tantivy::Result<Box<[u32]>> {
    let name = reader.schema().get_field_name(ord);
    let column = reader.fast_fields().u64(name)?;
    let alive = reader.alive_bitset();
    Ok((0..reader.max_doc())
        .map(|doc| {
            column
                .first(doc)
                .filter(|&r| (r as usize) < len && alive.is_none_or(|a| a.is_alive(doc)))
                .map_or(u32::MAX, |r| r as u32)
        })
        .collect())
}
