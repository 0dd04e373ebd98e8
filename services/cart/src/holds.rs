//! The stock a checkout session holds in the catalog from open until it
//! is confirmed (sold), expires, is superseded or fails (released). The
//! session's record says where its hold stands (`HoldState`); each move is
//! a compare-and-set made before the catalog is told, and each catalog
//! operation applies once by its id, so a retry, a second replica or the
//! sweep repeating one changes nothing. Sessions whose hold may still need
//! releasing are in a sorted set by expiry (`HOLDS`), left only once the
//! catalog has released or sold their units: every replica sweeps it.

use std::time::Duration;

use storefront_platform::client::call::{Caller, Current};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::{Store, Updated};
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use storefront_proto::cart::v1::{Cart, CartState};
use storefront_proto::catalog::v1::{AdjustStockRequest, StockAction, StockLine, StockShortage};
use tokio_util::sync::CancellationToken;

use crate::carts::Carts;
use crate::clients::Catalog;
use crate::hold_limits::Ledgers;

/// Session ids by the time (ms) their hold is due for release.
const HOLDS: &str = "checkout-holds";
const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// Sessions a sweep settles at most (the rest wait for the next).
const SWEEP_SESSIONS: usize = 200;
const MAX_ATTEMPTS: usize = 64;
/// The code of a move refused because the hold stood elsewhere.
const MOVED: &str = "HOLD_MOVED";

pub fn session_key(id: &str) -> String {
    format!("checkout:{id}")
}

/// Changes session `id`'s record by compare-and-set (its TTL kept).
pub async fn change_session<R>(
    store: &Store,
    id: &str,
    change: impl FnMut(&mut CheckoutRecord) -> Result<R, ServiceError>,
) -> Result<Updated<R, CheckoutRecord>, ServiceError> {
    store
        .update_message(&session_key(id), MAX_ATTEMPTS, None, change)
        .await
}

fn hold_op(session_id: &str) -> String {
    format!("hold:{session_id}")
}

/// What a cart's lines hold: quantities by SKU, in SKU order.
pub fn lines_of(cart: &Cart) -> Vec<StockLine> {
    let mut by_sku: std::collections::BTreeMap<&str, u32> = Default::default();
    for line in &cart.line_items {
        let q = by_sku.entry(line.sku.as_str()).or_default();
        *q = q.saturating_add(line.quantity);
    }
    by_sku
        .into_iter()
        .map(|(sku, quantity)| StockLine {
            sku: sku.to_string(),
            quantity,
        })
        .collect()
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
    pub catalog: Caller,
    /// What each shopper and network holds, bounded.
    pub ledgers: Ledgers,
}

impl Holds {
    /// Lists the session for release at `due` (ms), before anything is held.
    pub async fn due_at(
        &self,
        session_id: &str,
        due: &storefront_proto::Timestamp,
    ) -> Result<(), ServiceError> {
        Ok(self
            .store
            .zset_raise(HOLDS, session_id, millis(due))
            .await?)
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
        let reply = Catalog(&self.catalog)
            .adjust_stock(&Current, message)
            .await
            .map_err(|e| {
                ServiceError::new(ErrorKind::Unavailable, "CATALOG_UNAVAILABLE", e.to_string())
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

    /// Moves the session's hold to `to` if it stands in `from`: the record
    /// after the move, None when it stood elsewhere (or is gone).
    pub async fn transition(
        &self,
        session_id: &str,
        from: &[HoldState],
        to: HoldState,
    ) -> Result<Option<CheckoutRecord>, ServiceError> {
        let updated = change_session(&self.store, session_id, |record| {
            if !from.contains(&record.hold()) {
                return Err(ServiceError::new(ErrorKind::Conflict, MOVED, "moved"));
            }
            record.set_hold(to);
            Ok(())
        })
        .await;
        match updated {
            Ok(Updated::Done { value, .. }) => Ok(Some(value)),
            Ok(Updated::Missing) => Ok(None),
            Ok(Updated::Contended) => Err(ServiceError::new(
                ErrorKind::Conflict,
                "CONCURRENT_MODIFICATION",
                "the checkout is busy; retry",
            )),
            Err(e) if e.code == MOVED => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Releases the session's hold unless it is sold or being sold; the
    /// session leaves the sweep once the catalog has the units back.
    pub async fn release(&self, session_id: &str) -> Result<(), ServiceError> {
        let from = [HoldState::Pending, HoldState::Held, HoldState::Released];
        let Some(record) = self
            .transition(session_id, &from, HoldState::Released)
            .await?
        else {
            return Ok(());
        };
        self.settle(session_id, record, StockAction::Release).await
    }

    /// Tells the catalog the hold is released or sold, then forgets it.
    async fn settle(
        &self,
        session_id: &str,
        record: CheckoutRecord,
        action: StockAction,
    ) -> Result<(), ServiceError> {
        let lines = record.held.clone();
        if !lines.is_empty() {
            let name = if action == StockAction::Sell {
                "sell"
            } else {
                "release"
            };
            let op = format!("{name}:{session_id}");
            self.adjust(op, action, lines, hold_op(session_id)).await?;
        }
        self.ledgers.forget(&record).await;
        self.store.zset_remove(HOLDS, session_id).await?;
        Ok(())
    }

    /// Sells the session's hold (its order exists or is being made).
    pub async fn sell(&self, session_id: &str) -> Result<(), ServiceError> {
        let from = [HoldState::Selling, HoldState::Sold];
        let Some(record) = self.transition(session_id, &from, HoldState::Sold).await? else {
            return Ok(());
        };
        self.settle(session_id, record, StockAction::Sell).await
    }

    /// Settles one session due: released, or sold when a confirm that
    /// claimed its cart stopped half-way.
    async fn settle_due(&self, carts: &Carts, session_id: &str) -> Result<(), ServiceError> {
        let record = self
            .store
            .get_message::<CheckoutRecord>(&session_key(session_id))
            .await?;
        let Some(record) = record.map(|r| r.value) else {
            self.store.zset_remove(HOLDS, session_id).await?;
            return Ok(());
        };
        match record.hold() {
            HoldState::Sold | HoldState::Unspecified => {
                self.store.zset_remove(HOLDS, session_id).await?;
                Ok(())
            }
            HoldState::Selling => {
                let cart_id = record.session.as_ref().map_or("", |s| s.cart_id.as_str());
                let cart = carts.get(&record.customer_id, cart_id).await.ok();
                let ordered = cart.is_some_and(|c| {
                    c.state == CartState::Ordered as i32 && c.order_id == record.planned_order_id
                });
                if ordered {
                    return self.sell(session_id).await;
                }
                let from = [HoldState::Selling];
                if self
                    .transition(session_id, &from, HoldState::Released)
                    .await?
                    .is_some()
                {
                    return self.release(session_id).await;
                }
                Ok(())
            }
            _ => {
                let open = crate::checkout::view(record.clone()).status
                    == storefront_proto::cart::v1::CheckoutStatus::Open as i32;
                let expires = record.session.as_ref().and_then(|s| s.expires_at);
                match expires {
                    // Extended since it was listed: due later.
                    Some(at) if open => self.due_at(session_id, &at).await,
                    _ => self.release(session_id).await,
                }
            }
        }
    }

    /// Releases what expired sessions hold, every `SWEEP_EVERY`, until
    /// shutdown. A session being confirmed is given a minute past its
    /// expiry before the sweep settles it.
    pub async fn sweep(self, carts: std::sync::Arc<Carts>, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(SWEEP_EVERY) => {}
            }
            let now = millis(&crate::carts::now());
            let due = match self
                .store
                .zset_page(HOLDS, (i64::MIN, ""), SWEEP_SESSIONS)
                .await
            {
                Ok(due) => due,
                Err(e) => {
                    tracing::warn!(error = %e, "checkout holds sweep skipped");
                    continue;
                }
            };
            for (session_id, at) in due.into_iter().take_while(|(_, at)| *at <= now) {
                let selling_grace = now - at < 60_000;
                if selling_grace && self.selling(&session_id).await {
                    continue;
                }
                if let Err(e) = self.settle_due(&carts, &session_id).await {
                    tracing::warn!(error = %e, session_id, "checkout hold left for the next sweep");
                }
            }
        }
    }

    async fn selling(&self, session_id: &str) -> bool {
        let record = self
            .store
            .get_message::<CheckoutRecord>(&session_key(session_id))
            .await;
        matches!(record, Ok(Some(r)) if r.value.hold() == HoldState::Selling)
    }
}
