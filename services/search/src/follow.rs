//! The index follows the catalog change by change: every
//! `SEARCH_FOLLOW_MS` (500 ms) it asks what changed since its version (`ListChanges`), re-reads those
//! products (`ExportProducts` by id), and makes the next version of the
//! index: each product's document deleted by id and added again (tantivy),
//! its listing entry and summary edited, one commit, the reader reloaded.
//! A search reads one version start to end. When the catalog no longer
//! knows what changed since (an import; a version too far back), the
//! index is rebuilt whole, as at start.

use std::collections::HashMap;
use std::sync::Arc;

use prost::Message;
use storefront_domain::catalog::{ProductFacts, meta_id};
use storefront_domain::compact::Records;
use storefront_platform::client::call::Current;
use storefront_platform::error::ServiceError;
use storefront_proto::catalog::v1::{ExportProductsRequest, ListChangesRequest, Product};
use storefront_proto::encoded::ProductBatch;
use tantivy::schema::Term;
use tantivy::{IndexWriter, TantivyDocument, TantivyError};

use crate::build::document;
use crate::clients::Catalog;
use storefront_domain::currencies::Currencies;

use crate::clients::unavailable;
use crate::facets::{self, FacetRows, Kept};
use crate::index::{self, Indexed};
use crate::service::SearchApi;
use crate::view::IndexedProduct;

/// Products re-read per export call.
const BY_ID: usize = 5_000;

impl SearchApi {
    /// Catches up with the catalog once; whether anything changed.
    pub async fn follow(&self) -> Result<bool, ServiceError> {
        let _turn = self.updating.lock().await;
        let current = self.index();
        let catalog = Catalog(&self.catalog);
        let since = ListChangesRequest {
            since_version: current.catalog_version,
        };
        let changes = catalog
            .list_changes(&Current, since)
            .await
            .map_err(unavailable)?;
        if self.reindex_asked(changes.reindex_generation) {
            let generation = changes.reindex_generation;
            tracing::info!(
                generation,
                "a reindex was asked (of another replica): rebuilding"
            );
            self.rebuild_now().await?;
            return Ok(true);
        }
        // A currency the catalog added (its markets did): indexed afresh.
        let theirs = changes.currencies.iter().map(String::as_str);
        let theirs = theirs.zip(changes.minor_units.iter().copied());
        let theirs = Currencies::from_pairs(theirs);
        let ours = self.currencies();
        if !theirs.is_empty()
            && theirs.codes().len() > ours.len()
            && theirs.codes().starts_with(ours.codes())
        {
            tracing::info!(currencies = %theirs.listed(), "search indexes prices in a new currency");
            *self.currencies.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(theirs);
            self.rebuild_now().await?;
            return Ok(true);
        }
        if changes.catalog_version == current.catalog_version {
            return Ok(false);
        }
        if changes.rebuild {
            self.rebuild_now().await?;
            return Ok(true);
        }
        let mut batches = Vec::new();
        for ids in changes.product_ids.chunks(BY_ID) {
            let request = ExportProductsRequest {
                batch_size: 0,
                compressed: true,
                product_ids: ids.to_vec(),
                tie_order: false,
            };
            let mut stream = catalog
                .export_products(&Current, request)
                .await
                .map_err(unavailable)?;
            while let Some(batch) = stream
                .message()
                .await
                .map_err(|s| unavailable(s.message()))?
            {
                batches.push(batch);
            }
        }
        let version = changes.catalog_version;
        let started = std::time::Instant::now();
        // A step is small (milliseconds): it takes its turn with requests,
        // at their priority, not yielding as a rebuild does, so that search
        // keeps its bound under load.
        let next = storefront_platform::cpu::run(move || {
            apply(&current, &changes.product_ids, batches, version)
        })
        .await?;
        match next {
            Ok(next) => {
                tracing::debug!(
                    products = next.len(),
                    catalog_version = version,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "search index followed the catalog"
                );
                storefront_platform::telemetry::metrics::catalog_version(
                    "search_index_catalog_version",
                    next.catalog_version,
                );
                // Most of it shared with `next`: dropped here, after the lock.
                drop(self.replace(next));
            }
            // The catalog's dictionary changed (it was replaced whole).
            Err(e) => {
                tracing::info!(error = %e, "search index rebuilt instead of followed");
                self.rebuild_now().await?;
            }
        }
        Ok(true)
    }
}

/// A product re-read: its summary as held (compressed) and decoded.
struct Read {
    product: Product,
    lz4: bytes::Bytes,
    length: u32,
}

fn internal(e: impl std::fmt::Display) -> TantivyError {
    TantivyError::InternalError(e.to_string())
}

/// The products of `batches` by id, checked to be compressed against
/// `summaries`' dictionary.
fn read(batches: Vec<ProductBatch>, summaries: &Records) -> tantivy::Result<HashMap<String, Read>> {
    let dictionary = summaries.dictionary();
    let mut found = HashMap::new();
    for batch in batches {
        if batch.compressed.is_empty() {
            continue;
        }
        if batch.dictionary != *dictionary.bytes() {
            return Err(internal("the catalog's dictionary changed"));
        }
        for p in batch.compressed {
            let bytes = dictionary.decompress(&p.lz4, p.length).map_err(internal)?;
            let product: Product = IndexedProduct::decode(bytes.as_slice())
                .map_err(internal)?
                .into();
            let id = meta_id(product.meta.as_ref()).to_string();
            found.insert(
                id,
                Read {
                    product,
                    lz4: p.lz4,
                    length: p.length,
                },
            );
        }
    }
    Ok(found)
}

/// The next version of `current`: the products `changed` names made as
/// `batches` say (absent from them: deleted). A product whose document is
/// unchanged (a stock or price change) is edited in the listing and the
/// summaries only; a step with no document to write leaves tantivy alone
/// (no writer, commit, reload, nor the merges a commit sets off).
pub(crate) fn apply(
    current: &Indexed,
    changed: &[String],
    batches: Vec<ProductBatch>,
    version: u64,
) -> tantivy::Result<Indexed> {
    let found = read(batches, &current.summaries)?;
    let unwritten = same_documents(current, changed, &found)?;
    let live = current.live.clone();
    let fields = current.fields;
    let mut next = current.clone();
    let mut writer = match unwritten.len() < changed.len() {
        true => Some(live.index.writer_with_num_threads(1, 15_000_000)?),
        false => None,
    };
    let contexts = live.currencies.clone();
    let contexts = contexts.codes();
    let names = &live.category_names;
    let row_term = |row: u32| Term::from_field_u64(fields.ord, u64::from(row));
    let doc = |p: &Product, row: u32| -> TantivyDocument {
        let mut doc = document(&p.into(), &fields, names);
        index::stamp(&mut doc, &fields, row, p.popularity);
        doc
    };
    // Rows whose stock and price may have moved. Products held before are
    // edited first, their listing entries together (one pass a changed
    // column, `Listing::replace_all`), then the new and the deleted ones
    // (a delete renumbers the last row).
    let mut edited = Vec::new();
    let mut facts = Vec::new();
    for id in changed {
        let (Some(read), Some(row)) = (found.get(id.as_str()), next.row(id)) else {
            continue;
        };
        if let Some(writer) = writer.as_mut()
            && !unwritten.contains(id.as_str())
        {
            writer.delete_term(row_term(row));
            writer.add_document(doc(&read.product, row))?;
        }
        facts.push((row, ProductFacts::of(&read.product)));
        next.summaries.replace(row as usize, &read.lz4, read.length);
        edited.push(row);
    }
    let facts: Vec<(u32, &ProductFacts)> = facts.iter().map(|(row, f)| (*row, f)).collect();
    next.listing.replace_all(&facts, contexts);
    for id in changed {
        match (found.get(id.as_str()), next.row(id), writer.as_mut()) {
            (Some(read), None, Some(writer)) => {
                let row = next.len() as u32;
                let ids = Arc::make_mut(&mut next.ids);
                let at = ids.partition_point(|(held, _)| **held < **id);
                ids.insert(at, (id.as_str().into(), row));
                writer.add_document(doc(&read.product, row))?;
                next.listing
                    .push(&ProductFacts::of(&read.product), contexts, at as u32);
                next.summaries.push_compressed(&read.lz4, read.length);
            }
            (None, Some(row), Some(writer)) => remove(&mut next, writer, row, id, &doc)?,
            _ => {}
        }
    }
    next.catalog_version = version;
    let Some(mut writer) = writer else {
        // The same documents, rows and popularity: the segments' rows and
        // the tie order hold; only stock and prices may have moved.
        if facets::holds_but_stock_and_prices(&current.listing, &next.listing).map_err(internal)? {
            next.segments =
                facets::restocked(&next.segments, &next.listing, &edited).map_err(internal)?;
            return Ok(next);
        }
        return rebuilt_facets(next);
    };
    writer.commit()?;
    writer.wait_merging_threads()?;
    live.reader.reload()?;
    next.searcher = live.reader.searcher();
    kept_facets(current, next, &edited)
}

/// `next` (documents written since `current`) with what a search reads of
/// each document kept from `current` where what facets count by and the
/// tie order hold (`facets::kept`), else made again.
fn kept_facets(current: &Indexed, mut next: Indexed, edited: &[u32]) -> tantivy::Result<Indexed> {
    let popularity = |at: &Indexed| at.listing.column("popularity", 0).map(std::ptr::from_ref);
    let holds = current.len() == next.len()
        && popularity(current).map_err(internal)? == popularity(&next).map_err(internal)?
        && facets::holds_but_stock_and_prices(&current.listing, &next.listing).map_err(internal)?;
    if !holds {
        return rebuilt_facets(next);
    }
    let before: HashMap<_, _> = (current.searcher.segment_readers().iter())
        .zip(current.segments.iter())
        .map(|(reader, docs)| (reader.segment_id(), (reader.num_deleted_docs(), docs)))
        .collect();
    let mut kept = Vec::new();
    for reader in next.searcher.segment_readers() {
        kept.push(match before.get(&reader.segment_id()) {
            Some(&(deleted, docs)) if deleted == reader.num_deleted_docs() => Kept::Same(docs),
            Some(&(_, docs)) => {
                let alive = reader.alive_bitset();
                let alive = move |doc| alive.is_none_or(|a| a.is_alive(doc));
                Kept::Deleted(docs, Box::new(alive))
            }
            None => Kept::New(index::rows_of_segment(reader, next.fields.ord, next.len())?),
        });
    }
    let layout = &next.facet_layout;
    match facets::kept(kept, &next.listing, layout, &next.tie_order).map_err(internal)? {
        Some(segments) => {
            next.segments =
                facets::restocked(&segments, &next.listing, edited).map_err(internal)?;
            Ok(next)
        }
        None => rebuilt_facets(next),
    }
}

/// `next` with what a search reads of each document made again from its
/// listing and its searcher's segments.
fn rebuilt_facets(mut next: Indexed) -> tantivy::Result<Indexed> {
    let rows = index::rows_of_docs(&next.searcher, next.fields.ord, next.len())?;
    let facets = FacetRows::build(&next.listing).map_err(internal)?;
    let tie_order = index::tie_order(&next.listing).map_err(internal)?;
    (next.segments, next.facet_layout) = index::segments(rows, &facets, &tie_order);
    next.tie_order = tie_order.into();
    Ok(next)
}

/// The products of `changed` re-read with the same document as held (what
/// `document` and `stamp` read: names, description, categories, brand,
/// popularity), whose tantivy document need not be written again.
fn same_documents<'a>(
    current: &Indexed,
    changed: &'a [String],
    found: &HashMap<String, Read>,
) -> tantivy::Result<std::collections::HashSet<&'a str>> {
    let mut same = std::collections::HashSet::new();
    for id in changed {
        let (Some(read), Some(row)) = (found.get(id.as_str()), current.row(id)) else {
            continue;
        };
        let bytes = current.summaries.get(row as usize).map_err(internal)?;
        let held: Product = IndexedProduct::decode(bytes.as_slice())
            .map_err(internal)?
            .into();
        let new = &read.product;
        if held.name == new.name
            && held.description == new.description
            && held.category_ids == new.category_ids
            && held.brand == new.brand
            && held.popularity == new.popularity
        {
            same.insert(id.as_str());
        }
    }
    Ok(same)
}

/// Removes row `row` (product `id`): the last row takes its place, and its
/// document is added again with the new row.
fn remove(
    next: &mut Indexed,
    writer: &mut IndexWriter,
    row: u32,
    id: &str,
    doc: &impl Fn(&Product, u32) -> TantivyDocument,
) -> tantivy::Result<()> {
    let row_term = |row: u32| Term::from_field_u64(next.fields.ord, u64::from(row));
    // A delete takes only documents added before it: the moved product's
    // document, added after both deletes, stays.
    writer.delete_term(row_term(row));
    let last = next.len() as u32 - 1;
    let ids = Arc::make_mut(&mut next.ids);
    if row != last {
        let bytes = next.summaries.get(last as usize).map_err(internal)?;
        let moved: Product = IndexedProduct::decode(bytes.as_slice())
            .map_err(internal)?
            .into();
        let moved_id = meta_id(moved.meta.as_ref());
        writer.delete_term(row_term(last));
        writer.add_document(doc(&moved, row))?;
        if let Ok(at) = ids.binary_search_by(|(held, _)| (**held).cmp(moved_id)) {
            ids[at].1 = row;
        }
    }
    if let Ok(at) = ids.binary_search_by(|(held, _)| (**held).cmp(id)) {
        ids.remove(at);
    }
    next.listing.swap_remove(row);
    next.summaries.swap_remove(row as usize);
    Ok(())
}

#[cfg(test)]
mod tests;
