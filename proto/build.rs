//! Compiles every `.proto` under `storefront/` with the vendored `protoc`, so
//! building needs no system protobuf compiler.

use std::path::PathBuf;

const PROTOS: &[&str] = &[
    "storefront/common/v1/common.proto",
    "storefront/catalog/v1/catalog.proto",
    "storefront/customers/v1/customers.proto",
    "storefront/orders/v1/orders.proto",
    "storefront/cart/v1/cart.proto",
    "storefront/search/v1/search.proto",
    "storefront/content/v1/content.proto",
    "storefront/payments/v1/payments.proto",
    "storefront/orders/storage/v1/storage.proto",
    "storefront/cart/storage/v1/storage.proto",
    "storefront/catalog/storage/v1/storage.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(std::env::var("OUT_DIR")?);
    let mut config = prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    // Maps become BTreeMaps so that JSON output (and ETags) are stable.
    config.btree_map(["."]);
    // Compressed products are kept as they arrive, not copied into a Vec.
    config.bytes([
        ".storefront.catalog.v1.CompressedProduct.lz4",
        ".storefront.catalog.v1.CompressedProduct.tail",
        ".storefront.catalog.v1.SummaryDictionary.bytes",
        // Feed chunks and records pass through as they arrive.
        ".storefront.catalog.v1.FeedChunk.data",
        ".storefront.catalog.v1.PutProductRequest.record",
    ]);
    // Replies carrying many products are written by hand (src/encoded.rs)
    // so that servers answer from bytes they hold; the wire is unchanged.
    for (proto, rust) in [
        (
            ".storefront.catalog.v1.ListProductsResponse",
            "crate::encoded::ListProductsResponse",
        ),
        (
            ".storefront.catalog.v1.ProductBatch",
            "crate::encoded::ProductBatch",
        ),
        (
            ".storefront.catalog.v1.CategoryTree",
            "crate::category_tree::CategoryTree",
        ),
        (
            ".storefront.search.v1.SearchResponse",
            "crate::encoded::SearchResponse",
        ),
        (
            ".storefront.search.v1.SuggestResponse",
            "crate::encoded::SuggestResponse",
        ),
    ] {
        config.extern_path(proto, rust);
    }
    tonic_prost_build::configure()
        .codec_path("crate::codec::SizedCodec")
        .file_descriptor_set_path(out.join("storefront_descriptor.bin"))
        .compile_with_config(config, PROTOS, &["."])?;
    for proto in PROTOS {
        println!("cargo:rerun-if-changed={proto}");
    }
    Ok(())
}
