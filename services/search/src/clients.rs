//! The calls the search service makes: reading the catalog to index it,
//! through the mesh's one call path (all from background jobs, which
//! retry on their own schedule: see `Caller::for_background`).

use storefront_platform::typed_client;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    ChangesReply, ExportProductsRequest, ListCategoriesRequest, ListCategoriesResponse,
    ListChangesRequest,
};
use storefront_proto::encoded::ProductBatch;

typed_client! {
    /// The catalog's products, categories and changes.
    pub Catalog via CatalogServiceClient {
        Read list_changes(ListChangesRequest) -> ChangesReply;
        Read list_categories(ListCategoriesRequest) -> ListCategoriesResponse;
        Read export_products(ExportProductsRequest) -> tonic::Streaming<ProductBatch>;
    }
}
