//! The `storefront.catalog.v1.CatalogService` gRPC implementation.

use std::sync::Arc;

use storefront_common::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_common::query;
use storefront_proto::catalog::v1::catalog_service_server::CatalogService;
use storefront_proto::catalog::v1::{
    Category, CategoryTree, Collection, GetCategoryRequest, GetCategoryTreeRequest,
    GetCollectionRequest, GetProductRequest, ListCategoriesRequest, ListCategoriesResponse,
    ListCollectionsRequest, ListCollectionsResponse, ListProductsRequest, ListProductsResponse,
    Product, Variant,
};
use storefront_proto::common::v1::Money;
use tonic::{Request, Response, Status};

use crate::store::{
    CURRENCIES, Catalog, CategorySchema, CollectionSchema, NamedField, ProductField, ProductSchema,
};

#[derive(Clone)]
pub struct CatalogApi {
    catalog: Arc<Catalog>,
}

impl CatalogApi {
    pub fn new(catalog: Arc<Catalog>) -> Self {
        Self { catalog }
    }
}

fn currency(code: &str) -> Result<&'static str, ServiceError> {
    if code.is_empty() {
        return Ok(CURRENCIES[0]);
    }
    CURRENCIES
        .iter()
        .copied()
        .find(|c| *c == code)
        .ok_or_else(|| {
            let message = format!("currency must be one of {}", CURRENCIES.join(", "));
            ServiceError::new(
                ErrorKind::BadRequest,
                "INVALID_QUERY_PARAMETER",
                message.clone(),
            )
            .with_violation(FieldViolation::new("currency", "INVALID_VALUE", message))
        })
}

fn priced(variant: &Variant, currency: &str) -> Variant {
    let mut v = variant.clone();
    v.price = v
        .prices
        .iter()
        .find(|m| m.currency_code == currency)
        .cloned();
    v
}

/// A product in the requested currency; `detail` keeps all variants, the
/// list view carries the master variant only.
fn view(p: &Product, currency: &str, detail: bool) -> Product {
    let master_variant = p.master_variant.as_ref().map(|v| priced(v, currency));
    Product {
        meta: p.meta.clone(),
        key: p.key.clone(),
        name: p.name.clone(),
        description: p.description.clone(),
        slug: p.slug.clone(),
        brand: p.brand.clone(),
        category_ids: p.category_ids.clone(),
        status: p.status,
        featured: p.featured,
        popularity: p.popularity,
        in_stock: p.in_stock,
        price: master_variant.as_ref().and_then(|v| v.price.clone()),
        variants: if detail {
            p.variants.iter().map(|v| priced(v, currency)).collect()
        } else {
            Vec::new()
        },
        master_variant,
        media: p.media.clone(),
    }
}

fn default_money(currency: &str) -> Money {
    Money {
        currency_code: currency.to_string(),
        cent_amount: 0,
        fraction_digits: 2,
    }
}

#[tonic::async_trait]
impl CatalogService for CatalogApi {
    async fn list_products(
        &self,
        request: Request<ListProductsRequest>,
    ) -> Result<Response<ListProductsResponse>, Status> {
        let req = request.into_inner();
        let currency = currency(&req.currency_code)?;
        let query = req.query.unwrap_or_default();
        let page = query::run::<ProductSchema>(
            &self.catalog.products,
            &query,
            &currency,
            &[(ProductField::Key, false)],
        )?;
        let products = page
            .items
            .iter()
            .map(|p| view(p, currency, false))
            .collect();
        Ok(Response::new(ListProductsResponse {
            page: Some(page.info),
            products,
        }))
    }

    async fn get_product(
        &self,
        request: Request<GetProductRequest>,
    ) -> Result<Response<Product>, Status> {
        let req = request.into_inner();
        let currency = currency(&req.currency_code)?;
        let product = self
            .catalog
            .product(&req.product_id)
            .ok_or_else(|| ServiceError::not_found("product", &req.product_id))?;
        let mut product = view(product, currency, true);
        if product.price.is_none() {
            product.price = Some(default_money(currency));
        }
        Ok(Response::new(product))
    }

    async fn list_categories(
        &self,
        request: Request<ListCategoriesRequest>,
    ) -> Result<Response<ListCategoriesResponse>, Status> {
        let query = request.into_inner().query.unwrap_or_default();
        let page = query::run::<CategorySchema>(
            &self.catalog.categories,
            &query,
            &(),
            &[(NamedField::Position, false)],
        )?;
        let categories = page.items.into_iter().cloned().collect();
        Ok(Response::new(ListCategoriesResponse {
            page: Some(page.info),
            categories,
        }))
    }

    async fn get_category(
        &self,
        request: Request<GetCategoryRequest>,
    ) -> Result<Response<Category>, Status> {
        let id = request.into_inner().category_id;
        let category = self
            .catalog
            .category(&id)
            .ok_or_else(|| ServiceError::not_found("category", &id))?;
        Ok(Response::new(category.clone()))
    }

    async fn get_category_tree(
        &self,
        _request: Request<GetCategoryTreeRequest>,
    ) -> Result<Response<CategoryTree>, Status> {
        Ok(Response::new(self.catalog.tree.clone()))
    }

    async fn list_collections(
        &self,
        request: Request<ListCollectionsRequest>,
    ) -> Result<Response<ListCollectionsResponse>, Status> {
        let query = request.into_inner().query.unwrap_or_default();
        let page = query::run::<CollectionSchema>(
            &self.catalog.collections,
            &query,
            &(),
            &[(NamedField::Position, false)],
        )?;
        let collections = page.items.into_iter().cloned().collect();
        Ok(Response::new(ListCollectionsResponse {
            page: Some(page.info),
            collections,
        }))
    }

    async fn get_collection(
        &self,
        request: Request<GetCollectionRequest>,
    ) -> Result<Response<Collection>, Status> {
        let id = request.into_inner().collection_id;
        let collection = self
            .catalog
            .collection(&id)
            .ok_or_else(|| ServiceError::not_found("collection", &id))?;
        Ok(Response::new(collection.clone()))
    }
}
