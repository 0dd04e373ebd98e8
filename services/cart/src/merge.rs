//! A guest's cart at login: merged into the customer's active cart of its
//! currency (`merge`, the default) or kept as a new cart of theirs
//! (`keep-guest`, `CART_MERGE_STRATEGY`), every line priced afresh and
//! every code checked again, and what that did reported line by line.
//! Once per guest: the first login to claim the guest's merge record runs
//! it; logins racing it wait for its report (or, another customer's, get
//! an empty one).

use std::time::Duration;

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::cart::storage::v1::MergeRecord;
use storefront_proto::cart::v1::{
    Cart, CartState, DroppedCode, DroppedLine, MergeReport, MergedLine,
};
use storefront_proto::common::v1::LineItem;

use crate::carts::{Carts, MAX_QUANTITY, cart_key, now};
pub use crate::config::Strategy;
use crate::offer::{line_of, no_such_product};

/// How long a running merge holds the guest (a merge that stopped
/// half-way is run again after it), and how long its report is kept.
const RUNNING: Duration = Duration::from_secs(30);
const DONE: Duration = Duration::from_secs(86_400);
/// How long a login racing the merge waits for its report.
const WAIT_STEPS: usize = 200;
const WAIT_STEP: Duration = Duration::from_millis(50);

fn merge_key(guest_id: &str) -> String {
    format!("merge-of:{guest_id}")
}

fn id_of(cart: &Cart) -> &str {
    cart.meta.as_ref().map_or("", |m| m.id.as_str())
}

fn dropped(line: &LineItem, reason: String) -> DroppedLine {
    DroppedLine {
        product_id: line.product_id.clone(),
        variant_id: line.variant_id,
        quantity: line.quantity,
        reason,
    }
}

impl Carts {
    /// Merges `guest_id`'s active cart for `customer_id`, once.
    pub async fn merge(
        &self,
        strategy: Strategy,
        guest_id: &str,
        customer_id: &str,
    ) -> Result<MergeReport, ServiceError> {
        if !guest_id.starts_with("guest-") || customer_id.is_empty() {
            let message = "a merge needs a guest and a customer";
            return Err(ServiceError::new(
                ErrorKind::BadRequest,
                "INVALID_MERGE",
                message,
            ));
        }
        let key = merge_key(guest_id);
        let running = MergeRecord {
            customer_id: customer_id.to_string(),
            ..Default::default()
        };
        if !self
            .store
            .insert_message(&key, &running, Some(RUNNING))
            .await?
        {
            return self.merged_by_another(&key, customer_id).await;
        }
        let report = match self.merge_once(strategy, guest_id, customer_id).await {
            Ok(report) => report,
            Err(e) => {
                self.store.delete(&key).await?;
                return Err(e);
            }
        };
        let done = MergeRecord {
            customer_id: customer_id.to_string(),
            done: true,
            report: Some(report.clone()),
        };
        if let Some(found) = self.store.get(&key).await? {
            let bytes = prost::Message::encode_to_vec(&done);
            self.store
                .replace(&key, found.version, &bytes, Some(DONE))
                .await?;
        }
        tracing::info!(cart_id = %report.cart_id, "guest cart merged at login");
        Ok(report)
    }

    /// The report of the merge another login is running (or ran).
    async fn merged_by_another(
        &self,
        key: &str,
        customer_id: &str,
    ) -> Result<MergeReport, ServiceError> {
        for _ in 0..WAIT_STEPS {
            match self.store.get_message::<MergeRecord>(key).await? {
                Some(r) if r.value.done && r.value.customer_id == customer_id => {
                    return Ok(r.value.report.unwrap_or_default());
                }
                // Merged into someone else's cart, or the merge gave up.
                Some(r) if r.value.done => return Ok(MergeReport::default()),
                None => return Ok(MergeReport::default()),
                Some(_) => tokio::time::sleep(WAIT_STEP).await,
            }
        }
        Err(ServiceError::new(
            ErrorKind::Unavailable,
            "MERGE_IN_PROGRESS",
            "the guest's cart is being merged; retry",
        ))
    }

    async fn merge_once(
        &self,
        strategy: Strategy,
        guest_id: &str,
        customer_id: &str,
    ) -> Result<MergeReport, ServiceError> {
        let Some(guest) = self.latest_active(guest_id, None).await? else {
            return Ok(MergeReport::default());
        };
        let currency = guest.currency_code.clone();
        let target = match strategy {
            Strategy::MergeLines => self.latest_active(customer_id, Some(&currency)).await?,
            Strategy::KeepGuestCart => None,
        };
        let target = match target {
            Some(cart) => cart,
            None => self.create(customer_id, &currency).await?,
        };
        let target_id = id_of(&target).to_string();
        let ids = crate::offer::product_ids(&guest);
        let products = self.products(&ids, &currency).await?;
        let at = now().seconds;
        let mut report = MergeReport::default();
        let written = self
            .modify(customer_id, &target_id, |cart| {
                report = MergeReport {
                    cart_id: target_id.clone(),
                    ..Default::default()
                };
                for line in &guest.line_items {
                    let priced = products
                        .get(&line.product_id)
                        .ok_or_else(|| no_such_product(&line.product_id))
                        .and_then(|p| line_of(p, line.variant_id, &currency));
                    match priced {
                        Ok((fresh, stock)) => {
                            self.merge_line(cart, line, fresh, stock, &mut report)
                        }
                        Err(e) => report.lines_dropped.push(dropped(line, e.message)),
                    }
                }
                let catalogue = self.promotions.read().unwrap_or_else(|p| p.into_inner());
                for code in &guest.discount_codes {
                    if cart.discount_codes.contains(code) {
                        continue;
                    }
                    match catalogue.check(code, cart, at) {
                        Ok(code) => {
                            cart.discount_codes = catalogue.with_code(&cart.discount_codes, code)
                        }
                        Err(e) => report.codes_dropped.push(DroppedCode {
                            code: code.clone(),
                            reason: e.message,
                        }),
                    }
                }
                Ok(())
            })
            .await?
            .decode()?;
        // Repricing may drop a code the guest had (another code of the
        // customer's does not stack with it).
        for code in &guest.discount_codes {
            let kept = written.discount_codes.contains(code);
            if !kept && !report.codes_dropped.iter().any(|d| &d.code == code) {
                report.codes_dropped.push(DroppedCode {
                    code: code.clone(),
                    reason: "it does not apply with the cart's other codes".into(),
                });
            }
        }
        self.store.delete(&cart_key(id_of(&guest))).await?;
        Ok(report)
    }

    /// One guest line into `cart`: added, or summed into an equal line, as
    /// far as the stock and the caps allow.
    fn merge_line(
        &self,
        cart: &mut Cart,
        line: &LineItem,
        fresh: LineItem,
        stock: u32,
        report: &mut MergeReport,
    ) {
        let lines = cart.line_items.len();
        let existing = cart
            .line_items
            .iter_mut()
            .find(|l| l.product_id == line.product_id && l.variant_id == line.variant_id);
        let before = existing.as_ref().map_or(0, |l| l.quantity);
        let wanted = (before + line.quantity).min(MAX_QUANTITY).min(stock);
        if wanted <= before {
            let reason = format!("only {stock} left in stock, all of them in the cart already");
            report.lines_dropped.push(dropped(line, reason));
            return;
        }
        let merged = |id: &str| MergedLine {
            line_id: id.to_string(),
            product_id: line.product_id.clone(),
            variant_id: line.variant_id,
            quantity: wanted,
            previous_quantity: before,
        };
        match existing {
            Some(l) => {
                l.quantity = wanted;
                l.unit_price = fresh.unit_price;
                report.quantities_changed.push(merged(&l.id));
            }
            None if lines >= self.limits.lines => {
                let reason = format!("a cart holds at most {} distinct lines", self.limits.lines);
                report.lines_dropped.push(dropped(line, reason));
            }
            None => {
                report.lines_added.push(merged(&fresh.id));
                cart.line_items.push(LineItem {
                    quantity: wanted,
                    ..fresh
                });
            }
        }
    }

    /// `owner`'s active cart changed last (of `currency`, if given).
    async fn latest_active(
        &self,
        owner: &str,
        currency: Option<&str>,
    ) -> Result<Option<Cart>, ServiceError> {
        let mut latest: Option<Cart> = None;
        for id in self.owned_ids(owner).await? {
            let Some(found) = self.store.get_message::<Cart>(&cart_key(&id)).await? else {
                continue;
            };
            let cart = found.value;
            let fits = cart.state == CartState::Active as i32
                && cart.customer_id == owner
                && currency.is_none_or(|c| cart.currency_code == c);
            let changed = |c: &Cart| c.meta.as_ref().and_then(|m| m.last_modified_at);
            let newer = latest.as_ref().is_none_or(|l| {
                let (a, b) = (changed(&cart), changed(l));
                a.map(|t| (t.seconds, t.nanos)) > b.map(|t| (t.seconds, t.nanos))
            });
            if fits && newer {
                latest = Some(cart);
            }
        }
        Ok(latest)
    }
}
