//! The stock a checkout session holds in the catalog from open until it
//! is confirmed (sold), expires, is superseded or fails (released): the
//! catalog's side of it. Where a hold stands is the checkout's state
//! (`checkout::machine`); each catalog operation applies once by its id,
//! so a retry, a second replica or the sweep repeating one changes
//! nothing. Sessions whose hold may still need settling are in a sorted
//! set by expiry (`HOLDS`), left only once the catalog has released or
//! sold their units: every replica sweeps it.

use std::sync::Arc;
use storefront_proto::error::codes;

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::Store;
use storefront_proto::cart::storage::v1::CheckoutRecord;
use storefront_proto::cart::v1::Cart;
use storefront_proto::catalog::v1::{AdjustStockRequest, StockAction, StockLine, StockShortage};

use crate::clients::CatalogPeer;
use crate::hold_ledgers::Ledgers;

/// Session ids by the time (ms) their hold is due for release.
const HOLDS: &str = "checkout-holds";

pub fn session_key(id: &str) -> String {
    format!("checkout:{id}")
}

fn hold_op(session_id: &str) -> String {
    format!("hold:{session_id}")
}

/// What a cart's lines hold: quantities by SKU, in SKU order.
pub fn lines_of(cart: &Cart) -> Vec<StockLine> {
    storefront_domain::stock::by_sku(&cart.line_items)
}

/// 409 `INSUFFICIENT_STOCK`: each line short, with what is left.
pub fn insufficient(cart: &Cart, shortages: &[StockShortage]) -> ServiceError {
    let mut named = Vec::new();
    let mut violations = Vec::new();
    for s in shortages {
        for line in cart.line_items.iter().filter(|l| l.sku == s.sku) {
            let message = format!("{} left of the {} asked", s.available, s.requested);
            named.push(format!("line {} ({message})", line.id));
            violations.push(FieldViolation::new(
                format!("lineItems.{}", line.id),
                "INSUFFICIENT_STOCK",
                message,
            ));
        }
    }
    let message = format!("not enough stock for {}", named.join(", "));
    let mut e = ServiceError::new(ErrorKind::Conflict, "INSUFFICIENT_STOCK", message);
    e.violations = violations;
    e
}

pub fn millis(t: &storefront_proto::Timestamp) -> i64 {
    t.seconds * 1000 + i64::from(t.nanos / 1_000_000)
}

pub fn at_millis(ms: i64) -> storefront_proto::Timestamp {
    storefront_proto::Timestamp {
        seconds: ms.div_euclid(1000),
        nanos: (ms.rem_euclid(1000) * 1_000_000) as i32,
    }
}

#[derive(Clone)]
pub struct Holds {
    pub store: Store,
    pub catalog: Arc<dyn CatalogPeer>,
    /// What each shopper and network holds, bounded.
    pub ledgers: Ledgers,
}

impl Holds {
    /// Lists the session for the sweep at `due_ms`, before anything is held.
    pub async fn due_at(&self, session_id: &str, due_ms: i64) -> Result<(), ServiceError> {
        Ok(self.store.zset_raise(HOLDS, session_id, due_ms).await?)
    }

    /// Takes the session off the sweep's list.
    pub async fn unlist(&self, session_id: &str) -> Result<(), ServiceError> {
        self.store.zset_remove(HOLDS, session_id).await?;
        Ok(())
    }

    /// The sessions listed, earliest due first, at most `limit`.
    pub async fn listed(&self, limit: usize) -> Result<Vec<(String, i64)>, ServiceError> {
        Ok(self.store.zset_page(HOLDS, (i64::MIN, ""), limit).await?)
    }

    async fn adjust(
        &self,
        operation_id: String,
        action: StockAction,
        lines: Vec<StockLine>,
        hold_id: String,
    ) -> Result<Vec<StockShortage>, ServiceError> {
        let message = AdjustStockRequest {
            operation_id,
            action: action as i32,
            lines,
            hold_id,
        };
        let reply =
            self.catalog.adjust_stock(message).await.map_err(|e| {
                e.unavailable(codes::CATALOG_UNAVAILABLE, "the catalog is unreachable")
            })?;
        Ok(reply.shortages)
    }

    /// Holds `lines` for the session: what is short when refused.
    pub async fn hold(
        &self,
        session_id: &str,
        lines: Vec<StockLine>,
    ) -> Result<Vec<StockShortage>, ServiceError> {
        self.adjust(hold_op(session_id), StockAction::Hold, lines, String::new())
            .await
    }

    /// Tells the catalog the session's hold is sold or released, then
    /// forgets it: out of its holders' ledgers, off the sweep's list.
    pub async fn settle(
        &self,
        session_id: &str,
        record: &CheckoutRecord,
        action: StockAction,
    ) -> Result<(), ServiceError> {
        if !record.held.is_empty() {
            let name = if action == StockAction::Sell {
                "sell"
            } else {
                "release"
            };
            let op = format!("{name}:{session_id}");
            let lines = record.held.clone();
            self.adjust(op, action, lines, hold_op(session_id)).await?;
        }
        // Apart, so at once: a ledger's failure is only logged (its entry
        // expires), and the sweep's entry goes either way.
        let (_, unlisted) = tokio::join!(self.ledgers.forget(record), self.unlist(session_id));
        unlisted
    }
}
