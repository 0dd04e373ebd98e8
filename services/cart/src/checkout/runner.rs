//! The runner of the checkout's machine: applies a step to a session's
//! record by one compare-and-set (nothing written when it changes
//! nothing, or is refused), then carries out the step's effects in order.
//! An effect that fails in a way the machine knows (the cart claimed by
//! another order, the order refused) becomes the next event; one whose
//! peer is out of reach stops the run and leaves the state where a retry
//! (or the sweep) resumes it. Settling stock is never the reason a step
//! fails: the session stays on the sweep's list until it is settled.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use storefront_platform::error::ServiceError;
use storefront_platform::store::{StoreError, Updated, Versioned};
use storefront_proto::cart::storage::v1::CheckoutRecord;
use storefront_proto::cart::v1::{Cart, CartState};
use storefront_proto::catalog::v1::StockAction;
use storefront_proto::orders::v1::CreateOrderRequest;

use super::machine::{Effect, Event, Refusal, Settle, codes, is_confirmed, step};
use super::{Checkout, ids, not_found};
use crate::carts::now;
use crate::claims::claimed_for;
use crate::holds::session_key;
use crate::pricing::money;
use crate::quote::Quote;

const MAX_ATTEMPTS: usize = 64;

/// Where a run of the machine ended.
pub(crate) enum Ran {
    /// Every effect done: the record as the last step left it.
    Done(Seen),
    /// A step did not apply: the record as it stood.
    Refused(CheckoutRecord, Refusal),
}

/// A session's record as a step read or left it, and the version it was
/// stored at when that is known: the seed of the next step's
/// compare-and-set, which then does not read the record again (unless
/// another write came between).
pub(crate) struct Seen {
    pub(crate) record: CheckoutRecord,
    version: Option<u64>,
}

impl Seen {
    /// `record` as this process wrote it at `version`.
    pub(crate) fn at(record: CheckoutRecord, version: u64) -> Self {
        Self {
            record,
            version: Some(version),
        }
    }
}

/// A record whose version is not known: its next step reads it first.
impl From<CheckoutRecord> for Seen {
    fn from(record: CheckoutRecord) -> Self {
        Self {
            record,
            version: None,
        }
    }
}

impl From<Versioned<CheckoutRecord>> for Seen {
    fn from(found: Versioned<CheckoutRecord>) -> Self {
        Self::at(found.value, found.version)
    }
}

/// What stops a compare-and-set without writing.
enum Halt {
    Store(StoreError),
    Unchanged(Vec<Effect>, Box<CheckoutRecord>),
    Refused(Refusal, Box<CheckoutRecord>),
}

impl From<StoreError> for Halt {
    fn from(e: StoreError) -> Self {
        Halt::Store(e)
    }
}

/// What carrying out effects led to.
pub(super) enum Next {
    Done,
    /// Apply this event; then answer the error, if any.
    Then(Event<'static>, Option<ServiceError>),
}

/// A step driven, boxed (`Checkout::drive`).
type Step<'a> = Pin<Box<dyn Future<Output = Result<Ran, ServiceError>> + Send + 'a>>;

impl Checkout {
    /// Applies `event` to session `id`, then carries out its effects (and
    /// the events they lead to). `seen`: the record as just read, to spare
    /// a write when the event changes nothing in it; `cart`: the cart as
    /// the order is to be made of it, when the event may create the order,
    /// and the version it was read at (the claim's seed).
    ///
    /// Its future is on the heap: a step's is about 14 KB, and every step
    /// of a checkout awaits one, so held inline it would be part of each
    /// caller's future and copied whenever one of them moves.
    pub(crate) fn drive<'a>(
        &'a self,
        id: &'a str,
        event: Event<'a>,
        seen: Option<Seen>,
        cart: Option<&'a Versioned<Cart>>,
    ) -> Step<'a> {
        Box::pin(self.drive_inline(id, event, seen, cart))
    }

    async fn drive_inline(
        &self,
        id: &str,
        event: Event<'_>,
        seen: Option<Seen>,
        cart: Option<&Versioned<Cart>>,
    ) -> Result<Ran, ServiceError> {
        let (seen, effects) = match self.apply(id, event, seen).await? {
            Ok(moved) => moved,
            Err((record, refusal)) => return Ok(Ran::Refused(record, refusal)),
        };
        let Next::Then(next, failure) = self.carry_out(&seen.record, effects, cart).await? else {
            return Ok(Ran::Done(seen));
        };
        let after = self.drive(id, next, Some(seen), cart).await?;
        match failure {
            // Unless a concurrent confirm of the session got there first.
            Some(e) if !matches!(&after, Ran::Refused(r, _) if is_confirmed(r)) => Err(e),
            _ => Ok(after),
        }
    }

    /// One step by one compare-and-set (seeded from `seen`): the record
    /// after it and its effects, or the record as it stood and why the step
    /// did not apply.
    async fn apply(
        &self,
        id: &str,
        event: Event<'_>,
        seen: Option<Seen>,
    ) -> Result<Result<(Seen, Vec<Effect>), (CheckoutRecord, Refusal)>, ServiceError> {
        let now = now();
        let key = session_key(id);
        let ttl = self.ttl_after(event);
        // A refused step leaves the record as it was, and neither a
        // refusal nor an idle step is written: the record is moved out to
        // be answered.
        let change = |record: &mut CheckoutRecord| match step(record, event, &now) {
            Ok(stepped) if stepped.changed => Ok(stepped.effects),
            Ok(stepped) => Err(Halt::Unchanged(
                stepped.effects,
                Box::new(std::mem::take(record)),
            )),
            Err(refusal) => Err(Halt::Refused(refusal, Box::new(std::mem::take(record)))),
        };
        // Stepped as read: a refused or idle step needs no write, and a
        // step that changed the record writes it by one compare-and-set
        // from the version read (stepped again only on a newer record).
        let changed = match seen {
            Some(Seen {
                mut record,
                version,
            }) => match step(&mut record, event, &now) {
                Err(refusal) => return Ok(Err((record, refusal))),
                Ok(stepped) if !stepped.changed => {
                    return Ok(Ok((Seen { record, version }, stepped.effects)));
                }
                Ok(stepped) => version.map(|version| {
                    let value = Versioned {
                        version,
                        value: record,
                    };
                    (value, stepped.effects)
                }),
            },
            None => None,
        };
        let store = &self.store;
        let updated = match changed {
            Some(changed) => {
                (store.update_message_changed(&key, changed, MAX_ATTEMPTS, ttl, change)).await
            }
            None => (store.update_message_from(&key, None, MAX_ATTEMPTS, ttl, change)).await,
        };
        match updated {
            Ok(Updated::Done {
                value,
                result,
                version,
            }) => Ok(Ok((Seen::at(value, version), result))),
            Ok(Updated::Missing) => Err(not_found(id)),
            Ok(Updated::Contended) => Err(Refusal::Stood.error()),
            Err(Halt::Unchanged(effects, record)) => Ok(Ok(((*record).into(), effects))),
            Err(Halt::Refused(refusal, record)) => Ok(Err((*record, refusal))),
            Err(Halt::Store(e)) => Err(e.into()),
        }
    }

    /// A superseded session is kept an hour, to answer its late confirms;
    /// any other keeps its time.
    fn ttl_after(&self, event: Event<'_>) -> Option<Duration> {
        match event {
            Event::Superseded { .. } => Some(Duration::from_secs(3600).min(self.keep())),
            _ => None,
        }
    }

    async fn carry_out(
        &self,
        record: &CheckoutRecord,
        effects: Vec<Effect>,
        cart: Option<&Versioned<Cart>>,
    ) -> Result<Next, ServiceError> {
        let (id, _) = ids(record);
        for effect in effects {
            match effect {
                Effect::ClaimCart => {
                    if let Some(lost) = self.claim(record, cart).await? {
                        return Ok(lost);
                    }
                }
                Effect::CreateOrder => {
                    return self.create_order(record, cart.map(|c| &c.value)).await;
                }
                Effect::Settle(how) => {
                    self.settle(record, how).await;
                    // Ended without an order: its payment goes too.
                    if how == Settle::Release {
                        Box::pin(self.let_go(record)).await;
                    }
                }
                Effect::DueAt(ms) => self.holds.due_at(id, ms).await?,
                Effect::Unlist => self.holds.unlist(id).await?,
                Effect::HoldPaid => return self.hold_paid(record).await,
                Effect::Drop(older) => {
                    Box::pin(self.release_or_leave(&older)).await;
                    self.store.delete(&session_key(&older)).await?;
                }
            }
        }
        Ok(Next::Done)
    }

    /// Claims the cart for the session's order: `None` when it is (by this
    /// confirm or a concurrent one), else the event its loss means.
    async fn claim(
        &self,
        record: &CheckoutRecord,
        cart: Option<&Versioned<Cart>>,
    ) -> Result<Option<Next>, ServiceError> {
        let (_, cart_id) = ids(record);
        let (customer, order) = (&record.customer_id, &record.planned_order_id);
        let Err(refused) = self
            .carts
            .claim(customer, cart_id, record.cart_version, order, cart.cloned())
            .await
        else {
            return Ok(None);
        };
        let now = self.carts.get(customer, cart_id).await?;
        if claimed_for(&now, order) {
            return Ok(None);
        }
        let taken = now.state == CartState::Ordered as i32;
        Ok(Some(Next::Then(Event::ClaimLost { taken }, Some(refused))))
    }

    /// Creates the session's order. A refusal by the orders service is the
    /// client's to see as it is (the cart given back first); the service
    /// out of reach is 503, the cart left claimed for a retry.
    async fn create_order(
        &self,
        record: &CheckoutRecord,
        cart: Option<&Cart>,
    ) -> Result<Next, ServiceError> {
        let Some(cart) = cart else {
            return Err(ServiceError::internal(
                "an order was to be made without its cart",
            ));
        };
        let quote = self.quote_of(record, cart).await?;
        match self
            .orders
            .create_order(order_of(record, cart, &quote))
            .await
        {
            Ok(_) => Ok(Next::Then(Event::OrderMade, None)),
            Err(e) => match e.refusal() {
                Some(refused) => {
                    let (_, cart_id) = ids(record);
                    let order = &record.planned_order_id;
                    self.carts
                        .unclaim(&record.customer_id, cart_id, order)
                        .await?;
                    Ok(Next::Then(Event::OrderRefused, Some(refused)))
                }
                None => Err(e.unavailable(
                    codes::ORDERS_UNAVAILABLE,
                    "the orders service is unreachable; retry the confirm",
                )),
            },
        }
    }

    async fn settle(&self, record: &CheckoutRecord, how: Settle) {
        let (id, _) = ids(record);
        let action = match how {
            Settle::Sell => StockAction::Sell,
            Settle::Release => StockAction::Release,
        };
        if let Err(e) = self.holds.settle(id, record, action).await {
            tracing::warn!(error = %e, session_id = id, "checkout hold left for the sweep");
        }
    }
}

/// The order a session's cart becomes, with its shipping and the tax its
/// market says.
fn order_of(record: &CheckoutRecord, cart: &Cart, quote: &Quote) -> CreateOrderRequest {
    let (totals, tax_lines) = quote.totals(cart);
    let currency = cart.currency_code.as_str();
    CreateOrderRequest {
        order_id: record.planned_order_id.clone(),
        customer_id: record.customer_id.clone(),
        cart_id: cart.meta.as_ref().map(|m| m.id.clone()).unwrap_or_default(),
        line_items: cart.line_items.clone(),
        totals: Some(totals),
        shipping_address: record
            .session
            .as_ref()
            .and_then(|s| s.shipping_address.clone()),
        discount_codes: cart.discount_codes.clone(),
        tax_lines,
        shipping_method: quote.chosen.clone(),
        shipping_tax: Some(money(currency, quote.shipping_tax())),
        payment: record.session.as_ref().and_then(|s| s.payment.clone()),
    }
}
