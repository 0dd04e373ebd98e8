//! An order's payment follows the order: captured when fulfilment ships it
//! (`PAYMENT_CAPTURE=on_ship`, the default) or when it is made
//! (`on_confirm`), voided when a customer cancels before capture and
//! refunded in whole after. Each move is made from the outbox before the
//! order's event is published (as a cancelled order's stock goes back), so
//! a move that fails because the provider is out of reach is retried by
//! the sweep until it lands; its idempotency key (`sf-<order>-<move>`)
//! makes the retry the same call. What the move gives is recorded on the
//! order with its own event (`payment.captured`, `payment.voided`,
//! `payment.refunded`).

use storefront_platform::client::call::{Caller, Current};
use storefront_platform::error::ServiceError;
use storefront_platform::typed_client;
use storefront_proto::orders::v1::{Order, OrderStatus};
use storefront_proto::payments::v1::payment_service_client::PaymentServiceClient;
use storefront_proto::payments::v1::{
    GetPaymentRequest, MovePaymentRequest, Payment, PaymentStatus,
};

use crate::kinds::{CANCELLED, CREATED, STATUS_CHANGED};

typed_client! {
    /// The moves of an order's payment.
    pub Payments via PaymentServiceClient {
        Read get_payment(GetPaymentRequest) -> Payment;
        Write capture_payment(MovePaymentRequest) -> Payment;
        Write void_payment(MovePaymentRequest) -> Payment;
        Write refund_payment(MovePaymentRequest) -> Payment;
    }
}

/// When an order's payment is captured (`PAYMENT_CAPTURE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureAt {
    /// When fulfilment marks it SHIPPED: nothing is taken for an order
    /// that never ships.
    OnShip,
    /// When it is made.
    OnConfirm,
}

impl CaptureAt {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "on_ship" => Some(Self::OnShip),
            "on_confirm" => Some(Self::OnConfirm),
            _ => None,
        }
    }
}

/// A move of a payment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Move {
    Capture,
    Void,
    Refund,
}

impl Move {
    fn name(self) -> &'static str {
        match self {
            Move::Capture => "capture",
            Move::Void => "void",
            Move::Refund => "refund",
        }
    }

    /// The event that records it on the order.
    pub fn event(self) -> &'static str {
        match self {
            Move::Capture => "payment.captured",
            Move::Void => "payment.voided",
            Move::Refund => "payment.refunded",
        }
    }
}

fn status(payment: &Payment) -> PaymentStatus {
    PaymentStatus::try_from(payment.status).unwrap_or_default()
}

/// What the event `kind` of `order` (the order as the event has it) asks
/// of its payment, if anything.
pub fn due(kind: &str, order: &Order, capture: CaptureAt) -> Option<Move> {
    let payment = status(order.payment.as_ref()?);
    let shipped = order.status == OrderStatus::Shipped as i32;
    match (kind, payment) {
        (CANCELLED, PaymentStatus::Authorized) => Some(Move::Void),
        (CANCELLED, PaymentStatus::Captured) => Some(Move::Refund),
        (STATUS_CHANGED, PaymentStatus::Authorized) if shipped && capture == CaptureAt::OnShip => {
            Some(Move::Capture)
        }
        (CREATED, PaymentStatus::Authorized) if capture == CaptureAt::OnConfirm => {
            Some(Move::Capture)
        }
        _ => None,
    }
}

/// Makes `how` of `order`'s payment: the payment after it. A refusal of
/// the provider (the payment moved elsewhere, e.g. voided by hand) is
/// answered with the payment as it stands, so that the order says so; the
/// provider out of reach is an error, for the sweep to retry.
pub async fn make(payments: &Caller, order: &Order, how: Move) -> Result<Payment, ServiceError> {
    let order_id = order.meta.as_ref().map_or("", |m| m.id.as_str());
    let payment_id = order.payment.as_ref().map_or("", |p| p.id.as_str());
    let message = MovePaymentRequest {
        id: payment_id.to_string(),
        amount: 0,
        idempotency_key: storefront_domain::payment_keys::key(order_id, how.name()),
    };
    let client = Payments(payments);
    let moved = match how {
        Move::Capture => client.capture_payment(&Current, message).await,
        Move::Void => client.void_payment(&Current, message).await,
        Move::Refund => client.refund_payment(&Current, message).await,
    };
    let unreachable = |e: storefront_platform::client::call::CallError| {
        e.unavailable(
            "PAYMENTS_UNAVAILABLE",
            "the payments service is unreachable",
        )
    };
    match moved {
        Ok(payment) => Ok(payment),
        Err(e) if e.refusal().is_some() => {
            let refused = e.refusal().map(|r| r.message).unwrap_or_default();
            tracing::warn!(order_id, payment_id, how = how.name(), %refused, "a payment move was refused");
            let read = GetPaymentRequest {
                id: payment_id.to_string(),
            };
            client
                .get_payment(&Current, read)
                .await
                .map_err(unreachable)
        }
        Err(e) => Err(unreachable(e)),
    }
}

/// The payment as an order keeps it: what the shopper's client confirmed
/// with is no part of it.
pub fn kept(payment: Payment) -> Payment {
    Payment {
        client_secret: String::new(),
        next_action: None,
        ..payment
    }
}

#[cfg(test)]
mod tests {
    use storefront_platform::topology::ORDERS;

    use super::*;

    fn order(status: OrderStatus, payment: PaymentStatus) -> Order {
        Order {
            status: status as i32,
            payment: Some(Payment {
                status: payment as i32,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn the_allow_list_is_what_the_client_calls() {
        assert_eq!(ORDERS.methods_on("payments"), Some(Payments::methods()));
    }

    #[test]
    fn each_event_asks_its_move_of_the_payment() {
        use OrderStatus::*;
        use PaymentStatus::*;
        let on_ship = CaptureAt::OnShip;
        let shipped = order(Shipped, Authorized);
        assert_eq!(due(STATUS_CHANGED, &shipped, on_ship), Some(Move::Capture));
        let processing = order(Processing, Authorized);
        assert_eq!(due(STATUS_CHANGED, &processing, on_ship), None);
        let made = order(Confirmed, Authorized);
        assert_eq!(due(CREATED, &made, on_ship), None);
        let at_once = CaptureAt::OnConfirm;
        assert_eq!(due(CREATED, &made, at_once), Some(Move::Capture));
        assert_eq!(due(STATUS_CHANGED, &shipped, at_once), None);
        let cancelled = order(Cancelled, Authorized);
        assert_eq!(due(CANCELLED, &cancelled, on_ship), Some(Move::Void));
        let taken = order(Cancelled, Captured);
        assert_eq!(due(CANCELLED, &taken, on_ship), Some(Move::Refund));
        let gone = order(Cancelled, Voided);
        assert_eq!(due(CANCELLED, &gone, on_ship), None);
        let unpaid = Order::default();
        assert_eq!(due(CANCELLED, &unpaid, on_ship), None);
        assert_eq!(CaptureAt::parse("on_ship"), Some(on_ship));
        assert_eq!(CaptureAt::parse("later"), None);
    }
}
