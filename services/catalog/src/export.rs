//! `ExportProducts`: every product, or those named, in batches from one
//! version of the catalog, in row order or in tie order.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::catalog::v1::{CompressedProduct, ExportProductsRequest};
use storefront_proto::encoded::{EncodedProduct, ProductBatch};
use tonic::Status;

use crate::store::Catalog;

/// Products a batch unless the reader asks for another size.
const EXPORT_BATCH: usize = 500;

pub type Batches = Pin<Box<dyn Stream<Item = Result<ProductBatch, Status>> + Send>>;

/// The export `request` asks of `catalog` (a consistent snapshot: the
/// version being read, batch by batch).
pub async fn batches(
    catalog: Arc<Catalog>,
    request: ExportProductsRequest,
) -> Result<Batches, ServiceError> {
    let size = match request.batch_size as usize {
        0 => EXPORT_BATCH,
        n => n.min(5_000),
    };
    if !request.product_ids.is_empty() {
        if request.product_ids.len() > 10_000 {
            return Err(ServiceError::new(
                ErrorKind::BadRequest,
                "BAD_REQUEST",
                "at most 10,000 products by id",
            ));
        }
        let rows: Vec<u32> = request
            .product_ids
            .iter()
            .filter_map(|id| catalog.product_row(id))
            .collect();
        let batch = export_rows(&catalog, rows.into_iter(), request.compressed);
        return Ok(Box::pin(futures::stream::iter([batch])));
    }
    let order = match request.tie_order {
        true => Some(tie_order(&catalog).await?),
        false => None,
    };
    let len = catalog.products.len();
    let batches = (0..len).step_by(size.max(1)).map(move |start| {
        let end = (start + size).min(len);
        let mut batch = match &order {
            Some(order) => {
                let rows = order[start..end].iter().copied();
                export_rows(&catalog, rows, request.compressed)
            }
            None => export_rows(&catalog, start as u32..end as u32, request.compressed),
        }?;
        batch.tie_order = order.is_some();
        Ok(batch)
    });
    Ok(Box::pin(futures::stream::iter(batches)))
}

/// Every row in tie order (a few milliseconds at 1,000,000, on a core
/// the requests do not wait for).
async fn tie_order(catalog: &Arc<Catalog>) -> Result<Arc<[u32]>, ServiceError> {
    let held = catalog.clone();
    let rows =
        storefront_platform::cpu::run(move || storefront_domain::catalog::tie_rows(&held.listing))
            .await??;
    if rows.len() != catalog.products.len() {
        return Err(ServiceError::internal(
            "the listing does not hold every product",
        ));
    }
    Ok(rows.into())
}

/// Rows `rows` of the export: summaries as held (with what they are
/// compressed against) or, for a reader that did not ask for that, encoded.
fn export_rows(
    catalog: &Catalog,
    rows: impl Iterator<Item = u32>,
    compressed: bool,
) -> Result<ProductBatch, Status> {
    let mut batch = ProductBatch {
        catalog_version: catalog.version,
        ..Default::default()
    };
    if compressed {
        batch.dictionary = catalog.products.dictionary().bytes().clone();
        batch.compressed = rows
            .map(|row| {
                let (lz4, length) = catalog.shared_summary(row)?;
                Ok(CompressedProduct {
                    lz4,
                    length,
                    tail: bytes::Bytes::new(),
                })
            })
            .collect::<Result<_, ServiceError>>()?;
    } else {
        batch.products.encoded = rows
            .map(|row| {
                Ok(EncodedProduct {
                    body: catalog.summary(row)?.into(),
                    tail: Vec::new(),
                })
            })
            .collect::<Result<_, ServiceError>>()?;
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use futures::StreamExt;

    use super::*;

    async fn exported(catalog: &Arc<Catalog>, tie_order: bool) -> Vec<ProductBatch> {
        let request = ExportProductsRequest {
            batch_size: 300,
            compressed: true,
            tie_order,
            ..Default::default()
        };
        let stream = batches(catalog.clone(), request).await.unwrap();
        stream.map(Result::unwrap).collect().await
    }

    /// Each exported product's row in the catalog and popularity.
    fn rows(catalog: &Catalog, batches: &[ProductBatch]) -> Vec<(u32, u32)> {
        let dictionary = catalog.products.dictionary();
        (batches.iter().flat_map(|b| &b.compressed))
            .map(|c| {
                let bytes = dictionary.decompress(&c.lz4, c.length).unwrap();
                let p: storefront_proto::catalog::v1::Product =
                    prost::Message::decode(bytes.as_slice()).unwrap();
                let id = storefront_domain::catalog::meta_id(p.meta.as_ref());
                (catalog.product_row(id).unwrap(), p.popularity)
            })
            .collect()
    }

    #[tokio::test]
    async fn an_export_in_tie_order_has_every_product_more_popular_first() {
        let catalog = Arc::new(Catalog::new(crate::generate::generate(1_000, 7)));
        let by_rows = exported(&catalog, false).await;
        assert!(by_rows.iter().all(|b| !b.tie_order));
        let rows_order: Vec<u32> = rows(&catalog, &by_rows).into_iter().map(|r| r.0).collect();
        assert_eq!(rows_order, (0..1_000).collect::<Vec<u32>>());

        let in_order = exported(&catalog, true).await;
        assert_eq!(in_order.len(), 4);
        assert!(in_order.iter().all(|b| b.tie_order));
        let tied = rows(&catalog, &in_order);
        let mut every: Vec<u32> = tied.iter().map(|r| r.0).collect();
        every.sort_unstable();
        assert_eq!(every, (0..1_000).collect::<Vec<u32>>());
        // More popular first, then by row.
        let key = |&(row, popularity): &(u32, u32)| (std::cmp::Reverse(popularity), row);
        assert!(tied.windows(2).all(|w| key(&w[0]) < key(&w[1])), "{tied:?}");
        assert!(tied.first().unwrap().1 > tied.last().unwrap().1);
    }
}
