//! OpenAPI `links`: from the answer that creates a resource to the
//! operations that use its id, so a generated client (and the stateful
//! contract run) can follow a shopper's path: cart -> line items ->
//! checkout -> confirm -> order, and the address book.

use serde_json::{Value, json};
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::{OpenApi, RefOr};

/// (operation, status, link name, target operation, parameters, body).
type LinkSpec = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
    Option<fn() -> Value>,
);

const CART_ID: &[(&str, &str)] = &[("cartId", "$response.body#/id")];
const LINE: &[(&str, &str)] = &[
    ("cartId", "$response.body#/id"),
    ("lineItemId", "$response.body#/lineItems/0/id"),
];
const SESSION: &[(&str, &str)] = &[("sessionId", "$response.body#/id")];
const ADDRESS: &[(&str, &str)] = &[
    ("customerId", "$request.path.customerId"),
    ("addressId", "$response.body#/id"),
];
const ORDER: &[(&str, &str)] = &[("orderId", "$response.body#/orderId")];
const LISTED_ORDER: &[(&str, &str)] = &[("orderId", "$response.body#/results/0/id")];
const SELF_ORDER: &[(&str, &str)] = &[("orderId", "$response.body#/id")];

fn checkout_of_cart() -> Value {
    json!({ "cartId": "$response.body#/id" })
}

fn checkout_to_address() -> Value {
    json!({ "shippingAddressId": "$response.body#/id" })
}

const LINKS: &[LinkSpec] = &[
    ("create_cart", "201", "GetCart", "get_cart", CART_ID, None),
    (
        "create_cart",
        "201",
        "UpdateCart",
        "update_cart",
        CART_ID,
        None,
    ),
    (
        "create_cart",
        "201",
        "DeleteCart",
        "delete_cart",
        CART_ID,
        None,
    ),
    (
        "create_cart",
        "201",
        "AddLineItem",
        "add_line_item",
        CART_ID,
        None,
    ),
    (
        "add_line_item",
        "200",
        "UpdateLineItem",
        "update_line_item",
        LINE,
        None,
    ),
    (
        "add_line_item",
        "200",
        "RemoveLineItem",
        "remove_line_item",
        LINE,
        None,
    ),
    (
        "add_line_item",
        "200",
        "Checkout",
        "create_checkout",
        &[],
        Some(checkout_of_cart),
    ),
    (
        "create_address",
        "201",
        "GetAddress",
        "get_address",
        ADDRESS,
        None,
    ),
    (
        "create_address",
        "201",
        "ReplaceAddress",
        "replace_address",
        ADDRESS,
        None,
    ),
    (
        "create_address",
        "201",
        "DeleteAddress",
        "delete_address",
        ADDRESS,
        None,
    ),
    (
        "create_address",
        "201",
        "CheckoutTo",
        "create_checkout",
        &[],
        Some(checkout_to_address),
    ),
    (
        "create_checkout",
        "201",
        "GetCheckout",
        "get_checkout",
        SESSION,
        None,
    ),
    (
        "create_checkout",
        "201",
        "Pay",
        "pay_checkout",
        SESSION,
        None,
    ),
    (
        "create_checkout",
        "201",
        "Confirm",
        "confirm_checkout",
        SESSION,
        None,
    ),
    (
        "confirm_checkout",
        "200",
        "GetOrder",
        "get_order",
        ORDER,
        None,
    ),
    (
        "list_orders",
        "200",
        "GetOrder",
        "get_order",
        LISTED_ORDER,
        None,
    ),
    (
        "get_order",
        "200",
        "UpdateOrder",
        "update_order",
        SELF_ORDER,
        None,
    ),
];

/// Adds every link in `LINKS` to the response it starts from.
pub fn add(doc: &mut OpenApi) {
    for &(from, status, name, to, parameters, body) in LINKS {
        let response = doc
            .paths
            .paths
            .values_mut()
            .flat_map(|item| {
                [
                    &mut item.get,
                    &mut item.post,
                    &mut item.put,
                    &mut item.delete,
                ]
            })
            .flatten()
            .filter(|op| op.operation_id.as_deref() == Some(from))
            .find_map(|op| op.responses.responses.get_mut(status));
        let Some(RefOr::T(response)) = response else {
            continue;
        };
        let mut link = LinkBuilder::new().operation_id(to);
        for &(parameter, expression) in parameters {
            link = link.parameter(parameter, expression);
        }
        link = link.request_body(body.map(|b| b()));
        response
            .links
            .insert(name.to_string(), RefOr::T(link.build()));
    }
}
