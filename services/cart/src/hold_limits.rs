//! What one holder may hold in open checkouts: a shopper (a guest less
//! than a signed-in customer) and a client network, per variant and in
//! all (`HOLD_LIMIT_*`), and the arithmetic of a holder's ledger (one
//! entry per session; kept in the shared store by `hold_ledgers`). Past
//! a limit a checkout holds nothing until it is paid, and then at most
//! `HOLD_LIMIT_PAID_MULTIPLE` times the limit; past that it is refused
//! whole (409 `HOLD_LIMIT_REACHED`, naming the limit), never cut.
//!
//! A ledger entry also carries its hold's latest end (`until_ms`): a newer
//! session of the same cart inherits it, so however often a cart is
//! checked out again, its hold never runs past its first expiry plus the
//! one extension. Entries leave when the hold is released or sold; one
//! left behind (a process stopped half-way) is dropped past its end.

use std::collections::BTreeMap;

use storefront_proto::cart::storage::v1::{HoldEntry, HoldLedger};
#[cfg(test)]
use storefront_proto::catalog::v1::StockLine;

/// How long past its end an entry is still counted: the sweep releases a
/// hold within a second of its expiry, or a minute after one being sold.
pub(crate) const GRACE_MS: i64 = 120_000;

/// Units one holder may hold: of one variant, and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldLimit {
    pub per_variant: u32,
    pub total: u32,
}

impl HoldLimit {
    /// The bound `multiple` times over (a paid checkout's).
    pub fn times(self, multiple: u32) -> Self {
        Self {
            per_variant: self.per_variant.saturating_mul(multiple),
            total: self.total.saturating_mul(multiple),
        }
    }
}

/// The bounds of every kind of holder (docs/abuse-limits.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldLimits {
    /// `HOLD_LIMIT_PER_VARIANT` (10), `HOLD_LIMIT_TOTAL` (100).
    pub guest: HoldLimit,
    /// `HOLD_LIMIT_PER_VARIANT_CUSTOMER` (50), `HOLD_LIMIT_TOTAL_CUSTOMER` (500).
    pub customer: HoldLimit,
    /// `HOLD_LIMIT_PER_VARIANT_NETWORK` (100), `HOLD_LIMIT_TOTAL_NETWORK` (1,000):
    /// every shopper of one client network together.
    pub network: HoldLimit,
    /// `HOLD_LIMIT_PAID_MULTIPLE` (5): with an authorized payment, a
    /// checkout past a limit holds up to this many times it; 1: it is
    /// refused.
    pub paid_multiple: u32,
}

impl Default for HoldLimits {
    fn default() -> Self {
        Self {
            guest: HoldLimit {
                per_variant: 10,
                total: 100,
            },
            customer: HoldLimit {
                per_variant: 50,
                total: 500,
            },
            network: HoldLimit {
                per_variant: 100,
                total: 1_000,
            },
            paid_multiple: 5,
        }
    }
}

pub fn is_guest(customer_id: &str) -> bool {
    customer_id.starts_with("guest-")
}

/// A checkout past a bound: which one, and by how much.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded {
    /// The SKU past the per-variant bound; None: the total.
    pub sku: Option<String>,
    pub already: u64,
    pub asked: u64,
    pub limit: u32,
}

/// The units counted in `ledger` besides `cart_id`'s (of each other cart,
/// its newest session), by SKU and in all.
fn counted<'a>(ledger: &'a HoldLedger, cart_id: &str) -> (BTreeMap<&'a str, u64>, u64) {
    let mut newest: BTreeMap<&str, &HoldEntry> = BTreeMap::new();
    for e in ledger.entries.iter().filter(|e| e.cart_id != cart_id) {
        let slot = newest.entry(e.cart_id.as_str()).or_insert(e);
        if e.opened_ms > slot.opened_ms {
            *slot = e;
        }
    }
    let mut by_sku = BTreeMap::new();
    let mut total = 0u64;
    for line in newest.values().flat_map(|e| &e.lines) {
        *by_sku.entry(line.sku.as_str()).or_default() += u64::from(line.quantity);
        total += u64::from(line.quantity);
    }
    (by_sku, total)
}

/// Adds `entry` to `ledger` if its lines fit `limit` beside what the
/// holder's other carts hold; drops entries past their end first. An
/// unset `entry.until_ms` is inherited from a live entry of the same cart,
/// else `fresh_until`: the entry's end, as added.
pub fn reserve(
    ledger: &mut HoldLedger,
    mut entry: HoldEntry,
    now_ms: i64,
    fresh_until: i64,
    limit: HoldLimit,
) -> Result<i64, Exceeded> {
    ledger.entries.retain(|e| e.until_ms + GRACE_MS > now_ms);
    if entry.until_ms == 0 {
        let inherited = ledger
            .entries
            .iter()
            .filter(|e| e.cart_id == entry.cart_id && e.until_ms > now_ms)
            .map(|e| e.until_ms)
            .max();
        entry.until_ms = inherited.unwrap_or(fresh_until);
    }
    let (by_sku, total) = counted(ledger, &entry.cart_id);
    let mut asked_total = 0u64;
    for line in &entry.lines {
        let asked = u64::from(line.quantity);
        asked_total += asked;
        let already = by_sku.get(line.sku.as_str()).copied().unwrap_or(0);
        if already + asked > u64::from(limit.per_variant) {
            return Err(Exceeded {
                sku: Some(line.sku.clone()),
                already,
                asked,
                limit: limit.per_variant,
            });
        }
    }
    if total + asked_total > u64::from(limit.total) {
        return Err(Exceeded {
            sku: None,
            already: total,
            asked: asked_total,
            limit: limit.total,
        });
    }
    let until = entry.until_ms;
    ledger.entries.retain(|e| e.session_id != entry.session_id);
    ledger.entries.push(entry);
    Ok(until)
}

#[cfg(test)]
#[path = "hold_limits_tests.rs"]
mod tests;
