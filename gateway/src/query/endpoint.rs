//! A collection endpoint's query as an extractor: parsed with the
//! endpoint's vocabulary and documented from the same table, so that a
//! field added to `storefront_domain::query::vocabulary` is accepted and
//! published at once, with nothing restated in the route.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use utoipa::IntoParams;
use utoipa::openapi::path::{Parameter, ParameterIn};

use super::{CollectionSpec, ParsedQuery, parse, schema, spec};
use crate::error::ApiError;

/// One collection endpoint: what it accepts and its order without `sort`.
pub trait Endpoint: Send + Sync + 'static {
    const SPEC: &'static CollectionSpec;
    /// The order without `sort`, as the document states it.
    const DEFAULT_ORDER: &'static str;
}

/// The validated `limit`, `offset`, `sort` and filters of endpoint `E`
/// (400 in the spec's shape otherwise).
#[derive(Debug)]
pub struct Listing<E>(pub ParsedQuery, pub PhantomData<fn() -> E>);

impl<S: Send + Sync, E: Endpoint> FromRequestParts<S> for Listing<E> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        Ok(Listing(parse(parts.uri.query(), E::SPEC)?, PhantomData))
    }
}

impl<E: Endpoint> IntoParams for Listing<E> {
    fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        schema::parameters(E::SPEC, E::DEFAULT_ORDER)
    }
}

macro_rules! endpoints {
    ($($(#[$doc:meta])* $name:ident => $spec:expr, $order:literal;)*) => {$(
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name;
        impl Endpoint for $name {
            const SPEC: &'static CollectionSpec = &$spec;
            const DEFAULT_ORDER: &'static str = $order;
        }
    )*};
}

endpoints! {
    /// `GET /products`.
    Products => spec::PRODUCTS, "by key";
    /// `GET /search`: every `/products` parameter.
    Search => spec::PRODUCTS, "by relevance, then popularity";
    /// `GET /categories`.
    Categories => spec::CATEGORIES, "by position";
    /// `GET /collections`.
    Collections => spec::COLLECTIONS, "by position";
    /// `GET /customers/{customerId}/addresses`.
    Addresses => spec::ADDRESSES, "by createdAt";
    /// `GET /orders` and `GET /customers/{customerId}/orders`.
    Orders => spec::ORDERS, "by createdAt, newest first";
    /// Small lists held whole and paged by the gateway (variants, media,
    /// promotions): `limit` and `offset` only.
    SubCollection => spec::SUB_COLLECTION, "as listed";
}
