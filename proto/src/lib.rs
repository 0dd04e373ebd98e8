//! The one crate holding the generated protobuf code of the mesh: shared
//! messages in [`common`], one module per domain service.

mod address;
pub mod category_tree;
pub mod codec;
pub mod encoded;
pub mod error;
pub mod names;
pub mod text;

// Generated code is not held to the workspace's lints.
#[allow(clippy::all)]
pub mod common {
    pub mod v1 {
        tonic::include_proto!("storefront.common.v1");
    }
}

#[allow(clippy::all)]
pub mod catalog {
    pub mod v1 {
        tonic::include_proto!("storefront.catalog.v1");
        pub use crate::category_tree::CategoryTree;
        pub use crate::encoded::{ListProductsResponse, ProductBatch};
    }
    pub mod storage {
        pub mod v1 {
            tonic::include_proto!("storefront.catalog.storage.v1");
        }
    }
}

#[allow(clippy::all)]
pub mod cart {
    pub mod v1 {
        tonic::include_proto!("storefront.cart.v1");
    }
    /// What the cart service stores; not part of its API.
    pub mod storage {
        pub mod v1 {
            tonic::include_proto!("storefront.cart.storage.v1");
        }
    }
}

#[allow(clippy::all)]
pub mod orders {
    pub mod v1 {
        tonic::include_proto!("storefront.orders.v1");
    }
    /// What the orders service stores; not part of its API.
    pub mod storage {
        pub mod v1 {
            tonic::include_proto!("storefront.orders.storage.v1");
        }
    }
}

#[allow(clippy::all)]
pub mod search {
    pub mod v1 {
        tonic::include_proto!("storefront.search.v1");
        pub use crate::encoded::{SearchResponse, SuggestResponse};
    }
}

#[allow(clippy::all)]
pub mod content {
    pub mod v1 {
        tonic::include_proto!("storefront.content.v1");
    }
}

#[allow(clippy::all)]
pub mod payments {
    pub mod v1 {
        tonic::include_proto!("storefront.payments.v1");
    }
}

#[allow(clippy::all)]
pub mod customers {
    pub mod v1 {
        tonic::include_proto!("storefront.customers.v1");
    }
}

/// Encoded file descriptors of every package, for gRPC reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("storefront_descriptor");

pub use prost_types::Timestamp;
