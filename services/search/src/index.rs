//! The tantivy index of the catalog: localised, stemmed text fields per
//! language, each product's position in the export (`ord`, the row of the
//! listing index) and its encoded summary, kept only in the index's own
//! compressed document store. Filters, sorts and facets use the shared
//! listing index over the products' facts, not stored documents.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;
use prost::Message;
use storefront_common::catalog::{CURRENCIES, PRODUCT_FIELDS, ProductFacts, ProductSchema};
use storefront_common::listing::Listing;
use storefront_proto::catalog::v1::{Category, Product};
use storefront_proto::common::v1::LocalizedString;
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STORED, Schema, TextFieldIndexing, TextOptions, Value,
};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
};
use tantivy::{DocAddress, Index, IndexReader, TantivyDocument};

/// The fields searched for one language.
#[derive(Clone, Copy)]
pub struct LanguageFields {
    pub name: Field,
    pub description: Field,
    pub category: Field,
    /// Unstemmed name words, for completions.
    pub raw_name: Field,
}

#[derive(Clone, Copy)]
pub struct Fields {
    pub en: LanguageFields,
    pub de: LanguageFields,
    pub brand: Field,
    pub ord: Field,
    /// The product's encoded listing summary (stored, not indexed).
    pub summary: Field,
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

/// One built index and the listing index over the same products.
pub struct Indexed {
    pub index: Index,
    pub reader: IndexReader,
    pub fields: Fields,
    /// Filters, sorts and facet values by row (`ord`).
    pub listing: Listing<ProductSchema>,
    /// Where each row's document is.
    pub addresses: Vec<DocAddress>,
    /// Per segment, each document's row: a plain array, read per hit.
    pub rows: RowsOfDocs,
    pub catalog_version: u64,
    /// Category id -> key, for facet labels.
    pub category_keys: HashMap<String, String>,
}

impl Indexed {
    pub fn len(&self) -> usize {
        self.addresses.len()
    }

    /// The encoded summary of row `row`, from the document store.
    pub fn summary(&self, searcher: &tantivy::Searcher, row: u32) -> tantivy::Result<Bytes> {
        let Some(&address) = self.addresses.get(row as usize) else {
            return Ok(Bytes::new());
        };
        let doc: TantivyDocument = searcher.doc(address)?;
        Ok(doc
            .get_first(self.fields.summary)
            .and_then(|v| v.as_bytes())
            .map(Bytes::copy_from_slice)
            .unwrap_or_default())
    }
}

/// Frequencies for scoring, no positions: no query here is a phrase, and
/// positions cost indexing time and memory.
fn text(tokenizer: &str) -> TextOptions {
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(tokenizer)
        .set_index_option(IndexRecordOption::WithFreqs);
    TextOptions::default().set_indexing_options(indexing)
}

fn language(
    b: &mut tantivy::schema::SchemaBuilder,
    tag: &str,
    stem: &'static str,
) -> LanguageFields {
    LanguageFields {
        name: b.add_text_field(&format!("name_{tag}"), text(stem)),
        description: b.add_text_field(&format!("description_{tag}"), text(stem)),
        category: b.add_text_field(&format!("category_{tag}"), text(stem)),
        raw_name: b.add_text_field(&format!("raw_name_{tag}"), text("default")),
    }
}

fn local<'a>(ls: Option<&'a LocalizedString>, locale: &str) -> &'a str {
    ls.and_then(|l| l.values.get(locale))
        .map_or("", String::as_str)
}

/// Indexes `products` (encoded summaries, in export order: a product's
/// position is its row) as they arrive.
pub fn build(
    products: impl Iterator<Item = Bytes>,
    categories: &[Category],
) -> tantivy::Result<Indexed> {
    let mut b = Schema::builder();
    let fields = Fields {
        en: language(&mut b, "en", "en_stem"),
        de: language(&mut b, "de", "de_stem"),
        brand: b.add_text_field("brand", text("default")),
        ord: b.add_u64_field("ord", FAST),
        summary: b.add_bytes_field("summary", STORED),
    };
    let index = Index::create_in_ram(b.build());
    let german = TextAnalyzer::builder(SimpleTokenizer::default())
        .filter(RemoveLongFilter::limit(40))
        .filter(LowerCaser)
        .filter(Stemmer::new(Language::German))
        .build();
    index.tokenizers().register("de_stem", german);

    let by_id: HashMap<&str, &Category> = categories
        .iter()
        .filter_map(|c| c.meta.as_ref().map(|m| (m.id.as_str(), c)))
        .collect();
    let category_keys = by_id
        .iter()
        .map(|(id, c)| (id.to_string(), c.key.clone()))
        .collect();
    // Two indexing threads, then one merged segment: a search sets up its
    // scorers once per segment, so one segment answers fastest.
    let mut writer = index.writer_with_num_threads(2, 128_000_000)?;
    writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
    let mut facts = Vec::new();
    for (ord, bytes) in products.enumerate() {
        let p = Product::decode(bytes.as_ref())
            .map_err(|e| tantivy::TantivyError::InvalidArgument(format!("product {ord}: {e}")))?;
        let mut doc = TantivyDocument::default();
        for (lang, locale) in [(fields.en, "en-AU"), (fields.de, "de-DE")] {
            doc.add_text(lang.name, local(p.name.as_ref(), locale));
            doc.add_text(lang.raw_name, local(p.name.as_ref(), locale));
            doc.add_text(lang.description, local(p.description.as_ref(), locale));
            for id in &p.category_ids {
                if let Some(c) = by_id.get(id.as_str()) {
                    doc.add_text(lang.category, local(c.name.as_ref(), locale));
                }
            }
        }
        doc.add_text(fields.brand, &p.brand);
        doc.add_u64(fields.ord, ord as u64);
        doc.add_bytes(fields.summary, bytes.as_ref());
        writer.add_document(doc)?;
        facts.push(ProductFacts::of(&p));
    }
    writer.commit()?;
    let segments = index.searchable_segment_ids()?;
    if segments.len() > 1 {
        writer.merge(&segments).wait()?;
    }
    writer.wait_merging_threads()?;
    let reader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()?;
    reader.reload()?;
    let (addresses, rows) = addresses(&reader, fields.ord, facts.len())?;
    let contexts: Vec<usize> = (0..CURRENCIES.len()).collect();
    Ok(Indexed {
        listing: Listing::build(&facts, PRODUCT_FIELDS, &contexts),
        index,
        reader,
        fields,
        addresses,
        rows,
        catalog_version: 0,
        category_keys,
    })
}

/// Per segment, each document's row (`u32::MAX`: none).
type RowsOfDocs = Vec<Arc<[u32]>>;

/// Row -> document and, per segment, document -> row, from the `ord`
/// columns.
fn addresses(
    reader: &IndexReader,
    ord: Field,
    len: usize,
) -> tantivy::Result<(Vec<DocAddress>, RowsOfDocs)> {
    let searcher = reader.searcher();
    let mut out = vec![DocAddress::new(0, 0); len];
    let mut rows = Vec::new();
    let name = searcher.schema().get_field_name(ord).to_string();
    for (segment, reader) in searcher.segment_readers().iter().enumerate() {
        let column = reader.fast_fields().u64(&name)?;
        let mut of_doc = Vec::with_capacity(reader.max_doc() as usize);
        for doc in 0..reader.max_doc() {
            let row = column.first(doc).filter(|&r| (r as usize) < len);
            if let Some(row) = row {
                out[row as usize] = DocAddress::new(segment as u32, doc);
            }
            of_doc.push(row.map_or(u32::MAX, |r| r as u32));
        }
        rows.push(of_doc.into());
    }
    Ok((out, rows))
}
