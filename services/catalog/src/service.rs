//! The `storefront.catalog.v1.CatalogService` gRPC implementation. Reads
//! take the current catalog version (an `Arc`) and never wait for a write;
//! a write builds the next version beside it and swaps it in.

use std::pin::Pin;

use futures::Stream;
use storefront_domain::catalog::{default_money, price_in, price_tail, priced_only};
use storefront_domain::query;
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::catalog::v1::catalog_service_server::CatalogService;
use storefront_proto::catalog::v1::*;
use storefront_proto::common::v1::ListQuery;
use storefront_proto::encoded::EncodedProduct;
use storefront_proto::names::MAX_BATCH_PRODUCTS;
use tonic::{Request, Response, Status};

use crate::edit::Change;
use crate::live::Live;
use crate::offer::offer;
use crate::shared::Shared;
use crate::store::{Catalog, CategorySchema, CollectionSchema, NamedField};
use crate::writes;

/// The tonic handler: it adapts the catalog's live state (`Live`), which
/// the writers take, to the gRPC service.
#[derive(Clone)]
pub struct CatalogApi(pub Live);

impl CatalogApi {
    pub fn new(catalog: Catalog, shared: Option<Shared>) -> Self {
        Self(Live::new(catalog, shared))
    }
}

impl std::ops::Deref for CatalogApi {
    type Target = Live;

    fn deref(&self) -> &Live {
        &self.0
    }
}

impl std::ops::DerefMut for CatalogApi {
    fn deref_mut(&mut self) -> &mut Live {
        &mut self.0
    }
}

type Reply<T> = Result<Response<T>, Status>;

/// Listings estimated to touch more records than this run on the CPU pool,
/// so that they never hold up cheap requests on the async workers; cheaper
/// ones are answered at once (a hand-off costs more than they do).
const INLINE_RECORDS: u64 = 20_000;

fn list_page(
    catalog: &Catalog,
    query: &ListQuery,
    currency: usize,
    compressed: bool,
) -> Result<ListProductsResponse, ServiceError> {
    let (info, rows) = catalog.listing.page(query, currency, &[("key", false)])?;
    let code = catalog.currencies.code(currency);
    let tail = |row: u32| price_tail(code, catalog.price(row, currency));
    let mut reply = ListProductsResponse {
        page: Some(info),
        ..Default::default()
    };
    if compressed {
        reply.dictionary_id = catalog.products.dictionary().id();
        reply.compressed = rows
            .iter()
            .map(|&row| {
                let (lz4, length) = catalog.shared_summary(row)?;
                Ok(CompressedProduct {
                    lz4,
                    length,
                    tail: tail(row).into(),
                })
            })
            .collect::<Result<_, ServiceError>>()?;
    } else {
        reply.products.encoded = rows
            .iter()
            .map(|&row| {
                Ok(EncodedProduct {
                    body: catalog.summary(row)?.into(),
                    tail: tail(row),
                })
            })
            .collect::<Result<_, ServiceError>>()?;
    }
    Ok(reply)
}

#[tonic::async_trait]
impl CatalogService for CatalogApi {
    async fn list_products(
        &self,
        request: Request<ListProductsRequest>,
    ) -> Reply<ListProductsResponse> {
        let req = request.into_inner();
        let catalog = self.read();
        let currency = catalog.currencies.resolve(&req.currency_code)?;
        let query = req.query.unwrap_or_default();
        let query = priced_only(query, &catalog.listing, currency);
        let compressed = req.compressed;
        let reply = if catalog.listing.estimate(&query, currency) > INLINE_RECORDS {
            storefront_platform::cpu::run(move || list_page(&catalog, &query, currency, compressed))
                .await?
        } else {
            list_page(&catalog, &query, currency, compressed)
        };
        Ok(Response::new(reply?))
    }

    async fn get_summary_dictionary(
        &self,
        request: Request<GetSummaryDictionaryRequest>,
    ) -> Reply<SummaryDictionary> {
        let id = request.into_inner().id;
        let dictionary = self.read().products.dictionary().clone();
        if dictionary.id() != id {
            // Ids are hashes: nothing of the caller's input is echoed.
            return Err(ServiceError::new(
                ErrorKind::NotFound,
                storefront_platform::error::codes::NOT_FOUND,
                "this catalog no longer holds that dictionary",
            )
            .into());
        }
        Ok(Response::new(SummaryDictionary {
            id,
            bytes: dictionary.bytes().clone(),
        }))
    }

    async fn get_product(&self, request: Request<GetProductRequest>) -> Reply<Product> {
        let req = request.into_inner();
        let catalog = self.read();
        let currency = catalog.currencies.resolve(&req.currency_code)?;
        let currency = catalog.currencies.code(currency);
        let row = catalog
            .product_row(&req.product_id)
            .ok_or_else(|| ServiceError::not_found("product", &req.product_id))?;
        Ok(Response::new(priced(&catalog, row, currency)?))
    }

    async fn get_products(
        &self,
        request: Request<GetProductsRequest>,
    ) -> Reply<GetProductsResponse> {
        let req = request.into_inner();
        if req.product_ids.len() > MAX_BATCH_PRODUCTS {
            return Err(ServiceError::new(
                ErrorKind::Validation,
                "TOO_MANY_IDS",
                format!("at most {MAX_BATCH_PRODUCTS} product ids at once"),
            )
            .into());
        }
        let catalog = self.read();
        let currency = catalog.currencies.resolve(&req.currency_code)?;
        let currency = catalog.currencies.code(currency);
        let read = if req.prices_only { offer } else { priced };
        let products = req
            .product_ids
            .iter()
            .filter_map(|id| catalog.product_row(id))
            .map(|row| read(&catalog, row, currency))
            .collect::<Result<_, _>>()?;
        Ok(Response::new(GetProductsResponse { products }))
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
        Ok(Response::new((*self.read().tree).clone()))
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

    type ExportProductsStream = crate::export::Batches;

    async fn export_products(
        &self,
        request: Request<ExportProductsRequest>,
    ) -> Reply<Self::ExportProductsStream> {
        Ok(Response::new(
            crate::export::batches(self.read(), request.into_inner()).await?,
        ))
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
        let id = req.product_id.clone();
        let next = self
            .change(move |current| {
                let row = current
                    .product_row(&req.product_id)
                    .ok_or_else(|| ServiceError::not_found("product", &req.product_id))?;
                let mut product = current.product(row)?;
                if req.name.is_some() {
                    product.name = req.name.clone();
                }
                if req.description.is_some() {
                    product.description = req.description.clone();
                }
                for update in &req.prices {
                    crate::writes::set_price(&mut product, update, &current.currencies)?;
                }
                Ok(vec![Change::Put {
                    product: Box::new(product),
                    expected: None,
                }])
            })
            .await?;
        let row = next
            .product_row(&id)
            .ok_or_else(|| ServiceError::not_found("product", &id))?;
        Ok(Response::new(next.product(row)?))
    }

    async fn put_product(&self, request: Request<PutProductRequest>) -> Reply<ChangeReply> {
        Ok(Response::new(
            writes::put_product(self, request.into_inner()).await?,
        ))
    }

    async fn delete_product(&self, request: Request<DeleteProductRequest>) -> Reply<ChangeReply> {
        Ok(Response::new(
            writes::delete_product(self, request.into_inner()).await?,
        ))
    }

    async fn set_stock(&self, request: Request<SetStockRequest>) -> Reply<ChangeReply> {
        Ok(Response::new(
            writes::set_stock(self, request.into_inner()).await?,
        ))
    }

    async fn import_feed(
        &self,
        request: Request<tonic::Streaming<FeedChunk>>,
    ) -> Reply<ImportReply> {
        Ok(Response::new(
            writes::import(self, request.into_inner()).await?,
        ))
    }

    type ExportFeedStream = Pin<Box<dyn Stream<Item = Result<FeedChunk, Status>> + Send>>;

    async fn export_feed(
        &self,
        request: Request<ExportFeedRequest>,
    ) -> Reply<Self::ExportFeedStream> {
        let req = request.into_inner();
        let acp = match req.format.as_str() {
            "" => None,
            "acp" if req.currency.len() == 3 => Some(crate::feed::acp::Target {
                currency: req.currency.to_ascii_uppercase(),
                locale: req.locale,
                product_url: req.product_url,
            }),
            _ => {
                return Err(Status::invalid_argument(
                    "format is empty or acp, with a currency",
                ));
            }
        };
        let catalog = self.read();
        let (send, chunks) = tokio::sync::mpsc::channel(8);
        tokio::task::spawn_blocking(move || writes::export(catalog, acp, send));
        let stream = tokio_stream::wrappers::ReceiverStream::new(chunks);
        Ok(Response::new(Box::pin(stream)))
    }

    async fn adjust_stock(&self, request: Request<AdjustStockRequest>) -> Reply<AdjustStockReply> {
        Ok(Response::new(
            crate::stock::adjust(self, request.into_inner()).await?,
        ))
    }

    async fn adjust_stock_batch(
        &self,
        request: Request<AdjustStockBatchRequest>,
    ) -> Reply<AdjustStockBatchReply> {
        let ops = request.into_inner().operations;
        let answers = crate::stock::adjust_all(self, ops).await?;
        let outcome = |answer: Result<AdjustStockReply, ServiceError>| match answer {
            Ok(reply) => AdjustStockOutcome {
                reply: Some(reply),
                ..Default::default()
            },
            Err(e) => AdjustStockOutcome {
                reply: None,
                error: Some(Status::from(e).into()),
            },
        };
        let outcomes = answers.into_iter().map(outcome).collect();
        Ok(Response::new(AdjustStockBatchReply { outcomes }))
    }

    async fn list_changes(&self, request: Request<ListChangesRequest>) -> Reply<ChangesReply> {
        let since = request.into_inner().since_version;
        let mut reply = writes::changes_since(&self.read(), since);
        reply.reindex_generation = self.reindex_generation().await;
        Ok(Response::new(reply))
    }

    async fn request_reindex(
        &self,
        _: Request<RequestReindexRequest>,
    ) -> Reply<RequestReindexReply> {
        Ok(Response::new(RequestReindexReply {
            reindex_generation: self.raise_reindex_generation().await?,
        }))
    }
}

/// Row `row`'s product, its price picked in `currency` (0 when it has
/// none there: the cart refuses such a variant).
fn priced(catalog: &Catalog, row: u32, currency: &str) -> Result<Product, ServiceError> {
    let mut product = catalog.product(row)?;
    price_in(&mut product, currency);
    if product.price.is_none() {
        product.price = Some(default_money(currency));
    }
    Ok(product)
}
