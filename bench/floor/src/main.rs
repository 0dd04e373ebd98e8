//! The floor of `bench/scale.sh`: what one request costs with nothing but
//! the frameworks. `GET /json` answers 20 product-like records (the
//! catalog's own list view, about 45 KB of JSON) from memory through axum
//! alone; `GET /hop` fetches the same 20 records from a tonic server on
//! loopback and answers them as JSON: no middleware, no indexes, no
//! checks. Usage: `floor 127.0.0.1:PORT`.

use std::sync::Arc;

use axum::extract::State;
use axum::routing::get;
use axum::serve::ListenerExt;
use axum::{Json, Router};
use storefront_gateway::model::catalog::Product;
use storefront_gateway::model::common::Paged;
use storefront_proto::catalog::v1 as pb;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::catalog_service_server::{CatalogService, CatalogServiceServer};
use storefront_proto::common::v1::PageInfo;
use storefront_proto::encoded::Products;
use tokio::net::TcpListener;
use tonic::transport::Channel;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};

const RECORDS: usize = 20;

/// The same allocator as the storefront binary, so the ratio compares the
/// work, not the allocators.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// A tonic server holding the records as messages, as a plain service would.
struct Records(Vec<pb::Product>);

fn page() -> Option<PageInfo> {
    Some(PageInfo {
        limit: RECORDS as u32,
        offset: 0,
        count: RECORDS as u32,
        total: RECORDS as u64,
    })
}

type Reply<T> = Result<Response<T>, Status>;

fn absent<T>() -> Reply<T> {
    Err(Status::unimplemented("the floor answers ListProducts only"))
}

#[tonic::async_trait]
impl CatalogService for Records {
    async fn list_products(
        &self,
        _: Request<pb::ListProductsRequest>,
    ) -> Reply<pb::ListProductsResponse> {
        Ok(Response::new(pb::ListProductsResponse {
            page: page(),
            products: Products {
                products: self.0.clone(),
                encoded: Vec::new(),
            },
            ..Default::default()
        }))
    }
    async fn get_summary_dictionary(
        &self,
        _: Request<pb::GetSummaryDictionaryRequest>,
    ) -> Reply<pb::SummaryDictionary> {
        absent()
    }
    async fn get_product(&self, _: Request<pb::GetProductRequest>) -> Reply<pb::Product> {
        absent()
    }
    async fn get_products(
        &self,
        _: Request<pb::GetProductsRequest>,
    ) -> Reply<pb::GetProductsResponse> {
        absent()
    }
    async fn list_categories(
        &self,
        _: Request<pb::ListCategoriesRequest>,
    ) -> Reply<pb::ListCategoriesResponse> {
        absent()
    }
    async fn get_category(&self, _: Request<pb::GetCategoryRequest>) -> Reply<pb::Category> {
        absent()
    }
    async fn get_category_tree(
        &self,
        _: Request<pb::GetCategoryTreeRequest>,
    ) -> Reply<pb::CategoryTree> {
        absent()
    }
    async fn list_collections(
        &self,
        _: Request<pb::ListCollectionsRequest>,
    ) -> Reply<pb::ListCollectionsResponse> {
        absent()
    }
    async fn get_collection(&self, _: Request<pb::GetCollectionRequest>) -> Reply<pb::Collection> {
        absent()
    }
    type ExportProductsStream = tokio_stream::Empty<Result<pb::ProductBatch, Status>>;
    async fn export_products(
        &self,
        _: Request<pb::ExportProductsRequest>,
    ) -> Reply<Self::ExportProductsStream> {
        absent()
    }
    async fn get_catalog_info(
        &self,
        _: Request<pb::GetCatalogInfoRequest>,
    ) -> Reply<pb::CatalogInfo> {
        absent()
    }
    async fn update_product(&self, _: Request<pb::UpdateProductRequest>) -> Reply<pb::Product> {
        absent()
    }
    async fn put_product(&self, _: Request<pb::PutProductRequest>) -> Reply<pb::ChangeReply> {
        absent()
    }
    async fn delete_product(&self, _: Request<pb::DeleteProductRequest>) -> Reply<pb::ChangeReply> {
        absent()
    }
    async fn set_stock(&self, _: Request<pb::SetStockRequest>) -> Reply<pb::ChangeReply> {
        absent()
    }
    async fn import_feed(
        &self,
        _: Request<tonic::Streaming<pb::FeedChunk>>,
    ) -> Reply<pb::ImportReply> {
        absent()
    }
    type ExportFeedStream = tokio_stream::Empty<Result<pb::FeedChunk, Status>>;
    async fn export_feed(
        &self,
        _: Request<pb::ExportFeedRequest>,
    ) -> Reply<Self::ExportFeedStream> {
        absent()
    }
    async fn list_changes(&self, _: Request<pb::ListChangesRequest>) -> Reply<pb::ChangesReply> {
        absent()
    }
    async fn request_reindex(
        &self,
        _: Request<pb::RequestReindexRequest>,
    ) -> Reply<pb::RequestReindexReply> {
        absent()
    }
    async fn adjust_stock(
        &self,
        _: Request<pb::AdjustStockRequest>,
    ) -> Reply<pb::AdjustStockReply> {
        absent()
    }
    async fn adjust_stock_batch(
        &self,
        _: Request<pb::AdjustStockBatchRequest>,
    ) -> Reply<pb::AdjustStockBatchReply> {
        absent()
    }
}

#[derive(Clone)]
struct Floor {
    records: Arc<Vec<pb::Product>>,
    client: CatalogServiceClient<Channel>,
}

fn to_json(products: Vec<pb::Product>) -> Result<Json<Paged<Product>>, String> {
    let results = products
        .into_iter()
        .map(|p| Product::from_proto(p, false))
        .collect::<Result<_, _>>()
        .map_err(|_| "bad record".to_string())?;
    Paged::new(page(), results)
        .map(Json)
        .map_err(|_| "bad page".to_string())
}

async fn json(State(floor): State<Floor>) -> Result<Json<Paged<Product>>, String> {
    to_json(floor.records.as_ref().clone())
}

async fn hop(State(mut floor): State<Floor>) -> Result<Json<Paged<Product>>, String> {
    let reply = floor
        .client
        .list_products(pb::ListProductsRequest::default())
        .await
        .map_err(|s| s.message().to_string())?;
    let products = reply
        .into_inner()
        .products
        .decoded()
        .map_err(|e| e.to_string())?;
    to_json(products)
}

/// The same process settings as the storefront binary, for the same reason.
fn main() -> anyhow::Result<()> {
    storefront_platform::process::block_on_tuned(serve())?
}

async fn serve() -> anyhow::Result<()> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:18090".into());
    let records = storefront_catalog::sample_products(RECORDS, "AUD");
    let grpc = TcpListener::bind("127.0.0.1:0").await?;
    let grpc_addr = grpc.local_addr()?;
    let server = tonic::transport::Server::builder()
        .add_service(CatalogServiceServer::new(Records(records.clone())))
        // As the services' servers (storefront_platform::server): without
        // TCP_NODELAY a reply written in two parts waits on the peer's
        // delayed ACK (40 ms) whenever a connection is otherwise idle.
        .serve_with_incoming(TcpIncoming::from(grpc).with_nodelay(Some(true)));
    tokio::spawn(server);
    let channel = Channel::from_shared(format!("http://{grpc_addr}"))?.connect_lazy();
    let floor = Floor {
        records: Arc::new(records),
        client: CatalogServiceClient::new(channel),
    };
    let app = Router::new()
        .route("/json", get(json))
        .route("/hop", get(hop))
        .with_state(floor);
    // The mesh's backlog (storefront_platform::listen): at 256 connections
    // tokio's 128 dropped SYNs, and a client waited a second to retry.
    let listener = storefront_platform::listen::bind(addr.parse()?)?.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app).await?;
    Ok(())
}
