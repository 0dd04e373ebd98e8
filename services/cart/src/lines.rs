//! Lines priced by the catalog: a product fetched (one, or a cart's worth
//! in one call) and a variant of it made a line at its price in the cart's
//! currency, with the stock it may not exceed.

use std::collections::HashMap;
use std::sync::Arc;
use storefront_proto::error::codes;

use storefront_platform::client::call::CallError;
use storefront_platform::error::ServiceError;
use storefront_proto::catalog::v1::{GetProductRequest, GetProductsRequest, Product};
use storefront_proto::common::v1::LineItem;
use storefront_proto::names::MAX_BATCH_PRODUCTS;

use crate::carts::Carts;
use crate::offer::{invalid, line_of, no_such_product, product_id};

/// The catalog failing, in words that never quote the client.
fn catalog_unavailable(e: &CallError) -> ServiceError {
    e.unavailable(codes::CATALOG_UNAVAILABLE, "the catalog is unreachable")
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
                codes::REQUIRED,
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
        self.fetch(ids, currency, false).await
    }

    /// As `products`, each only as checkout prices it: status, variants'
    /// prices in `currency` and stock, no names or media
    /// (`GetProductsRequest.prices_only`; a catalog before it sends more).
    pub(crate) async fn prices(
        &self,
        ids: &[&str],
        currency: &str,
    ) -> Result<HashMap<String, Product>, ServiceError> {
        self.fetch(ids, currency, true).await
    }

    async fn fetch(
        &self,
        ids: &[&str],
        currency: &str,
        prices_only: bool,
    ) -> Result<HashMap<String, Product>, ServiceError> {
        let mut found = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(MAX_BATCH_PRODUCTS) {
            let message = GetProductsRequest {
                product_ids: chunk.iter().map(|id| id.to_string()).collect(),
                currency_code: currency.to_string(),
                prices_only,
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
