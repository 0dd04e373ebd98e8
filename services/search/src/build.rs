//! Building the index from the catalog's export. Batches are decoded,
//! made into documents and their summaries compressed on every core at
//! once, then fed to tantivy in export order (a product's position is its
//! row); the listing index is built once tantivy has committed.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::Bytes;
use storefront_domain::catalog::{PRODUCT_FIELDS, ProductFacts, ProductSchema, ids_in_order};
use storefront_domain::compact::{Dictionary, Records};
use storefront_domain::currencies::Currencies;
use storefront_domain::interned::Interned;
use storefront_domain::listing::Listing;
use storefront_proto::catalog::v1::{Category, CompressedProduct};
use storefront_proto::encoded::ProductBatch;
use tantivy::tokenizer::TextAnalyzer;
use tantivy::{IndexWriter, TantivyDocument, TantivyError};

use crate::facets::FacetRows;
use crate::index::{self, Fields, Indexed};
use crate::view::{DocumentText, LOCALES, local};
use crate::vocabulary::Counter;

/// Category id -> its name in each of `LOCALES`.
pub type CategoryNames = HashMap<String, [String; 2]>;

/// Products of the export, as the catalog sent them: compressed against
/// the catalog's dictionary (kept as they are), or encoded (compressed
/// here, against the first product; a catalog older than the compressed
/// export).
pub enum Batch {
    Compressed {
        dictionary: Bytes,
        products: Vec<CompressedProduct>,
        /// The export is in tie order (`index::create`).
        tie_order: bool,
    },
    Encoded(Vec<Bytes>),
}

impl From<ProductBatch> for Batch {
    fn from(batch: ProductBatch) -> Self {
        if batch.compressed.is_empty() {
            Batch::Encoded(batch.products.encoded.into_iter().map(|p| p.body).collect())
        } else {
            Batch::Compressed {
                dictionary: batch.dictionary,
                products: batch.compressed,
                tie_order: batch.tie_order,
            }
        }
    }
}

impl Batch {
    /// What this batch's summaries are held compressed against.
    fn dictionary(&self) -> Dictionary {
        match self {
            Batch::Compressed { dictionary, .. } => Dictionary::new(dictionary.clone()),
            Batch::Encoded(bodies) => Dictionary::new(bodies.first().cloned().unwrap_or_default()),
        }
    }

    fn in_tie_order(&self) -> bool {
        matches!(
            self,
            Batch::Compressed {
                tie_order: true,
                ..
            }
        )
    }
}

/// One batch, ready to feed: documents without their row, the products'
/// popularity (their tie key) and their summaries compressed.
struct Prepared {
    docs: Vec<TantivyDocument>,
    popularity: Vec<u32>,
    summaries: Records,
    /// Name words per language, as `LOCALES`.
    words: [Counter; 2],
}

/// A product's document: its text per language and brand (its row and
/// tie key are stamped by the caller, `index::stamp`).
pub fn document(
    p: &DocumentText<'_>,
    fields: &Fields,
    categories: &CategoryNames,
) -> TantivyDocument {
    let mut doc = TantivyDocument::default();
    for (i, lang) in [fields.en, fields.de].into_iter().enumerate() {
        doc.add_text(lang.name, p.name[i]);
        doc.add_text(lang.pairs, p.name[i]);
        doc.add_text(lang.words, p.name[i]);
        doc.add_text(lang.description, p.description[i]);
        for names in (p.category_ids.iter()).filter_map(|&id| categories.get(id)) {
            doc.add_text(lang.category, &names[i]);
        }
    }
    doc.add_text(fields.brand, p.brand);
    doc
}

/// What preparing a batch reads.
struct Context<'a> {
    fields: &'a Fields,
    categories: &'a CategoryNames,
    /// Name words, as queries split them.
    words: &'a TextAnalyzer,
}

fn prepare(batch: Batch, cx: &Context<'_>, dictionary: &Dictionary) -> tantivy::Result<Prepared> {
    let mut summaries = Records::new(dictionary.clone());
    let mut docs = Vec::new();
    let mut popularity = Vec::new();
    let mut words: [Counter; 2] = Default::default();
    let mut analyzer = cx.words.clone();
    let mut add = |bytes: &[u8]| -> tantivy::Result<()> {
        let p = DocumentText::decode(bytes)
            .map_err(|e| TantivyError::InvalidArgument(format!("exported product: {e}")))?;
        for (counter, name) in words.iter_mut().zip(p.name) {
            counter.add(&mut analyzer, name);
        }
        popularity.push(p.popularity);
        docs.push(document(&p, cx.fields, cx.categories));
        Ok(())
    };
    match batch {
        Batch::Compressed {
            dictionary: theirs,
            products,
            ..
        } => {
            if theirs != dictionary.bytes() {
                return Err(TantivyError::InvalidArgument(
                    "an export changed its dictionary midway".into(),
                ));
            }
            let mut bytes = Vec::new();
            for p in &products {
                // Decompressed to be indexed, so what is kept is checked.
                dictionary
                    .decompress_into(&p.lz4, p.length, &mut bytes)
                    .map_err(TantivyError::InvalidArgument)?;
                add(&bytes)?;
                summaries.push_compressed(&p.lz4, p.length);
            }
        }
        Batch::Encoded(bodies) => {
            let mut scratch = Vec::new();
            for bytes in &bodies {
                add(bytes)?;
                summaries.push(bytes, &mut scratch);
            }
        }
    }
    Ok(Prepared {
        docs,
        popularity,
        summaries,
        words,
    })
}

/// What feeding the index leaves: by row, the products' summaries; the
/// name words of each language.
struct Fed {
    summaries: Records,
    words: [Counter; 2],
}

/// Feeds every batch to `writer` in order, each prepared on a free core.
fn feed(
    writer: &IndexWriter,
    cx: &Context<'_>,
    mut batches: impl Iterator<Item = Batch> + Send,
) -> tantivy::Result<Fed> {
    let Some(first) = batches.next() else {
        return Ok(Fed {
            summaries: Records::default(),
            words: Default::default(),
        });
    };
    let dictionary = first.dictionary();
    let queue = Mutex::new(std::iter::once(first).chain(batches).enumerate());
    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    let (done, prepared) = std::sync::mpsc::sync_channel(workers * 2);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let done = done.clone();
            let (queue, dictionary) = (&queue, &dictionary);
            scope.spawn(move || {
                loop {
                    let next = queue.lock().unwrap_or_else(|p| p.into_inner()).next();
                    let Some((seq, batch)) = next else { break };
                    let prepared = prepare(batch, cx, dictionary);
                    if done.send((seq, prepared)).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done);
        let mut parts = Vec::new();
        let mut words: [Counter; 2] = Default::default();
        let mut waiting = BTreeMap::new();
        let mut row = 0u32;
        for (seq, ready) in prepared {
            waiting.insert(seq, ready);
            while let Some(ready) = waiting.remove(&parts.len()) {
                let ready: Prepared = ready?;
                for (mut doc, &popularity) in ready.docs.into_iter().zip(&ready.popularity) {
                    index::stamp(&mut doc, cx.fields, row, popularity);
                    row += 1;
                    writer.add_document(doc)?;
                }
                parts.push(ready.summaries);
                for (all, more) in words.iter_mut().zip(ready.words) {
                    all.merge(more);
                }
            }
        }
        Ok(Fed {
            summaries: Records::concat(dictionary.clone(), parts),
            words,
        })
    })
}

fn internal(e: impl std::fmt::Display) -> TantivyError {
    TantivyError::InternalError(e.to_string())
}

/// What is built of the products' facts: the listing index, the packed
/// facet rows, the relevance tie order and the product ids in order.
struct Listed {
    listing: Listing<ProductSchema>,
    facets: FacetRows,
    tie_order: Vec<u32>,
    ids: Vec<(Arc<str>, u32)>,
}

/// `Listed` of `facts`. The ids are put in order beside the listing's own
/// sort by id, and the facts are dropped beside the facets: each alone
/// left a core idle (about 0.5 s of a start at 1,000,000 products).
fn listing(facts: Vec<ProductFacts>, currencies: &Currencies) -> tantivy::Result<Listed> {
    let (listing, ids) = std::thread::scope(|s| {
        let ids = s.spawn(|| ids_in_order(&facts));
        let listing = Listing::build(&facts, PRODUCT_FIELDS, currencies.codes());
        (listing, ids.join())
    });
    let ids = ids.map_err(|_| internal("ordering ids panicked"))?;
    let (facets, tie_order) = std::thread::scope(|s| {
        s.spawn(move || drop(facts));
        let facets = FacetRows::build(&listing).map_err(internal)?;
        let tie_order = index::tie_order(&listing).map_err(internal)?;
        tantivy::Result::Ok((facets, tie_order))
    })?;
    Ok(Listed {
        listing,
        facets,
        tie_order,
        ids,
    })
}

/// Each row's facts (for the listing), read back from the summaries once
/// tantivy has committed, on every core. Kept from the feed on, they were
/// held beside the writer's arenas at its end, the start's peak (at
/// 100,000 products 365-383 MB then, 347-360 MB since).
fn facts_of(summaries: &Records) -> tantivy::Result<Vec<ProductFacts>> {
    let rows = summaries.len();
    let workers = std::thread::available_parallelism().map_or(2, usize::from);
    let chunk = rows.div_ceil(workers).max(1);
    let read = |from: usize| -> tantivy::Result<Vec<ProductFacts>> {
        let mut strings = Interned::default();
        let mut bytes = Vec::new();
        let upto = (from + chunk).min(rows);
        // Pushed into their exact room: collected through a `Result` they
        // grew by doubling, every step a copy into pages faulted anew.
        let mut part = Vec::with_capacity(upto - from);
        for row in from..upto {
            summaries.get_into(row, &mut bytes).map_err(internal)?;
            part.push(crate::view::facts(&bytes, &mut strings).map_err(internal)?);
        }
        Ok(part)
    };
    let parts: Vec<tantivy::Result<Vec<ProductFacts>>> = std::thread::scope(|scope| {
        let running: Vec<_> = (0..rows)
            .step_by(chunk)
            .map(|from| scope.spawn(move || read(from)))
            .collect();
        running
            .into_iter()
            .map(|t| {
                t.join()
                    .unwrap_or_else(|_| Err(internal("reading facts panicked")))
            })
            .collect()
    });
    // Moved into one vector of the exact size: growing one by doubling
    // held the old and the new at once (at 1,000,000 products, 100 MB and
    // 200 MB).
    let mut all = Vec::with_capacity(rows);
    for part in parts {
        all.extend(part?);
    }
    Ok(all)
}

/// Category id -> its name in each of `LOCALES`.
pub fn category_names(categories: &[Category]) -> CategoryNames {
    categories
        .iter()
        .filter_map(|c| {
            let id = c.meta.as_ref()?.id.clone();
            Some((id, LOCALES.map(|l| local(c.name.as_ref(), l).to_string())))
        })
        .collect()
}

/// Indexes the products of `batches` (encoded summaries, in export order)
/// as they arrive, priced in `currencies`.
pub fn build(
    batches: impl Iterator<Item = Batch> + Send,
    categories: &[Category],
    currencies: std::sync::Arc<Currencies>,
) -> tantivy::Result<Indexed> {
    let started = Instant::now();
    let mut batches = batches.peekable();
    let in_order = batches.peek().is_some_and(Batch::in_tie_order);
    let (mut index, fields) = index::create(in_order)?;
    let names = category_names(categories);
    let category_keys = categories
        .iter()
        .filter_map(|c| Some((c.meta.as_ref()?.id.clone(), c.key.clone())))
        .collect();
    // Two indexing threads, so two or more segments: served as they are,
    // then merged into one by `merged` (a search sets up its scorers once
    // per segment, so one segment answers fastest), which at 1,000,000
    // products takes as long as feeding.
    let mut writer: IndexWriter = index.writer_with_num_threads(2, 128_000_000)?;
    writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
    let words = index
        .tokenizers()
        .get("default")
        .ok_or_else(|| internal("no default tokenizer"))?;
    let cx = Context {
        fields: &fields,
        categories: &names,
        words: &words,
    };
    let Fed { summaries, words } = feed(&writer, &cx, batches)?;
    let fed = started.elapsed();
    // Committed before the listing is built, not beside it: tantivy's
    // writer arenas are freed first, so the two never add up in the
    // start's peak (15-40 MB less at 100,000 products). Both use every
    // core: on two, running them at once bought no time measured.
    writer.commit()?;
    writer.wait_merging_threads()?;
    if in_order {
        index::sort_from_now(&mut index);
    }
    let facts = facts_of(&summaries)?;
    let rows_total = facts.len();
    let reader: tantivy::IndexReader = index
        .reader_builder()
        .reload_policy(tantivy::ReloadPolicy::Manual)
        .try_into()?;
    reader.reload()?;
    let Listed {
        listing,
        facets,
        tie_order,
        ids,
    } = listing(facts, &currencies)?;
    let searcher = reader.searcher();
    let rows = index::rows_of_docs(&searcher, fields.ord, rows_total)?;
    let (segments, facet_layout) = index::segments(rows, &facets, &tie_order);
    drop(facets);
    tracing::info!(
        fed_ms = fed.as_millis() as u64,
        built_ms = started.elapsed().as_millis() as u64,
        segments = segments.len(),
        fed_in_tie_order = in_order,
        "search index phases"
    );
    Ok(Indexed {
        listing,
        tie_order: tie_order.into(),
        summaries,
        vocabularies: std::sync::Arc::new(words.map(Counter::finish)),
        live: std::sync::Arc::new(index::Live {
            index,
            reader,
            category_names: names,
            currencies,
            word_matches: Default::default(),
        }),
        searcher,
        fields,
        segments,
        facet_layout,
        catalog_version: 0,
        category_keys: std::sync::Arc::new(category_keys),
        ids: std::sync::Arc::new(ids),
    })
}

/// `current` with its segments merged into one (`None`: one already). The
/// listing and summaries are shared, only the per-segment arrays are made
/// again.
pub fn merged(current: &Indexed) -> tantivy::Result<Option<Indexed>> {
    let live = &current.live;
    let segments = live.index.searchable_segment_ids()?;
    if segments.len() <= 1 {
        return Ok(None);
    }
    let mut writer: IndexWriter = live.index.writer_with_num_threads(1, 15_000_000)?;
    writer.set_merge_policy(Box::new(tantivy::merge_policy::NoMergePolicy));
    writer.merge(&segments).wait()?;
    writer.wait_merging_threads()?;
    live.reader.reload()?;
    let mut next = current.clone();
    next.searcher = live.reader.searcher();
    let rows = index::rows_of_docs(&next.searcher, next.fields.ord, next.len())?;
    let facets = FacetRows::build(&next.listing).map_err(internal)?;
    (next.segments, next.facet_layout) = index::segments(rows, &facets, &next.tie_order);
    Ok(Some(next))
}

#[cfg(test)]
#[path = "build_tests.rs"]
pub(crate) mod tests;
