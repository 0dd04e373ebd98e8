//! Each holder's ledger (`hold_limits`) in the shared store, changed by
//! compare-and-set so that a bound holds over every replica, and the
//! refusal naming the bound a checkout would pass.
//!
//! A checkout within its shopper's and its network's limits is counted
//! and holds at once. Past either, with a paid multiple above one, it is
//! counted nowhere and holds nothing until its payment is authorized: a
//! hoarder who does not pay holds nothing past the limits. Paid, it is
//! counted against the limits `HOLD_LIMIT_PAID_MULTIPLE` times over, and
//! holds.

use std::time::Duration;

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::store::Store;
use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldEntry, HoldLedger};
use storefront_proto::catalog::v1::StockLine;
use storefront_proto::error::codes;

use crate::hold_limits::{Exceeded, GRACE_MS, HoldLimit, HoldLimits, is_guest};
use crate::ledger_book::reserve;
use crate::ledger_writes::{Failed, LedgerWrites, Write, Wrote};

/// The code of a checkout past what its holder may hold.
pub const HOLD_LIMIT_REACHED: &str = "HOLD_LIMIT_REACHED";

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

/// What a checkout may hold now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// Counted: it holds, at most until this (ms since the epoch).
    Held(i64),
    /// Past a limit: it holds nothing until its payment is authorized.
    AwaitingPayment,
}

/// 409 `HOLD_LIMIT_REACHED`: the bound, its setting (`paid`: the
/// multiple a paid checkout may hold), and the line past it.
fn refusal(
    holder: Holder<'_>,
    exceeded: &Exceeded,
    lines: &[(String, String)],
    paid: Option<u32>,
) -> ServiceError {
    let (who, per_variant, total) = holder.settings();
    let with = if paid.is_some() {
        " with an authorized payment"
    } else {
        ""
    };
    let setting = |name: &str| match paid {
        Some(m) => format!("{m} x {name}, HOLD_LIMIT_PAID_MULTIPLE"),
        None => name.to_string(),
    };
    let message = match &exceeded.sku {
        Some(sku) => format!(
            "{who} may hold at most {} units of one variant in open checkouts{with} ({}); \
             {} of {sku} already held, {} asked",
            exceeded.limit,
            setting(per_variant),
            exceeded.already,
            exceeded.asked
        ),
        None => format!(
            "{who} may hold at most {} units in open checkouts{with} ({}); {} already held, {} asked",
            exceeded.limit,
            setting(total),
            exceeded.already,
            exceeded.asked
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
    let mut error = ServiceError::new(ErrorKind::Conflict, HOLD_LIMIT_REACHED, message.clone());
    for field in fields {
        error = error.with_violation(FieldViolation::new(
            field,
            HOLD_LIMIT_REACHED,
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
    /// Their writes, gathered per ledger.
    writes: LedgerWrites,
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

impl Asked<'_> {
    fn entry(&self, now_ms: i64) -> HoldEntry {
        HoldEntry {
            session_id: self.session_id.to_string(),
            cart_id: self.cart_id.to_string(),
            opened_ms: now_ms,
            until_ms: 0,
            lines: self.lines.to_vec(),
        }
    }
}

impl Ledgers {
    pub fn new(store: Store, limits: HoldLimits, longest_ttl: Duration) -> Self {
        // Past the longest hold it may count (two checkout times) and the
        // grace: how long a ledger is kept after its last change.
        let keep = 2 * longest_ttl + Duration::from_millis(2 * GRACE_MS as u64);
        Self {
            writes: LedgerWrites::new(store.clone(), keep),
            store,
            limits,
        }
    }

    /// The session's shopper and (when known) its client network, with
    /// their limits.
    fn holders<'a>(&self, asked: &Asked<'a>) -> Vec<(Holder<'a>, HoldLimit)> {
        let mut holders = vec![if is_guest(asked.customer_id) {
            (Holder::Guest(asked.customer_id), self.limits.guest)
        } else {
            (Holder::Customer(asked.customer_id), self.limits.customer)
        }];
        if !asked.network.is_empty() {
            holders.push((Holder::Network(asked.network), self.limits.network));
        }
        holders
    }

    /// Counts the session's lines in its shopper's and its network's
    /// ledgers (`paid`: against the limits `HOLD_LIMIT_PAID_MULTIPLE`
    /// times over), or counts nothing: past a limit unpaid, it awaits its
    /// payment; past what a payment allows, it is refused. Held: the
    /// hold's latest end (ms), inherited from the cart's live session,
    /// else `fresh_until`.
    pub async fn reserve(
        &self,
        asked: &Asked<'_>,
        now_ms: i64,
        fresh_until: i64,
        paid: bool,
    ) -> Result<Reservation, ServiceError> {
        let multiple = if paid { self.limits.paid_multiple } else { 1 };
        let mut entry = asked.entry(now_ms);
        let mut counted = Vec::new();
        let mut until = fresh_until;
        for (holder, limit) in self.holders(asked) {
            let limit = limit.times(multiple);
            let outcome = self.reserve_in(holder, entry.clone(), now_ms, until, limit);
            let past = match outcome.await {
                Ok(Wrote::Held(end)) => {
                    // The network's entry ends where the shopper's does.
                    (until, entry.until_ms) = (end, end);
                    counted.push(holder);
                    continue;
                }
                Ok(Wrote::Past(exceeded)) => Ok(exceeded),
                Ok(Wrote::Forgot) => Err(ServiceError::internal("a hold was counted as forgotten")),
                Err(Failed::Store(e)) => Err(ServiceError::from(e)),
                Err(Failed::Busy) => Err(ServiceError::new(
                    ErrorKind::Conflict,
                    codes::CONCURRENT_MODIFICATION,
                    "too many checkouts at once; retry",
                )),
            };
            for holder in counted {
                self.forget_in(holder, asked.session_id).await;
            }
            return self.past_limit(holder, &past?, asked, now_ms, paid).await;
        }
        Ok(Reservation::Held(until))
    }

    /// A checkout past `holder`'s limit: refused when already paid, or
    /// when no payment lifts a limit (a multiple of 1), or when it would
    /// not fit even paid; else it awaits its payment. The paid limits are
    /// read here, not written: the paid hold is counted when it comes.
    async fn past_limit(
        &self,
        holder: Holder<'_>,
        exceeded: &Exceeded,
        asked: &Asked<'_>,
        now_ms: i64,
        paid: bool,
    ) -> Result<Reservation, ServiceError> {
        let multiple = self.limits.paid_multiple;
        if paid || multiple == 1 {
            let paid = paid.then_some(multiple);
            return Err(refusal(holder, exceeded, &asked.line_ids, paid));
        }
        for (holder, limit) in self.holders(asked) {
            let mut ledger = self
                .store
                .get_message::<HoldLedger>(&holder.key())
                .await?
                .map(|v| v.value)
                .unwrap_or_default();
            let entry = asked.entry(now_ms);
            if let Err(e) = reserve(&mut ledger, entry, now_ms, now_ms, limit.times(multiple)) {
                return Err(refusal(holder, &e, &asked.line_ids, Some(multiple)));
            }
        }
        Ok(Reservation::AwaitingPayment)
    }

    async fn reserve_in(
        &self,
        holder: Holder<'_>,
        entry: HoldEntry,
        now_ms: i64,
        fresh_until: i64,
        limit: HoldLimit,
    ) -> Result<Wrote, Failed> {
        let write = Write::Reserve {
            entry,
            now_ms,
            fresh_until,
            limit,
        };
        self.writes.apply(holder.key(), write).await
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
        let network = async {
            if !record.client_network.is_empty() {
                let network = Holder::Network(&record.client_network);
                self.forget_in(network, &session.id).await;
            }
        };
        tokio::join!(self.forget_in(shopper, &session.id), network);
    }

    async fn forget_in(&self, holder: Holder<'_>, session_id: &str) {
        let write = Write::Forget {
            session_id: session_id.to_string(),
        };
        if let Err(e) = self.writes.apply(holder.key(), write).await {
            tracing::warn!(error = ?e, session_id, "hold ledger entry left to expire");
        }
    }
}
