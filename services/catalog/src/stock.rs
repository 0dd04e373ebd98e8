//! Stock that checkouts hold and orders sell: a hold moves units from what
//! anyone may buy (`quantity`) into `held`; a sale takes them from `held`
//! out of the stock; a release gives them back; a cancelled order's return
//! adds them to `quantity`. Each operation is one catalog version, so of
//! shoppers racing for the last units, across replicas, exactly as many
//! hold as there are units, and stock never goes below zero. Operations
//! apply once by id: the ids of recent versions are remembered (`OpLog`),
//! replayed by every replica from the journal.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex};

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::catalog::v1::{
    AdjustStockReply, AdjustStockRequest, Availability, Product, StockAction, StockShortage,
};

use crate::edit::Change;
use crate::service::CatalogApi;
use crate::store::{Catalog, sku_key};

/// Operation ids per chunk, and chunks kept: a repeat is known for the
/// last 131,072 operations (over two minutes at 1,000 checkouts a second).
const OPS_PER_CHUNK: usize = 1_024;
const OP_CHUNKS: usize = 128;
/// Lines an operation may name (a cart has at most a few hundred).
const MAX_LINES: usize = 1_000;
const MAX_ID: usize = 128;

/// The ids of the stock operations applied lately. Each catalog version
/// holds one; a version shares all but the newest chunk with the one before.
#[derive(Debug, Clone, Default)]
pub struct OpLog {
    chunks: VecDeque<Arc<HashSet<Box<str>>>>,
}

impl OpLog {
    pub fn contains(&self, id: &str) -> bool {
        self.chunks.iter().any(|c| c.contains(id))
    }

    /// This log with `ids` applied; the oldest chunk goes beyond the bound.
    pub fn with(&self, ids: &[String]) -> OpLog {
        let mut next = self.clone();
        for id in ids {
            match next.chunks.back_mut() {
                Some(last) if last.len() < OPS_PER_CHUNK => {
                    Arc::make_mut(last).insert(id.as_str().into());
                }
                _ => next
                    .chunks
                    .push_back(Arc::new(HashSet::from([id.as_str().into()]))),
            }
        }
        while next.chunks.len() > OP_CHUNKS {
            next.chunks.pop_front();
        }
        next
    }
}

/// Stock as a variant shows it: `quantity` available, `held` by checkouts.
fn availability(available: u32, held: u32) -> Availability {
    Availability {
        in_stock: available > 0,
        quantity: available,
        held,
    }
}

/// Units on hand set to `on_hand` with `held` held: holds beyond what is
/// on hand are cut to it (the shop's count wins; those sales find fewer
/// units held than they hold).
pub fn counted(on_hand: u32, held: u32) -> Availability {
    let held = held.min(on_hand);
    availability(on_hand - held, held)
}

/// `product` as put from a record, with the units the version it
/// replaces had held (a record says what is on hand; what is held is the
/// checkouts' business, whatever the record says).
pub fn keep_holds(current: Option<&Product>, product: &mut Product) {
    for v in &mut product.variants {
        let held = current
            .and_then(|c| c.variants.iter().find(|o| o.sku == v.sku))
            .and_then(|o| o.availability)
            .map_or(0, |a| a.held);
        let now = v.availability.unwrap_or_default();
        v.availability = Some(counted(now.quantity.saturating_add(now.held), held));
    }
}

/// What an operation comes to against one catalog version.
enum Outcome {
    /// Applied before: nothing to do.
    Repeat,
    /// A hold some lines are short for: nothing held.
    Short(Vec<StockShortage>),
    Changes(Vec<Change>),
}

fn action(req: &AdjustStockRequest) -> StockAction {
    StockAction::try_from(req.action).unwrap_or(StockAction::Unspecified)
}

/// The products `req` changes, with their new stock.
fn outcome(catalog: &Catalog, req: &AdjustStockRequest) -> Result<Outcome, ServiceError> {
    if catalog.ops.contains(&req.operation_id) {
        return Ok(Outcome::Repeat);
    }
    let action = action(req);
    let settles = matches!(action, StockAction::Release | StockAction::Sell);
    let mut ops = vec![req.operation_id.clone()];
    if settles {
        // A hold that never applied settles nothing, and may not apply
        // later (a slow hold arriving after its release).
        ops.push(req.hold_id.clone());
        if !catalog.ops.contains(&req.hold_id) {
            return Ok(Outcome::Changes(vec![Change::Operations(ops)]));
        }
    }
    let mut changed: BTreeMap<u32, Product> = BTreeMap::new();
    let mut short = Vec::new();
    for line in &req.lines {
        let Some(&row) = catalog.skus.get(&sku_key(&line.sku)) else {
            if action == StockAction::Hold {
                short.push(shortage(&line.sku, line.quantity, 0));
            }
            continue;
        };
        let product = match changed.entry(row) {
            std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::btree_map::Entry::Vacant(e) => e.insert(catalog.product(row)?),
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
    if !short.is_empty() {
        return Ok(Outcome::Short(short));
    }
    let mut changes: Vec<Change> = changed
        .into_values()
        .map(|product| Change::Stocked(Box::new(product)))
        .collect();
    changes.push(Change::Operations(ops));
    Ok(Outcome::Changes(changes))
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
        "VALIDATION_ERROR",
        format!("{field} {message}"),
    )
    .with_violation(FieldViolation::new(field, "INVALID_VALUE", message))
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

/// Applies `req` once as the next catalog version (or answers a repeat,
/// or a hold's shortages, with no version).
pub async fn adjust(
    api: &CatalogApi,
    req: AdjustStockRequest,
) -> Result<AdjustStockReply, ServiceError> {
    validate(&req)?;
    // What the last run of the change came to when it changed nothing
    // (the change may run again against a newer version).
    let unchanged: Arc<Mutex<Option<AdjustStockReply>>> = Arc::default();
    let answer = unchanged.clone();
    let next = api
        .change(move |current| {
            let mut slot = answer.lock().unwrap_or_else(|p| p.into_inner());
            *slot = None;
            match outcome(current, &req)? {
                Outcome::Changes(changes) => Ok(changes),
                Outcome::Repeat => {
                    *slot = Some(AdjustStockReply::default());
                    Ok(Vec::new())
                }
                Outcome::Short(shortages) => {
                    *slot = Some(AdjustStockReply {
                        shortages,
                        ..Default::default()
                    });
                    Ok(Vec::new())
                }
            }
        })
        .await?;
    let unchanged = unchanged.lock().unwrap_or_else(|p| p.into_inner()).take();
    Ok(match unchanged {
        Some(reply) => AdjustStockReply {
            catalog_version: next.version,
            ..reply
        },
        None => AdjustStockReply {
            applied: true,
            shortages: Vec::new(),
            catalog_version: next.version,
        },
    })
}

#[cfg(test)]
#[path = "stock_tests.rs"]
mod tests;
