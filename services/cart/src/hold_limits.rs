//! What one holder may hold in open checkouts: a shopper (a guest less
//! than a signed-in customer) and a client network, per variant and in
//! all (`HOLD_LIMIT_*`). Each holder has a ledger in the shared store, an
//! entry per session, changed by compare-and-set, so the bound holds over
//! every replica; a checkout that would pass a bound is refused whole (409
//! `HOLD_LIMIT_REACHED`, naming the limit), never cut.
//!
//! A ledger entry also carries its hold's latest end (`until_ms`): a newer
//! session of the same cart inherits it, so however often a cart is
//! checked out again, its hold never runs past its first expiry plus the
//! one extension. Entries leave when the hold is released or sold; one
//! left behind (a process stopped half-way) is dropped past its end.

use std::collections::BTreeMap;
use std::time::Duration;
use storefront_proto::error::codes;

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::{Store, Updated};
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldEntry, HoldLedger};
use storefront_proto::catalog::v1::StockLine;

const ATTEMPTS: usize = 64;
/// How long past its end an entry is still counted: the sweep releases a
/// hold within a second of its expiry, or a minute after one being sold.
const GRACE_MS: i64 = 120_000;

/// Units one holder may hold: of one variant, and in all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HoldLimit {
    pub per_variant: u32,
    pub total: u32,
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
        }
    }
}

pub fn is_guest(customer_id: &str) -> bool {
    customer_id.starts_with("guest-")
}

/// Who holds, for the ledger's key and the refusal's words.
#[derive(Debug, Clone, Copy)]
enum Holder<'a> {
    Guest(&'a str),
    Customer(&'a str),
    Network(&'a str),
}

impl Holder<'_> {
    fn key(&self) -> String {
        match self {
            Holder::Guest(id) | Holder::Customer(id) => format!("hold-ledger:{id}"),
            Holder::Network(network) => format!("hold-ledger-net:{network}"),
        }
    }

    /// The settings that bound this holder, per variant and in all.
    fn settings(&self) -> (&'static str, &'static str, &'static str) {
        match self {
            Holder::Guest(_) => ("a guest", "HOLD_LIMIT_PER_VARIANT", "HOLD_LIMIT_TOTAL"),
            Holder::Customer(_) => (
                "a customer",
                "HOLD_LIMIT_PER_VARIANT_CUSTOMER",
                "HOLD_LIMIT_TOTAL_CUSTOMER",
            ),
            Holder::Network(_) => (
                "one network",
                "HOLD_LIMIT_PER_VARIANT_NETWORK",
                "HOLD_LIMIT_TOTAL_NETWORK",
            ),
        }
    }
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
fn counted(ledger: &HoldLedger, cart_id: &str) -> (BTreeMap<String, u64>, u64) {
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
        *by_sku.entry(line.sku.clone()).or_default() += u64::from(line.quantity);
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
        let already = by_sku.get(&line.sku).copied().unwrap_or(0);
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

/// 409 `HOLD_LIMIT_REACHED`: the bound, its setting, and the line past it.
fn refusal(holder: Holder<'_>, exceeded: &Exceeded, lines: &[(String, String)]) -> ServiceError {
    let (who, per_variant, total) = holder.settings();
    let message = match &exceeded.sku {
        Some(sku) => format!(
            "{who} may hold at most {} units of one variant in open checkouts ({per_variant}); \
             {} of {sku} already held, {} asked",
            exceeded.limit, exceeded.already, exceeded.asked
        ),
        None => format!(
            "{who} may hold at most {} units in open checkouts ({total}); {} already held, {} asked",
            exceeded.limit, exceeded.already, exceeded.asked
        ),
    };
    let fields: Vec<String> = match &exceeded.sku {
        Some(sku) => lines
            .iter()
            .filter(|(_, s)| s == sku)
            .map(|(id, _)| format!("lineItems.{id}"))
            .collect(),
        None => Vec::new(),
    };
    let fields = if fields.is_empty() {
        vec!["cartId".to_string()]
    } else {
        fields
    };
    let mut error = ServiceError::new(ErrorKind::Conflict, "HOLD_LIMIT_REACHED", message.clone());
    for field in fields {
        error = error.with_violation(FieldViolation::new(
            field,
            "HOLD_LIMIT_REACHED",
            message.clone(),
        ));
    }
    error
}

/// The ledgers of every holder, in the shared store.
#[derive(Clone)]
pub struct Ledgers {
    pub store: Store,
    pub limits: HoldLimits,
    /// How long a ledger is kept after its last change: past the longest
    /// hold it may count (two checkout times) and the grace.
    pub keep: Duration,
}

impl Ledgers {
    pub fn new(store: Store, limits: HoldLimits, longest_ttl: Duration) -> Self {
        let keep = 2 * longest_ttl + Duration::from_millis(2 * GRACE_MS as u64);
        Self {
            store,
            limits,
            keep,
        }
    }
}

/// What a session asks to hold, for the ledgers.
pub struct Asked<'a> {
    pub customer_id: &'a str,
    pub network: &'a str,
    pub session_id: &'a str,
    pub cart_id: &'a str,
    pub lines: &'a [StockLine],
    /// The cart's lines' ids by SKU, to name the lines past a bound.
    pub line_ids: Vec<(String, String)>,
}

impl Ledgers {
    /// Counts the session's lines in its shopper's and its network's
    /// ledgers, or refuses them (nothing counted). The hold's latest end
    /// (ms): inherited from the cart's live session, else `fresh_until`.
    pub async fn reserve(
        &self,
        asked: &Asked<'_>,
        now_ms: i64,
        fresh_until: i64,
    ) -> Result<i64, ServiceError> {
        let shopper = if is_guest(asked.customer_id) {
            (Holder::Guest(asked.customer_id), self.limits.guest)
        } else {
            (Holder::Customer(asked.customer_id), self.limits.customer)
        };
        let entry = HoldEntry {
            session_id: asked.session_id.to_string(),
            cart_id: asked.cart_id.to_string(),
            opened_ms: now_ms,
            until_ms: 0,
            lines: asked.lines.to_vec(),
        };
        let until = self
            .reserve_in(shopper, entry.clone(), asked, now_ms, fresh_until)
            .await?;
        if asked.network.is_empty() {
            return Ok(until);
        }
        let network = (Holder::Network(asked.network), self.limits.network);
        let in_network = HoldEntry {
            until_ms: until,
            ..entry
        };
        if let Err(e) = self
            .reserve_in(network, in_network, asked, now_ms, until)
            .await
        {
            self.forget_in(shopper.0, asked.session_id).await;
            return Err(e);
        }
        Ok(until)
    }

    async fn reserve_in(
        &self,
        (holder, limit): (Holder<'_>, HoldLimit),
        entry: HoldEntry,
        asked: &Asked<'_>,
        now_ms: i64,
        fresh_until: i64,
    ) -> Result<i64, ServiceError> {
        let key = holder.key();
        let ttl = self.keep;
        for _ in 0..ATTEMPTS {
            let updated = self
                .store
                .update_message(&key, ATTEMPTS, Some(ttl), |ledger: &mut HoldLedger| {
                    reserve(ledger, entry.clone(), now_ms, fresh_until, limit)
                        .map_err(|e| refusal(holder, &e, &asked.line_ids))
                })
                .await?;
            match updated {
                Updated::Done { result, .. } => return Ok(result),
                Updated::Contended => break,
                Updated::Missing => {
                    let mut ledger = HoldLedger::default();
                    let until = reserve(&mut ledger, entry.clone(), now_ms, fresh_until, limit)
                        .map_err(|e| refusal(holder, &e, &asked.line_ids))?;
                    if self.store.insert_message(&key, &ledger, Some(ttl)).await? {
                        return Ok(until);
                    }
                }
            }
        }
        Err(ServiceError::new(
            ErrorKind::Conflict,
            codes::CONCURRENT_MODIFICATION,
            "too many checkouts at once; retry",
        ))
    }

    /// The session's hold no longer counts (released or sold). A failure
    /// is logged: the entry leaves the ledger past its end anyway.
    pub async fn forget(&self, record: &CheckoutRecord) {
        let Some(session) = record.session.as_ref() else {
            return;
        };
        let shopper = if is_guest(&record.customer_id) {
            Holder::Guest(&record.customer_id)
        } else {
            Holder::Customer(&record.customer_id)
        };
        self.forget_in(shopper, &session.id).await;
        if !record.client_network.is_empty() {
            self.forget_in(Holder::Network(&record.client_network), &session.id)
                .await;
        }
    }

    async fn forget_in(&self, holder: Holder<'_>, session_id: &str) {
        let removed = self
            .store
            .update_message(&holder.key(), ATTEMPTS, None, |ledger: &mut HoldLedger| {
                ledger.entries.retain(|e| e.session_id != session_id);
                Ok::<_, ServiceError>(())
            })
            .await;
        if let Err(e) = removed {
            tracing::warn!(error = %e, session_id, "hold ledger entry left to expire");
        }
    }
}

#[cfg(test)]
#[path = "hold_limits_tests.rs"]
mod tests;
