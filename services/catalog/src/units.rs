//! Stock as a variant shows it: units available and units held by
//! checkouts, from what the shop counts on hand.

use storefront_proto::catalog::v1::{Availability, Product};

/// Stock as a variant shows it: `quantity` available, `held` by checkouts.
pub(crate) fn availability(available: u32, held: u32) -> Availability {
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
