//! What one holder may hold in open checkouts: a shopper (a guest less
//! than a signed-in customer) and a client network, per variant and in
//! all (`HOLD_LIMIT_*`), counted in a ledger per holder (one entry per
//! session; kept in the shared store by `hold_ledgers`, its arithmetic in
//! `ledger_book`). Past
//! a limit a checkout holds nothing until it is paid, and then at most
//! `HOLD_LIMIT_PAID_MULTIPLE` times the limit; past that it is refused
//! whole (409 `HOLD_LIMIT_REACHED`, naming the limit), never cut.
//!
//! A ledger entry also carries its hold's latest end (`until_ms`): a newer
//! session of the same cart inherits it, so however often a cart is
//! checked out again, its hold never runs past its first expiry plus the
//! one extension. Entries leave when the hold is released or sold; one
//! left behind (a process stopped half-way) is dropped past its end.

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
