//! The tantivy index of the catalog: localised, stemmed text fields per
//! language, plus each product's position in the product list (`ord`).

use std::collections::HashMap;

use storefront_proto::catalog::v1::{Category, Product};
use storefront_proto::common::v1::LocalizedString;
use tantivy::schema::{FAST, Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions};
use tantivy::tokenizer::{
    Language, LowerCaser, RemoveLongFilter, SimpleTokenizer, Stemmer, TextAnalyzer,
};
use tantivy::{Index, IndexReader, TantivyDocument};

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

/// One built index and the products it points into.
pub struct Indexed {
    pub index: Index,
    pub reader: IndexReader,
    pub fields: Fields,
    pub products: Vec<Product>,
    pub catalog_version: u64,
    /// Category id -> key, for facet labels.
    pub category_keys: HashMap<String, String>,
}

fn text(tokenizer: &str) -> TextOptions {
    let indexing = TextFieldIndexing::default()
        .set_tokenizer(tokenizer)
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
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

pub fn build(
    products: Vec<Product>,
    categories: &[Category],
    catalog_version: u64,
) -> tantivy::Result<Indexed> {
    let mut b = Schema::builder();
    let fields = Fields {
        en: language(&mut b, "en", "en_stem"),
        de: language(&mut b, "de", "de_stem"),
        brand: b.add_text_field("brand", text("default")),
        ord: b.add_u64_field("ord", FAST),
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
    let mut writer = index.writer_with_num_threads(1, 64_000_000)?;
    for (ord, p) in products.iter().enumerate() {
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
        writer.add_document(doc)?;
    }
    writer.commit()?;
    let reader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()?;
    reader.reload()?;
    Ok(Indexed {
        index,
        reader,
        fields,
        products,
        catalog_version,
        category_keys,
    })
}
