//! The calls the search service makes: reading the catalog to index it,
//! through the mesh's one call path (all from background jobs, which
//! retry on their own schedule: see `Caller::for_background`).

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_platform::typed_client;
use storefront_proto::catalog::v1::catalog_service_client::CatalogServiceClient;
use storefront_proto::catalog::v1::{
    ChangesReply, ExportProductsRequest, ListCategoriesRequest, ListCategoriesResponse,
    ListChangesRequest, RequestReindexReply, RequestReindexRequest,
};
use storefront_proto::encoded::ProductBatch;
use storefront_proto::error::codes;

typed_client! {
    /// The catalog's products, categories and changes.
    pub Catalog via CatalogServiceClient {
        Read list_changes(ListChangesRequest) -> ChangesReply;
        Read list_categories(ListCategoriesRequest) -> ListCategoriesResponse;
        Read export_products(ExportProductsRequest) -> tonic::Streaming<ProductBatch>;
        Write request_reindex(RequestReindexRequest) -> RequestReindexReply;
    }
}

/// The catalog could not be read (503 `CATALOG_UNAVAILABLE`): the index
/// is built and followed in the background, so the reason is kept.
pub(crate) fn unavailable(e: impl std::fmt::Display) -> ServiceError {
    ServiceError::new(
        ErrorKind::Unavailable,
        codes::CATALOG_UNAVAILABLE,
        format!("catalog unreachable: {e}"),
    )
}

#[cfg(test)]
mod tests {
    use storefront_platform::topology::SEARCH;

    use super::Catalog;

    /// Search's account is granted exactly what its code calls.
    #[test]
    fn the_allow_list_is_what_the_client_calls() {
        assert_eq!(SEARCH.methods_on("catalog"), Some(Catalog::methods()));
        let callees: Vec<&str> = SEARCH.downstreams().map(|p| p.name).collect();
        assert_eq!(callees, ["catalog"]);
    }
}
