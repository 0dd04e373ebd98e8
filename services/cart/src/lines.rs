//! Lines priced by the catalog: a product fetched (one, or a cart's worth
//! in one call) and a variant of it made a line at its price in the cart's
//! currency, with the stock it may not exceed.

use std::collections::HashMap;
use std::sync::Arc;

use storefront_platform::client::call::CallError;
use storefront_platform::error::{ServiceError, excerpt};
use storefront_proto::cart::v1::Cart;
use storefront_proto::catalog::v1::{
    GetProductRequest, GetProductsRequest, Product, ProductStatus,
};
use storefront_proto::common::v1::LineItem;
use storefront_proto::names::MAX_BATCH_PRODUCTS;

use crate::carts::{Carts, invalid};

/// A product id the catalog does not know.
pub(crate) fn no_such_product(product_id: &str) -> ServiceError {
    invalid(
        "productId",
        "INVALID_VALUE",
        format!("product {} does not exist", excerpt(product_id)),
    )
}

/// The catalog failing, in words that never quote the client.
fn catalog_unavailable(e: &CallError) -> ServiceError {
    e.unavailable("CATALOG_UNAVAILABLE", "the catalog is unreachable")
}

/// Variant `variant_id` of `product` as a line (quantity 0, a new id) at
/// its price in `currency`, and its stock; refused when the product is not
/// for sale, the variant is unknown, out of stock or not sold in `currency`.
pub(crate) fn line_of(
    product: &Product,
    variant_id: u32,
    currency: &str,
) -> Result<(LineItem, u32), ServiceError> {
    let (line, stock) = priced(product, variant_id, currency)?;
    if stock == 0 {
        return Err(invalid(
            "variantId",
            "INVALID_VALUE",
            "this variant is out of stock".into(),
        ));
    }
    Ok((line, stock))
}

/// [`line_of`] whatever the stock: checkout, where the stock a session
/// holds decides (its own hold is not in what is available).
pub(crate) fn priced(
    product: &Product,
    variant_id: u32,
    currency: &str,
) -> Result<(LineItem, u32), ServiceError> {
    if product.status != ProductStatus::Active as i32 {
        return Err(invalid(
            "productId",
            "INVALID_VALUE",
            "this product is not for sale".into(),
        ));
    }
    let variant = product
        .variants
        .iter()
        .find(|v| v.id == variant_id)
        .ok_or_else(|| {
            invalid(
                "variantId",
                "INVALID_VALUE",
                format!("variant {variant_id} does not exist"),
            )
        })?;
    let stock = variant.availability.map_or(0, |a| a.quantity);
    // A variant without a price in the cart's currency is not for sale in
    // it: never priced 0.
    let price = variant
        .prices
        .iter()
        .find(|p| p.currency_code == currency)
        .or(variant
            .price
            .as_ref()
            .filter(|p| p.currency_code == currency))
        .cloned()
        .ok_or_else(|| {
            invalid(
                "variantId",
                "INVALID_VALUE",
                format!("this variant is not sold in {currency}"),
            )
        })?;
    let line = LineItem {
        id: uuid::Uuid::new_v4().to_string(),
        product_id: product_id(product).to_string(),
        variant_id: variant.id,
        sku: variant.sku.clone(),
        name: product.name.clone(),
        quantity: 0,
        unit_price: Some(price),
        total_price: None,
        category_ids: product.category_ids.clone(),
    };
    Ok((line, stock))
}

/// The distinct products of `cart`'s lines.
pub(crate) fn product_ids(cart: &Cart) -> Vec<&str> {
    let mut ids: Vec<&str> = cart
        .line_items
        .iter()
        .map(|l| l.product_id.as_str())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn product_id(product: &Product) -> &str {
    product.meta.as_ref().map_or("", |m| m.id.as_str())
}

impl Carts {
    /// The product `product_id` as the catalog had it at most
    /// `CART_PRODUCT_CACHE_MS` ago, with its prices in every currency
    /// (`line_of` picks the cart's). A line add then costs no catalog call
    /// for a product added lately; checkout reads the catalog afresh
    /// (`products`) and reprices, so an older price never reaches an order.
    pub(crate) async fn product(&self, product_id: &str) -> Result<Arc<Product>, ServiceError> {
        if product_id.is_empty() {
            return Err(invalid(
                "productId",
                "REQUIRED",
                "productId is required".into(),
            ));
        }
        if let Some(product) = self.recent_products.get(product_id) {
            return Ok(product);
        }
        let message = GetProductRequest {
            product_id: product_id.to_string(),
            currency_code: String::new(),
        };
        match self.catalog.get_product(message).await {
            Ok(p) => {
                let product = Arc::new(p);
                self.recent_products.put(product_id, product.clone());
                Ok(product)
            }
            Err(CallError::Status(s)) if s.code() == tonic::Code::NotFound => {
                Err(no_such_product(product_id))
            }
            Err(e) => Err(catalog_unavailable(&e)),
        }
    }

    /// The line for variant `variant_id` of product `product_id` at the
    /// catalog's price in `currency`, and the stock.
    pub(crate) async fn priced_line(
        &self,
        product_id: &str,
        variant_id: u32,
        currency: &str,
    ) -> Result<(LineItem, u32), ServiceError> {
        line_of(&*self.product(product_id).await?, variant_id, currency)
    }

    /// The products of `ids` that exist, by id, priced in `currency`: one
    /// catalog call per `MAX_BATCH_PRODUCTS` ids.
    pub(crate) async fn products(
        &self,
        ids: &[&str],
        currency: &str,
    ) -> Result<HashMap<String, Product>, ServiceError> {
        let mut found = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(MAX_BATCH_PRODUCTS) {
            let message = GetProductsRequest {
                product_ids: chunk.iter().map(|id| id.to_string()).collect(),
                currency_code: currency.to_string(),
            };
            let reply = self
                .catalog
                .get_products(message)
                .await
                .map_err(|e| catalog_unavailable(&e))?;
            for product in reply.products {
                found.insert(product_id(&product).to_string(), product);
            }
        }
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use storefront_proto::catalog::v1::{Availability, Variant};
    use storefront_proto::common::v1::{Money, ResourceMeta};

    use super::*;

    fn product(status: ProductStatus, quantity: u32) -> Product {
        let aud = Money {
            currency_code: "AUD".into(),
            cent_amount: 1_250,
            fraction_digits: 2,
        };
        Product {
            meta: Some(ResourceMeta {
                id: "p-1".into(),
                ..Default::default()
            }),
            status: status as i32,
            variants: vec![Variant {
                id: 2,
                sku: "SKU-2".into(),
                prices: vec![aud],
                availability: Some(Availability {
                    in_stock: quantity > 0,
                    quantity,
                    held: 0,
                }),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    fn refusal(result: Result<(LineItem, u32), ServiceError>) -> (String, String) {
        let e = result.expect_err("refused");
        (e.violations[0].field.clone(), e.message)
    }

    #[test]
    fn a_variant_for_sale_is_a_line_at_its_price_with_its_stock() {
        let (line, stock) = line_of(&product(ProductStatus::Active, 7), 2, "AUD").unwrap();
        assert_eq!((line.product_id.as_str(), line.variant_id), ("p-1", 2));
        assert_eq!((line.sku.as_str(), line.quantity, stock), ("SKU-2", 0, 7));
        assert_eq!(line.unit_price.map(|m| m.cent_amount), Some(1_250));
    }

    #[test]
    fn what_cannot_be_bought_is_refused_by_field() {
        let active = product(ProductStatus::Active, 7);
        let cases = [
            (
                line_of(&product(ProductStatus::Inactive, 7), 2, "AUD"),
                "productId",
                "not for sale",
            ),
            (
                line_of(&active, 9, "AUD"),
                "variantId",
                "variant 9 does not exist",
            ),
            (
                line_of(&product(ProductStatus::Active, 0), 2, "AUD"),
                "variantId",
                "out of stock",
            ),
            (line_of(&active, 2, "NZD"), "variantId", "not sold in NZD"),
        ];
        for (result, field, words) in cases {
            let (got_field, message) = refusal(result);
            assert_eq!(got_field, field, "{message}");
            assert!(message.contains(words), "{message}");
        }
    }
}
