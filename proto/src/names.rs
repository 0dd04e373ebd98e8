//! The names the REST contract gives protobuf enums, and the currencies
//! the shop sells in: defined once, for the gateway and every service.

use crate::catalog::v1::ProductStatus;
use crate::orders::v1::OrderStatus;

/// The longest email address accepted, in characters once trimmed (RFC
/// 5321's path limit less the brackets). Login checks it before anything
/// else, so that an over-long address is a field error, not a lookup.
pub const MAX_EMAIL_CHARS: usize = 254;

/// The longest id, code, key or slug a client may send, in characters:
/// the gateway refuses more (422 `TOO_LONG`) before anything is called.
pub const MAX_ID_CHARS: usize = 128;

/// The largest price a feed or an internal route may set, in minor units
/// (a billion in a two-decimal currency): a cart's lines (100 at most, 99
/// of each) then total far inside 64 bits.
pub const MAX_CENT_AMOUNT: i64 = 100_000_000_000;

/// A discount code: 1 to `MAX_CODE_CHARS` ASCII letters, digits, `-`, `_`
/// or `.` (what a shopper can type from a flyer, and a promotions
/// document may define), compared without case.
pub const MAX_CODE_CHARS: usize = 64;
pub const CODE_PATTERN: &str = "^[A-Za-z0-9._-]{1,64}$";

pub fn is_discount_code(code: &str) -> bool {
    (1..=MAX_CODE_CHARS).contains(&code.len())
        && code
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// The most product ids one batch lookup (`GetProducts`) takes: a cart's
/// lines fit (`MAX_CART_LINES`, 100 by default); more are asked in turn.
pub const MAX_BATCH_PRODUCTS: usize = 250;

/// The shop's own locale: what a request without one is answered in, the
/// end of every content fallback chain, and the names listings sort by.
pub const DEFAULT_LOCALE: &str = "en-AU";

const PRODUCT: [(ProductStatus, &str); 3] = [
    (ProductStatus::Active, "active"),
    (ProductStatus::Inactive, "inactive"),
    (ProductStatus::Discontinued, "discontinued"),
];

/// Every product status name, in the order the contract lists them.
pub const PRODUCT_STATUSES: [&str; 3] = [PRODUCT[0].1, PRODUCT[1].1, PRODUCT[2].1];

const ORDER: [(OrderStatus, &str); 5] = [
    (OrderStatus::Confirmed, "CONFIRMED"),
    (OrderStatus::Processing, "PROCESSING"),
    (OrderStatus::Shipped, "SHIPPED"),
    (OrderStatus::Delivered, "DELIVERED"),
    (OrderStatus::Cancelled, "CANCELLED"),
];

/// Every order status name, in lifecycle order.
pub const ORDER_STATUSES: [&str; 5] = [ORDER[0].1, ORDER[1].1, ORDER[2].1, ORDER[3].1, ORDER[4].1];

/// A product status as the contract names it. Unset (proto3's default)
/// or a value this build does not know reads as `active`, everywhere:
/// what a listing shows is what its filters match.
pub fn product_status(status: i32) -> &'static str {
    PRODUCT
        .iter()
        .find(|(s, _)| *s as i32 == status)
        .map_or(PRODUCT[0].1, |(_, name)| name)
}

/// An order status as the contract names it; unset or unknown reads as
/// `CONFIRMED`, the state every order starts in.
pub fn order_status(status: i32) -> &'static str {
    ORDER
        .iter()
        .find(|(s, _)| *s as i32 == status)
        .map_or(ORDER[0].1, |(_, name)| name)
}

/// The order status a contract name stands for.
pub fn parse_order_status(name: &str) -> Option<OrderStatus> {
    ORDER.iter().find(|(_, n)| *n == name).map(|(s, _)| *s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknowns_have_one_reading() {
        for (status, name) in ORDER {
            assert_eq!(order_status(status as i32), name);
            assert_eq!(parse_order_status(name), Some(status));
        }
        for (status, name) in PRODUCT {
            assert_eq!(product_status(status as i32), name);
        }
        assert_eq!(product_status(0), "active");
        assert_eq!(product_status(99), "active");
        assert_eq!(order_status(0), "CONFIRMED");
        assert_eq!(parse_order_status("confirmed"), None);
    }
}
