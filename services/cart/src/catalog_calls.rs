//! The catalog as carts and checkouts running at once call it: their
//! price reads (`GetProducts`, a session opened and each confirm) and
//! stock operations (`AdjustStock`: a hold, its sale or release) gathered
//! (`gather.rs`), so that under load one call carries many. Reads go
//! together by currency and projection, at most [`MAX_BATCH_PRODUCTS`] ids
//! a call; stock operations go in one `AdjustStockBatch`, each with its
//! own outcome as if sent alone (a catalog that does not serve it, or
//! does not let this caller, takes them one by one).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use storefront_platform::client::call::CallError;
use storefront_proto::catalog::v1::AdjustStockBatchReply;
use storefront_proto::catalog::v1::{
    AdjustStockBatchRequest, AdjustStockReply, AdjustStockRequest, GetProductRequest,
    GetProductsRequest, GetProductsResponse, ListCategoriesRequest, ListCategoriesResponse,
    Product,
};
use storefront_proto::names::MAX_BATCH_PRODUCTS;

use crate::clients::{Answer, CatalogPeer};
use crate::gather::{Answers, Batched, Batching, Gather, outcome};
use crate::offer::product_id;

/// Operations one `AdjustStockBatch` carries (the catalog takes 256).
const STOCK_BATCH: usize = 64;

/// Price reads: (currency, prices only) -> each reader's ids.
pub(crate) struct Reads(Arc<dyn CatalogPeer>);

impl Batched for Reads {
    type Kind = (String, bool);
    type Item = Vec<String>;
    type Out = GetProductsResponse;
    const BOUND: usize = MAX_BATCH_PRODUCTS;

    fn weight(ids: &Vec<String>) -> usize {
        ids.len()
    }

    fn send<'a>(&'a self, kind: &'a Self::Kind, items: Vec<Vec<String>>) -> Answers<'a, Self::Out> {
        let read = move |product_ids| GetProductsRequest {
            product_ids,
            currency_code: kind.0.clone(),
            prices_only: kind.1,
        };
        Box::pin(async move {
            if let [_] = items.as_slice() {
                // Alone: sent and answered as it came.
                let ids = items.into_iter().next().unwrap_or_default();
                return vec![self.0.get_products(read(ids)).await];
            }
            let mut ids: Vec<String> = Vec::new();
            let mut seen = HashSet::new();
            for id in items.iter().flatten() {
                if seen.insert(id.as_str()) {
                    ids.push(id.clone());
                }
            }
            let reply = self.0.get_products(read(ids)).await;
            split(&items, reply)
        })
    }
}

/// Each reader's own products of `reply` (the catalog leaves out ids it
/// does not have), or the call's error for all.
fn split(
    items: &[Vec<String>],
    reply: Result<GetProductsResponse, CallError>,
) -> Vec<Result<GetProductsResponse, CallError>> {
    let products = match reply {
        Ok(reply) => reply.products,
        Err(e) => return items.iter().map(|_| Err(e.clone())).collect(),
    };
    let by_id: HashMap<&str, &Product> = products.iter().map(|p| (product_id(p), p)).collect();
    (items.iter())
        .map(|ids| {
            let own = (ids.iter())
                .filter_map(|id| by_id.get(id.as_str()).map(|&p| p.clone()))
                .collect();
            Ok(GetProductsResponse { products: own })
        })
        .collect()
}

/// Stock operations, all of one kind.
pub(crate) struct Stock {
    peer: Arc<dyn CatalogPeer>,
    batching: Batching,
}

impl Batched for Stock {
    type Kind = ();
    type Item = AdjustStockRequest;
    type Out = AdjustStockReply;
    const BOUND: usize = STOCK_BATCH;

    fn weight(_: &AdjustStockRequest) -> usize {
        1
    }

    fn send<'a>(&'a self, _: &'a (), ops: Vec<AdjustStockRequest>) -> Answers<'a, Self::Out> {
        let peer = &self.peer;
        Box::pin(self.batching.send(
            ops,
            |operations| peer.adjust_stock_batch(AdjustStockBatchRequest { operations }),
            |reply: AdjustStockBatchReply| {
                let outcomes = reply.outcomes.into_iter();
                outcomes.map(|o| outcome(o.reply, o.error)).collect()
            },
            |op| peer.adjust_stock(op),
        ))
    }
}

/// `inner` with its price reads and stock operations gathered; every
/// other call as it is.
pub struct Gathered {
    inner: Arc<dyn CatalogPeer>,
    reads: Gather<Reads>,
    stock: Gather<Stock>,
}

impl Gathered {
    pub fn new(inner: Arc<dyn CatalogPeer>) -> Self {
        Self::stalled_after(inner, crate::gather::STALL)
    }

    /// As `new`, a second call of a kind opened after `stall`.
    pub fn stalled_after(inner: Arc<dyn CatalogPeer>, stall: std::time::Duration) -> Self {
        let stock = Stock {
            peer: inner.clone(),
            batching: Batching::new("AdjustStockBatch"),
        };
        Self {
            reads: Gather::stalled_after(Reads(inner.clone()), stall),
            stock: Gather::stalled_after(stock, stall),
            inner,
        }
    }
}

impl CatalogPeer for Gathered {
    fn get_product(&self, message: GetProductRequest) -> Answer<'_, Product> {
        self.inner.get_product(message)
    }

    fn get_products(&self, message: GetProductsRequest) -> Answer<'_, GetProductsResponse> {
        // The caller chunks to the catalog's bound; a read over it (or
        // of nothing) goes alone, as it would have.
        let ids = message.product_ids.len();
        if ids == 0 || ids > MAX_BATCH_PRODUCTS {
            return self.inner.get_products(message);
        }
        let kind = (message.currency_code, message.prices_only);
        Box::pin(self.reads.call(kind, message.product_ids))
    }

    fn adjust_stock(&self, message: AdjustStockRequest) -> Answer<'_, AdjustStockReply> {
        Box::pin(self.stock.call((), message))
    }

    fn adjust_stock_batch(
        &self,
        message: AdjustStockBatchRequest,
    ) -> Answer<'_, AdjustStockBatchReply> {
        self.inner.adjust_stock_batch(message)
    }

    fn list_categories(
        &self,
        message: ListCategoriesRequest,
    ) -> Answer<'_, ListCategoriesResponse> {
        self.inner.list_categories(message)
    }
}

#[cfg(test)]
#[path = "catalog_calls_tests.rs"]
mod tests;
