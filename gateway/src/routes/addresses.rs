//! The caller's address book: at most one address is the default.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use storefront_proto::customers::v1::{
    CreateAddressRequest, DeleteAddressRequest, GetAddressRequest, ListAddressesRequest,
    ReplaceAddressRequest,
};
use storefront_proto::error::codes;

use crate::bff_token::Customer;
use crate::error::{ApiError, ErrorBody};
use crate::middleware::call_context::CallContext;
use crate::middleware::json_body::ApiJson;
use crate::model::common::Paged;
use crate::model::customers::{Address, AddressBody};
use crate::query::{Addresses, Listing};
use crate::state::AppState;

/// Lists the caller's addresses.
#[utoipa::path(get, path = "/customers/{customerId}/addresses", tag = "Customers", security(("BFFToken" = [])),
    params(
        ("customerId" = String, Path, description = "`me` or the caller's own id"),
        Listing<Addresses>,
    ),
    responses(
        (status = 200, description = "A page of addresses", body = Paged<Address>),
        (status = 400, description = "INVALID_QUERY_PARAMETER, INVALID_SORT_FIELD or INVALID_FILTER", body = ErrorBody),
        (status = 403, description = "Another customer's id", body = ErrorBody),
    ))]
pub async fn list_addresses(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path(customer_id): Path<String>,
    Listing(parsed, _): Listing<Addresses>,
) -> Result<Json<Paged<Address>>, ApiError> {
    customer.owns(&customer_id)?;
    let message = ListAddressesRequest {
        customer_id: customer.id().to_string(),
        query: Some(parsed.list),
    };
    let reply = state
        .downstreams
        .customers()
        .list_addresses(&correlation, message)
        .await?;
    let results = reply
        .addresses
        .into_iter()
        .map(Address::try_from)
        .collect::<Result<_, _>>()?;
    Ok(Json(Paged::new(reply.page, results)?))
}

/// Adds an address.
#[utoipa::path(post, path = "/customers/{customerId}/addresses", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id")),
    request_body = AddressBody,
    responses(
        (status = 201, description = "The new address", body = Address),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 409, description = "LIMIT_REACHED: the customer has MAX_ADDRESSES (50) addresses", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR, one entry per bad field (region: an ISO 3166-2 code of another country than the address's, or malformed)", body = ErrorBody),
    ))]
pub async fn create_address(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path(customer_id): Path<String>,
    ApiJson(body): ApiJson<AddressBody>,
) -> Result<(StatusCode, Json<Address>), ApiError> {
    customer.owns(&customer_id)?;
    let message = CreateAddressRequest {
        customer_id: customer.id().to_string(),
        address: Some(body.into()),
    };
    let address = Address::try_from(
        state
            .downstreams
            .customers()
            .create_address(&correlation, message)
            .await?,
    )?;
    Ok((StatusCode::CREATED, Json(address)))
}

/// One address.
#[utoipa::path(get, path = "/customers/{customerId}/addresses/{addressId}", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id"), ("addressId" = String, Path, description = "Address id")),
    responses(
        (status = 200, description = "The address", body = Address),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 404, description = "No such address", body = ErrorBody),
    ))]
pub async fn get_address(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path((customer_id, address_id)): Path<(String, String)>,
) -> Result<Json<Address>, ApiError> {
    customer.owns(&customer_id)?;
    let message = GetAddressRequest {
        customer_id: customer.id().to_string(),
        address_id,
    };
    Ok(Json(Address::try_from(
        state
            .downstreams
            .customers()
            .get_address(&correlation, message)
            .await?,
    )?))
}

/// Replaces an address.
#[utoipa::path(put, path = "/customers/{customerId}/addresses/{addressId}", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id"), ("addressId" = String, Path, description = "Address id")),
    request_body = AddressBody,
    responses(
        (status = 200, description = "The address now", body = Address),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 404, description = "No such address", body = ErrorBody),
        (status = 415, description = codes::UNSUPPORTED_MEDIA_TYPE, body = ErrorBody),
        (status = 422, description = "VALIDATION_ERROR, one entry per bad field (region: an ISO 3166-2 code of another country than the address's, or malformed)", body = ErrorBody),
    ))]
pub async fn replace_address(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path((customer_id, address_id)): Path<(String, String)>,
    ApiJson(body): ApiJson<AddressBody>,
) -> Result<Json<Address>, ApiError> {
    customer.owns(&customer_id)?;
    let message = ReplaceAddressRequest {
        customer_id: customer.id().to_string(),
        address_id,
        address: Some(body.into()),
    };
    Ok(Json(Address::try_from(
        state
            .downstreams
            .customers()
            .replace_address(&correlation, message)
            .await?,
    )?))
}

/// Deletes an address.
#[utoipa::path(delete, path = "/customers/{customerId}/addresses/{addressId}", tag = "Customers", security(("BFFToken" = [])),
    params(("customerId" = String, Path, description = "`me` or the caller's own id"), ("addressId" = String, Path, description = "Address id")),
    responses(
        (status = 204, description = "Deleted"),
        (status = 403, description = "Another customer's id", body = ErrorBody),
        (status = 404, description = "No such address", body = ErrorBody),
    ))]
pub async fn delete_address(
    State(state): State<AppState>,
    correlation: CallContext,
    customer: Customer,
    Path((customer_id, address_id)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    customer.owns(&customer_id)?;
    let message = DeleteAddressRequest {
        customer_id: customer.id().to_string(),
        address_id,
    };
    state
        .downstreams
        .customers()
        .delete_address(&correlation, message)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
