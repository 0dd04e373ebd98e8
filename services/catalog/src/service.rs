//! The `storefront.catalog.v1.CatalogService` gRPC implementation. Reads
//! hold the catalog's read lock only while they compute their answer.

use std::pin::Pin;
use std::sync::{Arc, RwLock, RwLockReadGuard};

use futures::Stream;
use storefront_common::catalog::{ProductField, ProductSchema, currency, default_money, view};
use storefront_common::error::ServiceError;
use storefront_common::query;
use storefront_proto::catalog::v1::catalog_service_server::CatalogService;
use storefront_proto::catalog::v1::*;
use tonic::{Request, Response, Status};

use crate::store::{Catalog, CategorySchema, CollectionSchema, NamedField};

/// Products per export batch unless asked otherwise.
const EXPORT_BATCH: usize = 500;

#[derive(Clone)]
pub struct CatalogApi {
    catalog: Arc<RwLock<Catalog>>,
}

type Reply<T> = Result<Response<T>, Status>;

impl CatalogApi {
    pub fn new(catalog: Catalog) -> Self {
        Self {
            catalog: Arc::new(RwLock::new(catalog)),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|p| p.into_inner())
    }
}

#[tonic::async_trait]
impl CatalogService for CatalogApi {
    async fn list_products(
        &self,
        request: Request<ListProductsRequest>,
    ) -> Reply<ListProductsResponse> {
        let req = request.into_inner();
        let currency = currency(&req.currency_code)?;
        let query = req.query.unwrap_or_default();
        let catalog = self.read();
        let page = query::run::<ProductSchema>(
            &catalog.products,
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

    async fn get_product(&self, request: Request<GetProductRequest>) -> Reply<Product> {
        let req = request.into_inner();
        let currency = currency(&req.currency_code)?;
        let catalog = self.read();
        let product = catalog
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
    ) -> Reply<ListCategoriesResponse> {
        let query = request.into_inner().query.unwrap_or_default();
        let catalog = self.read();
        let page = query::run::<CategorySchema>(
            &catalog.categories,
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

    async fn get_category(&self, request: Request<GetCategoryRequest>) -> Reply<Category> {
        let id = request.into_inner().category_id;
        let catalog = self.read();
        let category = catalog
            .category(&id)
            .ok_or_else(|| ServiceError::not_found("category", &id))?;
        Ok(Response::new(category.clone()))
    }

    async fn get_category_tree(
        &self,
        _request: Request<GetCategoryTreeRequest>,
    ) -> Reply<CategoryTree> {
        Ok(Response::new(self.read().tree.clone()))
    }

    async fn list_collections(
        &self,
        request: Request<ListCollectionsRequest>,
    ) -> Reply<ListCollectionsResponse> {
        let query = request.into_inner().query.unwrap_or_default();
        let catalog = self.read();
        let page = query::run::<CollectionSchema>(
            &catalog.collections,
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

    async fn get_collection(&self, request: Request<GetCollectionRequest>) -> Reply<Collection> {
        let id = request.into_inner().collection_id;
        let catalog = self.read();
        let collection = catalog
            .collection(&id)
            .ok_or_else(|| ServiceError::not_found("collection", &id))?;
        Ok(Response::new(collection.clone()))
    }

    type ExportProductsStream = Pin<Box<dyn Stream<Item = Result<ProductBatch, Status>> + Send>>;

    async fn export_products(
        &self,
        request: Request<ExportProductsRequest>,
    ) -> Reply<Self::ExportProductsStream> {
        let size = match request.into_inner().batch_size as usize {
            0 => EXPORT_BATCH,
            n => n.min(5_000),
        };
        // A consistent snapshot: list views (no variant list), all prices.
        let (version, products): (u64, Vec<Product>) = {
            let catalog = self.read();
            let list = catalog
                .products
                .iter()
                .map(|p| Product {
                    variants: Vec::new(),
                    ..p.clone()
                })
                .collect();
            (catalog.version, list)
        };
        let batches: Vec<Result<ProductBatch, Status>> = products
            .chunks(size)
            .map(|chunk| {
                Ok(ProductBatch {
                    products: chunk.to_vec(),
                    catalog_version: version,
                })
            })
            .collect();
        Ok(Response::new(Box::pin(futures::stream::iter(batches))))
    }

    async fn get_catalog_info(&self, _: Request<GetCatalogInfoRequest>) -> Reply<CatalogInfo> {
        let catalog = self.read();
        Ok(Response::new(CatalogInfo {
            version: catalog.version,
            product_count: catalog.products.len() as u64,
        }))
    }

    async fn update_product(&self, request: Request<UpdateProductRequest>) -> Reply<Product> {
        let req = request.into_inner();
        let mut catalog = self.catalog.write().unwrap_or_else(|p| p.into_inner());
        let product = catalog
            .product_mut(&req.product_id)
            .ok_or_else(|| ServiceError::not_found("product", &req.product_id))?;
        if req.name.is_some() {
            product.name = req.name;
        }
        if req.description.is_some() {
            product.description = req.description;
        }
        if let Some(meta) = product.meta.as_mut() {
            meta.version += 1;
            meta.last_modified_at = Some(storefront_common::time::now());
        }
        let updated = product.clone();
        catalog.version += 1;
        Ok(Response::new(updated))
    }
}
