//! Stock that checkouts hold and orders sell: a hold moves units from what
//! anyone may buy (`quantity`) into `held`; a sale takes them from `held`
//! out of the stock; a release gives them back; a cancelled order's return
//! adds them to `quantity`. Each operation is one catalog version, so of
//! shoppers racing for the last units, across replicas, exactly as many
//! hold as there are units, and stock never goes below zero. Operations
//! apply once by id: the ids of recent versions are remembered (`OpLog`),
//! replayed by every replica from the journal.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};
use storefront_proto::error::codes;

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::catalog::v1::{
    AdjustStockReply, AdjustStockRequest, Product, StockAction, StockShortage,
};

use tokio::sync::{mpsc, oneshot};

use crate::edit::Change;
use crate::live::{Live, Pending, waiting};
use crate::store::{Catalog, sku_key};

/// Lines an operation may name (a cart has at most a few hundred).
const MAX_LINES: usize = 1_000;
const MAX_ID: usize = 128;

use crate::units::availability;

fn action(req: &AdjustStockRequest) -> StockAction {
    StockAction::try_from(req.action).unwrap_or(StockAction::Unspecified)
}

/// Operations applied one after the other against one catalog version:
/// the products they changed and the ids they applied, which become the
/// next version together (one version for a whole batch).
#[derive(Default)]
pub(crate) struct Overlay {
    products: BTreeMap<u32, Product>,
    ops: HashSet<String>,
}

impl Overlay {
    fn applied(&self, catalog: &Catalog, id: &str) -> bool {
        self.ops.contains(id) || catalog.ops.contains(id)
    }

    /// `req` applied after the operations before it: its answer (a
    /// repeat, or a hold's shortages, change nothing).
    pub(crate) fn apply(
        &mut self,
        catalog: &Catalog,
        req: &AdjustStockRequest,
    ) -> Result<AdjustStockReply, ServiceError> {
        if self.applied(catalog, &req.operation_id) {
            return Ok(AdjustStockReply::default());
        }
        let action = action(req);
        let settles = matches!(action, StockAction::Release | StockAction::Sell);
        // A hold that never applied settles nothing, and may not apply
        // later (a slow hold arriving after its release).
        let settled = settles && self.applied(catalog, &req.hold_id);
        if !settles || settled {
            let mut scratch: BTreeMap<u32, Product> = BTreeMap::new();
            let short = self.lines(catalog, req, action, &mut scratch)?;
            if !short.is_empty() {
                return Ok(AdjustStockReply {
                    shortages: short,
                    ..Default::default()
                });
            }
            self.products.extend(scratch);
        }
        self.ops.insert(req.operation_id.clone());
        if settles {
            self.ops.insert(req.hold_id.clone());
        }
        Ok(AdjustStockReply {
            applied: true,
            ..Default::default()
        })
    }

    /// Each line's new stock, into `scratch`; the lines a hold is short of.
    fn lines(
        &self,
        catalog: &Catalog,
        req: &AdjustStockRequest,
        action: StockAction,
        scratch: &mut BTreeMap<u32, Product>,
    ) -> Result<Vec<StockShortage>, ServiceError> {
        let mut short = Vec::new();
        for line in &req.lines {
            let Some(&row) = catalog.skus.get(&sku_key(&line.sku)) else {
                if action == StockAction::Hold {
                    short.push(shortage(&line.sku, line.quantity, 0));
                }
                continue;
            };
            let product = match scratch.entry(row) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => match self.products.get(&row) {
                    Some(p) => e.insert(p.clone()),
                    None => e.insert(catalog.product(row)?),
                },
            };
            let Some(variant) = product.variants.iter_mut().find(|v| v.sku == line.sku) else {
                continue;
            };
            let now = variant.availability.unwrap_or_default();
            let (available, held, q) = (now.quantity, now.held, line.quantity);
            let next = match action {
                StockAction::Hold if available < q => {
                    short.push(shortage(&line.sku, q, available));
                    continue;
                }
                StockAction::Hold => availability(available - q, held.saturating_add(q)),
                StockAction::Release => {
                    availability(available.saturating_add(q.min(held)), held - q.min(held))
                }
                StockAction::Sell => availability(available, held - q.min(held)),
                StockAction::Return => availability(available.saturating_add(q), held),
                StockAction::Unspecified => return Err(invalid("action", "is required")),
            };
            variant.availability = Some(next);
        }
        Ok(short)
    }

    /// The next version's changes (none: nothing applied).
    pub(crate) fn into_changes(self) -> Vec<Change> {
        if self.ops.is_empty() {
            return Vec::new();
        }
        let mut changes: Vec<Change> = self
            .products
            .into_values()
            .map(|product| Change::Stocked(Box::new(product)))
            .collect();
        changes.push(Change::Operations(self.ops.into_iter().collect()));
        changes
    }
}

fn shortage(sku: &str, requested: u32, available: u32) -> StockShortage {
    StockShortage {
        sku: sku.to_string(),
        requested,
        available,
    }
}

fn invalid(field: &str, message: &str) -> ServiceError {
    ServiceError::new(
        ErrorKind::Validation,
        codes::VALIDATION_ERROR,
        format!("{field} {message}"),
    )
    .with_violation(FieldViolation::new(field, codes::INVALID_VALUE, message))
}

fn validate(req: &AdjustStockRequest) -> Result<(), ServiceError> {
    let id_ok = |id: &str| !id.is_empty() && id.len() <= MAX_ID;
    if !id_ok(&req.operation_id) {
        return Err(invalid("operationId", "must be 1 to 128 characters"));
    }
    let action = action(req);
    if action == StockAction::Unspecified {
        return Err(invalid("action", "is required"));
    }
    if matches!(action, StockAction::Release | StockAction::Sell) && !id_ok(&req.hold_id) {
        return Err(invalid("holdId", "must name the hold settled"));
    }
    if req.lines.is_empty() || req.lines.len() > MAX_LINES {
        return Err(invalid("lines", "must be 1 to 1,000 lines"));
    }
    if req
        .lines
        .iter()
        .any(|l| l.quantity == 0 || l.sku.is_empty())
    {
        return Err(invalid("lines", "each needs a SKU and a quantity above 0"));
    }
    Ok(())
}

/// Operations one version applies at most.
const BATCH: usize = 512;

/// Applies `req` once (or answers a repeat, or a hold's shortages), with
/// the operations that arrive while a version is being written.
pub async fn adjust(api: &Live, req: AdjustStockRequest) -> Result<AdjustStockReply, ServiceError> {
    validate(&req)?;
    let queue = api.stock.queue.get_or_init(|| {
        let (send, receive) = mpsc::unbounded_channel();
        tokio::spawn(write_batches(api.clone(), receive));
        send
    });
    let (answer, answered) = oneshot::channel();
    queue
        .send((req, answer))
        .map_err(|_| ServiceError::internal("the stock writer stopped"))?;
    answered
        .await
        .map_err(|_| ServiceError::internal("the stock writer stopped"))?
}

/// Operations one `AdjustStockBatch` call may carry.
pub const MAX_BATCH_OPERATIONS: usize = 256;

/// Each of `ops` as [`adjust`] applies it alone, all queued at once (so
/// they may become one version): each one's answer, in order.
pub async fn adjust_all(
    api: &Live,
    ops: Vec<AdjustStockRequest>,
) -> Result<Vec<Result<AdjustStockReply, ServiceError>>, ServiceError> {
    if ops.len() > MAX_BATCH_OPERATIONS {
        return Err(invalid("operations", "must be at most 256"));
    }
    Ok(futures::future::join_all(ops.into_iter().map(|op| adjust(api, op))).await)
}

async fn write_batches(api: Live, mut receive: mpsc::UnboundedReceiver<Pending>) {
    while let Some(first) = receive.recv().await {
        let batch = waiting(first, &mut receive, BATCH);
        let (requests, answers): (Vec<_>, Vec<_>) = batch.into_iter().unzip();
        match write(&api, requests).await {
            Ok(replies) => {
                for (reply, answer) in replies.into_iter().zip(answers) {
                    let _ = answer.send(Ok(reply));
                }
            }
            Err(e) => {
                for answer in answers {
                    let _ = answer.send(Err(e.clone()));
                }
            }
        }
    }
}

/// `requests` in order as one version: each one's answer.
async fn write(
    api: &Live,
    requests: Vec<AdjustStockRequest>,
) -> Result<Vec<AdjustStockReply>, ServiceError> {
    let requests = Arc::new(requests);
    // The answers of the last run of the change (it may run again against
    // a newer version, with a shared store).
    let replies: Arc<Mutex<Vec<AdjustStockReply>>> = Arc::default();
    let (reqs, out) = (requests.clone(), replies.clone());
    let next = api
        .change(move |current| {
            let mut overlay = Overlay::default();
            let mut answers = Vec::with_capacity(reqs.len());
            for req in reqs.iter() {
                answers.push(overlay.apply(current, req)?);
            }
            *out.lock().unwrap_or_else(|p| p.into_inner()) = answers;
            Ok(overlay.into_changes())
        })
        .await?;
    let mut replies = std::mem::take(&mut *replies.lock().unwrap_or_else(|p| p.into_inner()));
    for reply in &mut replies {
        reply.catalog_version = next.version;
    }
    Ok(replies)
}

#[cfg(test)]
#[path = "stock_tests.rs"]
mod tests;
