//! Gateway handlers against a fake catalog that records what it is asked:
//! the translation of a REST query into the gRPC message, checked in
//! milliseconds without a whole mesh (over real HTTP and real gRPC).

use std::pin::Pin;
use std::sync::{Arc, Mutex};

use storefront_proto::catalog::v1::catalog_service_server::{CatalogService, CatalogServiceServer};
use storefront_proto::catalog::v1::*;
use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{FilterOperator, PageInfo, SortDirection};
use tokio::net::TcpListener;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::resilience::{gateway_with, issuer, send};

/// Answers every listing with an empty page and keeps what it was asked.
#[derive(Clone, Default)]
struct Recording(Arc<Mutex<Vec<ListProductsRequest>>>);

fn unused<T>() -> Result<Response<T>, Status> {
    Err(Status::unimplemented("not part of this fake"))
}

#[tonic::async_trait]
impl CatalogService for Recording {
    type ExportProductsStream = Pin<Box<dyn Stream<Item = Result<ProductBatch, Status>> + Send>>;

    async fn list_products(
        &self,
        request: Request<ListProductsRequest>,
    ) -> Result<Response<ListProductsResponse>, Status> {
        let request = request.into_inner();
        let page = request
            .query
            .as_ref()
            .and_then(|q| q.page)
            .unwrap_or_default();
        self.0.lock().unwrap().push(request);
        Ok(Response::new(ListProductsResponse {
            page: Some(PageInfo {
                limit: page.limit,
                offset: page.offset,
                count: 0,
                total: 0,
            }),
            ..Default::default()
        }))
    }
    async fn get_product(
        &self,
        _: Request<GetProductRequest>,
    ) -> Result<Response<Product>, Status> {
        unused()
    }
    async fn list_categories(
        &self,
        _: Request<ListCategoriesRequest>,
    ) -> Result<Response<ListCategoriesResponse>, Status> {
        unused()
    }
    async fn get_category(
        &self,
        _: Request<GetCategoryRequest>,
    ) -> Result<Response<Category>, Status> {
        unused()
    }
    async fn get_category_tree(
        &self,
        _: Request<GetCategoryTreeRequest>,
    ) -> Result<Response<CategoryTree>, Status> {
        unused()
    }
    async fn list_collections(
        &self,
        _: Request<ListCollectionsRequest>,
    ) -> Result<Response<ListCollectionsResponse>, Status> {
        unused()
    }
    async fn get_collection(
        &self,
        _: Request<GetCollectionRequest>,
    ) -> Result<Response<Collection>, Status> {
        unused()
    }
    async fn export_products(
        &self,
        _: Request<ExportProductsRequest>,
    ) -> Result<Response<Self::ExportProductsStream>, Status> {
        unused()
    }
    async fn get_catalog_info(
        &self,
        _: Request<GetCatalogInfoRequest>,
    ) -> Result<Response<CatalogInfo>, Status> {
        unused()
    }
    async fn update_product(
        &self,
        _: Request<UpdateProductRequest>,
    ) -> Result<Response<Product>, Status> {
        unused()
    }
}

/// The fake on a loopback port of its own; its URL.
async fn serve(fake: Recording) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_service(CatalogServiceServer::new(fake))
            .serve_with_incoming(incoming),
    );
    url
}

#[tokio::test]
async fn a_product_listing_query_becomes_one_list_query() {
    let issuer = issuer().await;
    let fake = Recording::default();
    let (base, stop) = gateway_with(&serve(fake.clone()).await, &issuer.url, &[]).await;
    let get = |query: &str| {
        send(
            reqwest::Client::new()
                .get(format!("{base}/products?{query}"))
                .header("X-Api-Version", "v1.0"),
        )
    };
    let reply = get(
        "brand=Acme&inStock=true&sort=price:desc&sort=name&limit=5&offset=10\
        &currency=NZD&filter[popularity[gte]]=3",
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        (&reply.body["limit"], &reply.body["offset"]),
        (&5.into(), &10.into())
    );

    let asked = fake
        .0
        .lock()
        .unwrap()
        .pop()
        .expect("one call to the catalog");
    assert_eq!(asked.currency_code, "NZD");
    let query = asked.query.unwrap();
    let page = query.page.unwrap();
    assert_eq!((page.limit, page.offset), (5, 10));
    let sort: Vec<(&str, SortDirection)> = query
        .sort
        .iter()
        .map(|s| (s.field.as_str(), s.direction()))
        .collect();
    assert_eq!(
        sort,
        [("price", SortDirection::Desc), ("name", SortDirection::Asc)]
    );
    let mut filters: Vec<(&str, FilterOperator, Option<Kind>)> = query
        .filters
        .iter()
        .map(|f| {
            (
                f.field.as_str(),
                f.operator(),
                f.value.clone().and_then(|v| v.kind),
            )
        })
        .collect();
    filters.sort_by_key(|f| f.0);
    assert_eq!(
        filters,
        [
            ("brand", FilterOperator::Eq, Some(Kind::Text("Acme".into()))),
            ("inStock", FilterOperator::Eq, Some(Kind::Boolean(true))),
            ("popularity", FilterOperator::Gte, Some(Kind::Integer(3))),
        ]
    );

    // A query the gateway refuses never reaches the catalog.
    get("sort=colour").await.error(400, "INVALID_SORT_FIELD");
    assert!(fake.0.lock().unwrap().is_empty());
    stop.cancel();
}
