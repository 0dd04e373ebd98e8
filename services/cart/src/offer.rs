//! A variant of a product as a cart line: at its price in the cart's
//! currency, with the stock it may not exceed, or refused naming the field
//! (not for sale, unknown, out of stock, not sold in the currency).

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError, excerpt};
use storefront_proto::cart::v1::Cart;
use storefront_proto::catalog::v1::{Product, ProductStatus};
use storefront_proto::common::v1::LineItem;
use storefront_proto::error::codes;

/// 422 naming `field`.
pub(crate) fn invalid(field: &str, code: &'static str, message: String) -> ServiceError {
    ServiceError::new(
        ErrorKind::Validation,
        codes::VALIDATION_ERROR,
        message.clone(),
    )
    .with_violation(FieldViolation::new(field, code, message))
}

/// A product id the catalog does not know.
pub(crate) fn no_such_product(product_id: &str) -> ServiceError {
    invalid(
        "productId",
        codes::INVALID_VALUE,
        format!("product {} does not exist", excerpt(product_id)),
    )
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
            codes::INVALID_VALUE,
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
            codes::INVALID_VALUE,
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
                codes::INVALID_VALUE,
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
                codes::INVALID_VALUE,
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

pub(crate) fn product_id(product: &Product) -> &str {
    product.meta.as_ref().map_or("", |m| m.id.as_str())
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
