//! Stock levels a shop sets (`SetStock`) that arrive while a version is
//! being written go into the next version together: one version a batch,
//! not one a request. A version copies each listing column it changes
//! (the stock column is 8 MB at 1,000,000 products), so one version a
//! request could not keep up with a shop's 200 stock changes a second
//! under load there, and the requests waiting for their turn filled the
//! service's concurrency limit (DOWNSTREAM_BUSY).

use std::sync::Arc;

use storefront_platform::error::{ErrorKind, ServiceError};
use tokio::sync::{mpsc, oneshot};

use crate::edit::{Change, Stock};
use crate::live::{Live, PendingLevels, waiting};
use crate::store::Catalog;

/// Requests one version applies at most.
const BATCH: usize = 256;

/// Applies `levels` (all or none) in the next version: the version.
/// Requests in one version apply in the order they arrived, so of two that
/// set one SKU the later holds; each is answered with that version.
pub async fn set(api: &Live, levels: Vec<Stock>) -> Result<Arc<Catalog>, ServiceError> {
    let queue = api.stock.levels.get_or_init(|| {
        let (send, receive) = mpsc::unbounded_channel();
        tokio::spawn(write_batches(api.clone(), receive));
        send
    });
    let (answer, answered) = oneshot::channel();
    let stopped = || ServiceError::internal("the stock level writer stopped");
    queue.send((levels, answer)).map_err(|_| stopped())?;
    answered.await.map_err(|_| stopped())?
}

async fn write_batches(api: Live, mut receive: mpsc::UnboundedReceiver<PendingLevels>) {
    while let Some(first) = receive.recv().await {
        let batch = waiting(first, &mut receive, BATCH);
        if batch.len() > 1 {
            tracing::debug!(requests = batch.len(), "stock levels in one version");
        }
        let (levels, answers): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
        let levels = Arc::new(levels);
        let all = levels.clone();
        let written = api
            .change(move |_| Ok(all.iter().cloned().map(Change::Stock).collect()))
            .await;
        match written {
            Ok(next) => answers
                .into_iter()
                .for_each(|a| drop(a.send(Ok(next.clone())))),
            // One request refused (an unknown SKU, a level below zero)
            // refuses the batch: each is written alone, for its own answer.
            // Any other failure (the shared store unreachable, the catalog
            // changing too fast) is every request's: not tried again one by
            // one, which would make the last wait for all the others.
            Err(e) if answers.len() > 1 && e.kind == ErrorKind::Validation => {
                let levels = Arc::unwrap_or_clone(levels);
                for (levels, answer) in levels.into_iter().zip(answers) {
                    let written = api.change(move |_| Ok(vec![Change::Stock(levels.clone())]));
                    let _ = answer.send(written.await);
                }
            }
            Err(e) => answers
                .into_iter()
                .for_each(|a| drop(a.send(Err(e.clone())))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::Level;

    /// A live catalog and the first `n` of its SKUs.
    fn live(n: usize) -> (Live, Vec<String>) {
        let catalog = Catalog::new(crate::generate::generate(60, 3));
        let skus = (0..catalog.products.len() as u32)
            .filter_map(|row| catalog.product(row).ok())
            .flat_map(|p| p.variants.into_iter().map(|v| v.sku))
            .take(n)
            .collect();
        (Live::new(catalog, None), skus)
    }

    fn quantity(sku: &str, q: u32) -> Vec<Stock> {
        vec![Stock {
            sku: sku.into(),
            level: Level::Quantity(q),
        }]
    }

    fn shown(catalog: &Catalog, sku: &str) -> u32 {
        let row = catalog.skus[&crate::store::sku_key(sku)];
        let product = catalog.product(row).unwrap();
        let variant = product.variants.into_iter().find(|v| v.sku == sku);
        variant.unwrap().availability.unwrap().quantity
    }

    /// Twenty requests sent before the writer runs: one version applies
    /// them all, each answered with it.
    #[tokio::test]
    async fn levels_set_together_are_one_version() {
        let (api, skus) = live(20);
        let before = api.read().version;
        let sets = skus
            .iter()
            .enumerate()
            .map(|(i, sku)| set(&api, quantity(sku, 100 + i as u32)));
        let versions: Vec<u64> = futures::future::join_all(sets)
            .await
            .into_iter()
            .map(|next| next.unwrap().version)
            .collect();
        assert_eq!(versions, vec![before + 1; 20]);
        let now = api.read();
        assert_eq!(now.version, before + 1);
        for (i, sku) in skus.iter().enumerate() {
            assert_eq!(shown(&now, sku), 100 + i as u32, "{sku}");
        }
    }

    /// A request naming an unknown SKU among good ones is refused alone,
    /// with its own field; every other applies.
    #[tokio::test]
    async fn a_refused_request_refuses_only_itself() {
        let (api, skus) = live(6);
        let mut requests: Vec<Vec<Stock>> = skus.iter().map(|sku| quantity(sku, 7)).collect();
        let mut bad = quantity(&skus[0], 1);
        bad.push(Stock {
            sku: "no-such-sku".into(),
            level: Level::Quantity(1),
        });
        requests.insert(3, bad);
        let answers = futures::future::join_all(requests.into_iter().map(|l| set(&api, l))).await;
        for (i, answer) in answers.iter().enumerate() {
            match answer {
                Err(e) => {
                    assert_eq!(i, 3);
                    let fields: Vec<&str> = e.violations.iter().map(|v| v.field.as_str()).collect();
                    assert_eq!(fields, ["changes[1].sku"]);
                }
                Ok(_) => assert_ne!(i, 3, "the unknown SKU is refused"),
            }
        }
        let now = api.read();
        // The refused request set nothing, not even its known SKU.
        for sku in &skus {
            assert_eq!(shown(&now, sku), 7, "{sku}");
        }
    }
}
