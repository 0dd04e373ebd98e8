//! Gateway handlers against fake downstreams that record what they are asked:
//! the translation of a REST query into the gRPC message, checked in
//! milliseconds without a whole mesh (over real HTTP and real gRPC).

use std::pin::Pin;
use std::sync::{Arc, Mutex};

use storefront_gateway::GatewayConfig;
use storefront_gateway::config::dev_identity_url;
use storefront_platform::env::EnvReader;
use storefront_platform::identity::dev_issuer::{DevIssuer, JWKS_PATH};
use storefront_platform::store::Store;

use storefront_proto::catalog::v1::catalog_service_server::{CatalogService, CatalogServiceServer};
use storefront_proto::catalog::v1::*;
use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{FilterOperator, PageInfo, SortDirection};
use storefront_proto::search::v1::search_service_server::{SearchService, SearchServiceServer};
use storefront_proto::search::v1::{
    ReindexRequest, ReindexResponse, SearchRequest, SearchResponse, SuggestRequest, SuggestResponse,
};
use tokio::net::TcpListener;
use tokio_stream::Stream;
use tokio_util::sync::CancellationToken;
use tonic::service::Routes;
use tonic::{Request, Response, Status};

use crate::helpers::Reply;

// The lone gateway these tests run against: no mesh, only an issuer.

/// A dev identity issuer of its own: all a lone gateway and catalog need
/// of a mesh. Stops when dropped.
struct Issuer {
    url: String,
    _stop: tokio_util::sync::DropGuard,
}

async fn issuer() -> Issuer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    let dev = DevIssuer::generate(std::time::Duration::from_secs(3600)).unwrap();
    tokio::spawn(dev.serve(listener, stop.clone()));
    Issuer {
        url,
        _stop: stop.drop_guard(),
    }
}

/// A gateway alone whose catalog is at `catalog_url`, with a short
/// deadline; identity from `issuer_url`; `extra` on top of its environment.
async fn gateway_with(
    catalog_url: &str,
    issuer_url: &str,
    extra: &[(&str, &str)],
) -> (String, CancellationToken) {
    let mut env = EnvReader::from_pairs([
        ("CATALOG_URL", catalog_url.to_string()),
        ("IDENTITY_TOKEN_URL", dev_identity_url(issuer_url)),
        ("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}")),
        ("GRPC_TIMEOUT_MS", "400".to_string()),
    ]);
    for (k, v) in extra {
        env.set(k, *v);
    }
    let config = GatewayConfig::from_env(&env).unwrap();
    let public = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let internal = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", public.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(storefront_gateway::serve(
        config,
        Store::memory(),
        public,
        internal,
        stop.clone(),
    ));
    (base, stop)
}

async fn send(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    Reply {
        status,
        headers,
        body,
    }
}

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

/// A fake on a loopback port of its own; its URL.
async fn serve(fake: tonic::service::Routes) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tokio::spawn(
        tonic::transport::Server::builder()
            .add_routes(fake)
            .serve_with_incoming(incoming),
    );
    url
}

#[tokio::test]
async fn a_product_listing_query_becomes_one_list_query() {
    let issuer = issuer().await;
    let fake = Recording::default();
    let catalog = serve(Routes::new(CatalogServiceServer::new(fake.clone()))).await;
    let (base, stop) = gateway_with(&catalog, &issuer.url, &[]).await;
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

/// Answers every search with an empty page and keeps what it was asked.
#[derive(Clone, Default)]
struct RecordingSearch(Arc<Mutex<Vec<SearchRequest>>>);

#[tonic::async_trait]
impl SearchService for RecordingSearch {
    async fn search(
        &self,
        request: Request<SearchRequest>,
    ) -> Result<Response<SearchResponse>, Status> {
        self.0.lock().unwrap().push(request.into_inner());
        Ok(Response::new(SearchResponse {
            page: Some(PageInfo::default()),
            ..Default::default()
        }))
    }
    async fn suggest(
        &self,
        _: Request<SuggestRequest>,
    ) -> Result<Response<SuggestResponse>, Status> {
        unused()
    }
    async fn reindex(
        &self,
        _: Request<ReindexRequest>,
    ) -> Result<Response<ReindexResponse>, Status> {
        unused()
    }
}

#[tokio::test]
async fn a_search_carries_its_text_locale_currency_and_filters() {
    let issuer = issuer().await;
    let fake = RecordingSearch::default();
    let url = serve(Routes::new(SearchServiceServer::new(fake.clone()))).await;
    let extra = [("SEARCH_URL", url.as_str())];
    let (base, stop) = gateway_with("http://127.0.0.1:9", &issuer.url, &extra).await;
    let reply = send(
        reqwest::Client::new()
            .get(format!(
                "{base}/search?query=%20red%20shoes%20&locale=de-DE&currency=NZD&brand=Acme&limit=3"
            ))
            .header("X-Api-Version", "v1.0"),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let asked = fake.0.lock().unwrap().pop().expect("one call to search");
    assert_eq!(
        (
            asked.text.as_str(),
            asked.locale.as_str(),
            asked.currency_code.as_str()
        ),
        ("red shoes", "de-DE", "NZD"),
        "the text trimmed, the rest as sent"
    );
    let query = asked.query.unwrap();
    assert_eq!(query.page.map(|p| p.limit), Some(3));
    assert!(query.sort.is_empty(), "no sort: ranked by relevance");
    let filters: Vec<(&str, Option<Kind>)> = query
        .filters
        .iter()
        .map(|f| (f.field.as_str(), f.value.clone().and_then(|v| v.kind)))
        .collect();
    assert_eq!(filters, [("brand", Some(Kind::Text("Acme".into())))]);
    stop.cancel();
}
