//! What a cart's checkout reads of a product (`GetProductsRequest.prices_only`):
//! its meta, status and price, and each variant's id, SKU, price, prices in
//! the cart's currency and availability. Decoded from the stored bytes as
//! a view that names only those fields, so protobuf skips the rest (names,
//! descriptions, slugs, media, attributes) rather than building strings and
//! maps only to drop them: a checkout's open and confirm each read their
//! cart's products this way.

use storefront_domain::catalog::default_money;
use storefront_platform::error::ServiceError;
use storefront_proto::catalog::v1::{Availability, Product, Variant};
use storefront_proto::common::v1::{Money, ResourceMeta};

use crate::store::Catalog;

/// `storefront.catalog.v1.Product`, the fields an offer reads (same tags).
#[derive(Clone, PartialEq, prost::Message)]
struct OfferProduct {
    #[prost(message, optional, tag = "1")]
    meta: Option<ResourceMeta>,
    #[prost(int32, tag = "8")]
    status: i32,
    #[prost(message, optional, tag = "13")]
    master_variant: Option<OfferVariant>,
    #[prost(message, repeated, tag = "14")]
    variants: Vec<OfferVariant>,
}

/// `storefront.catalog.v1.Variant`, the fields an offer reads.
#[derive(Clone, PartialEq, prost::Message)]
struct OfferVariant {
    #[prost(uint32, tag = "1")]
    id: u32,
    #[prost(string, tag = "2")]
    sku: String,
    #[prost(message, repeated, tag = "5")]
    prices: Vec<Money>,
    #[prost(message, optional, tag = "6")]
    availability: Option<Availability>,
}

/// The variant's price in `currency`, if it has one.
fn price(prices: &[Money], currency: &str) -> Option<Money> {
    prices.iter().find(|m| m.currency_code == currency).cloned()
}

/// Row `row`'s product as a checkout prices it in `currency`: the whole
/// product priced there, less what a checkout does not read.
pub(crate) fn offer(catalog: &Catalog, row: u32, currency: &str) -> Result<Product, ServiceError> {
    let bytes = catalog
        .products
        .encoded(row)
        .map_err(ServiceError::internal)?;
    let view = <OfferProduct as prost::Message>::decode(bytes.as_slice())
        .map_err(|e| ServiceError::internal(format!("a stored product does not decode: {e}")))?;
    let variant = |v: OfferVariant| {
        let price = price(&v.prices, currency);
        Variant {
            id: v.id,
            sku: v.sku,
            prices: price.iter().cloned().collect(),
            price,
            availability: v.availability,
            ..Variant::default()
        }
    };
    let master = view.master_variant.as_ref();
    let price = master
        .and_then(|v| price(&v.prices, currency))
        .unwrap_or_else(|| default_money(currency));
    Ok(Product {
        meta: view.meta,
        status: view.status,
        price: Some(price),
        variants: view.variants.into_iter().map(variant).collect(),
        ..Product::default()
    })
}

#[cfg(test)]
#[path = "offer_tests.rs"]
mod tests;
