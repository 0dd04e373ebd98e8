//! The document's groups, in the order a storefront meets them, each
//! with what it holds: how the reference at `/docs` is organised.

use utoipa::openapi::OpenApi;
use utoipa::openapi::tag::TagBuilder;

const TAGS: [(&str, &str); 11] = [
    (
        "Products",
        "The catalog: products, their variants, prices, stock and media.",
    ),
    (
        "Categories",
        "The category tree, each category, and collections (curated product lists).",
    ),
    (
        "Search",
        "Full-text search with typo tolerance, facets, and suggestions as the shopper types.",
    ),
    (
        "Markets",
        "The markets a shop sells in: currencies, locales, tax and shipping.",
    ),
    ("Content", "Banners, the footer and pages, per locale."),
    (
        "Authentication",
        "Customer and guest sessions: log in, refresh, log out.",
    ),
    (
        "Customers",
        "Accounts, addresses, preferences, sessions and passwords.",
    ),
    (
        "Cart",
        "Carts, their lines and discount codes; promotions; checkout sessions that hold stock.",
    ),
    (
        "Payments",
        "Paying a checkout, the test provider's 3-D Secure page, and providers' webhooks.",
    ),
    ("Orders", "A customer's orders, in two versions."),
    (
        "Health",
        "Liveness, readiness, this document and its reference page.",
    ),
];

/// Every group the operations use, described, in `TAGS`' order.
pub fn describe(doc: &mut OpenApi) {
    let tags = TAGS
        .iter()
        .map(|(name, description)| {
            TagBuilder::new()
                .name(*name)
                .description(Some(*description))
                .build()
        })
        .collect();
    doc.tags = Some(tags);
}
