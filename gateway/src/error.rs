//! The gateway's one error type: every error response, whatever produced it,
//! is an error body built here. gRPC statuses are mapped to HTTP in
//! exactly one place, [`ApiError::from_status`].

use std::borrow::Cow;
use storefront_proto::error::codes;

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use storefront_platform::client::call::CallError;
use storefront_platform::error::{ErrorKind, StatusDetails, status_details};
use tonic::Code;
use utoipa::ToSchema;

/// A field-level error (`errors[]` of the error body).
#[derive(Debug, Clone, Serialize, ToSchema, PartialEq, Eq)]
pub struct FieldError {
    /// The parameter, header or JSON path at fault, e.g. `lineItems[0].quantity`.
    pub field: String,
    /// REQUIRED, INVALID_FORMAT, OUT_OF_RANGE, INVALID_VALUE, UNSUPPORTED, ...
    pub code: String,
    pub message: String,
}

/// The body of every error answer.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The HTTP status code.
    pub status: u16,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<Cow<'static, str>>,
    /// api_error, auth_error, validation_error, not_found_error, conflict_error, rate_limit_error
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub errors: Vec<FieldError>,
    /// `CART_REPRICED` only: the cart as repriced, for the shopper to review.
    // A `Cart`: the OpenAPI step names it (the models sit above errors).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub cart: Option<serde_json::Value>,
    /// `CHECKOUT_REPRICED` only: the checkout session as repriced (its
    /// shipping or tax changed), still open, for the shopper to confirm.
    #[serde(rename = "checkoutSession", skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub checkout_session: Option<serde_json::Value>,
    /// `PAYMENT_DECLINED` only: the session's payment, with the provider's
    /// `declineCode`, waiting for another method.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub payment: Option<serde_json::Value>,
}

#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub code: Option<Cow<'static, str>>,
    pub message: Cow<'static, str>,
    pub errors: Vec<FieldError>,
    /// What an error is about, when the client needs to see it (boxed:
    /// rare, and every `Result` carries the error's size).
    pub about: Option<Box<About>>,
}

/// The resources a 409 shows as they now are.
#[derive(Debug, Clone, Default)]
pub struct About {
    /// `CART_REPRICED`: the cart as repriced.
    pub cart: Option<serde_json::Value>,
    /// `CHECKOUT_REPRICED`: the checkout session as repriced.
    pub checkout_session: Option<serde_json::Value>,
    /// `PAYMENT_DECLINED`: the payment with its decline code.
    pub payment: Option<serde_json::Value>,
}

/// The error body's `type` for a status: its kind's (`ErrorKind::TABLE`);
/// for the statuses only the edge answers, by what they are about.
pub fn error_type(status: StatusCode) -> &'static str {
    if let Some(kind) = ErrorKind::of_http(status.as_u16()) {
        return kind.row().body_type;
    }
    match status {
        StatusCode::PAYLOAD_TOO_LARGE
        | StatusCode::URI_TOO_LONG
        | StatusCode::UNSUPPORTED_MEDIA_TYPE
        | StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => "validation_error",
        StatusCode::TOO_MANY_REQUESTS => "rate_limit_error",
        _ => "api_error",
    }
}

impl ApiError {
    pub fn new(
        status: StatusCode,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<Cow<'static, str>>,
    ) -> Self {
        Self {
            status,
            code: Some(code.into()),
            message: message.into(),
            errors: Vec::new(),
            about: None,
        }
    }

    pub fn field(
        mut self,
        field: impl Into<String>,
        code: &str,
        message: impl Into<String>,
    ) -> Self {
        self.errors.push(FieldError {
            field: field.into(),
            code: code.to_string(),
            message: message.into(),
        });
        self
    }

    /// A 422 `VALIDATION_ERROR` naming one bad field of a body.
    pub fn invalid_field(field: &str, code: &str, message: impl Into<String>) -> Self {
        let message = message.into();
        Self::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            codes::VALIDATION_ERROR,
            message.clone(),
        )
        .field(field, code, message)
    }

    pub fn not_found(message: impl Into<Cow<'static, str>>) -> Self {
        Self::new(StatusCode::NOT_FOUND, codes::NOT_FOUND, message)
    }

    pub fn bad_gateway(detail: impl std::fmt::Display) -> Self {
        tracing::error!(%detail, "untranslatable downstream reply");
        Self::new(
            StatusCode::BAD_GATEWAY,
            "BAD_GATEWAY",
            "a downstream service returned an invalid response",
        )
    }

    pub fn unavailable(what: &str, detail: impl std::fmt::Display) -> Self {
        tracing::warn!(%detail, what, "downstream unavailable");
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "SERVICE_UNAVAILABLE",
            format!("{what} is temporarily unavailable"),
        )
    }

    /// A generic error for a status produced outside any handler (router
    /// fallbacks, body limits), keeping no detail of the original.
    pub fn for_status(status: StatusCode) -> Self {
        let (code, message) = match status {
            StatusCode::NOT_FOUND => (codes::NOT_FOUND, "no resource at this path"),
            StatusCode::METHOD_NOT_ALLOWED => {
                ("METHOD_NOT_ALLOWED", "method not allowed on this resource")
            }
            StatusCode::PAYLOAD_TOO_LARGE => ("PAYLOAD_TOO_LARGE", "request body exceeds 1 MiB"),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => (
                codes::UNSUPPORTED_MEDIA_TYPE,
                "request body must be sent as Content-Type: application/json",
            ),
            s if s.is_client_error() => ("BAD_REQUEST", "the request could not be processed"),
            _ => ("INTERNAL_ERROR", "internal server error"),
        };
        Self::new(status, code, message)
    }

    /// A downstream with no room for this call now (503 with Retry-After).
    fn busy() -> Self {
        Self::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "DOWNSTREAM_BUSY",
            "the service is handling as many requests as it can; retry shortly",
        )
    }

    pub fn internal() -> Self {
        Self::for_status(StatusCode::INTERNAL_SERVER_ERROR)
    }

    /// A status without this mesh's ErrorInfo: tonic's, a proxy's, the
    /// identity layer's. The kind it amounts to, or the whole answer when
    /// the condition is the hop's own.
    fn from_hop(status: &tonic::Status) -> Result<ErrorKind, Self> {
        match status.code() {
            Code::InvalidArgument | Code::OutOfRange => Ok(ErrorKind::BadRequest),
            Code::NotFound => Ok(ErrorKind::NotFound),
            Code::AlreadyExists | Code::Aborted | Code::FailedPrecondition => {
                Ok(ErrorKind::Conflict)
            }
            // The gateway's own credentials were refused, not the customer's.
            Code::Unauthenticated | Code::PermissionDenied => Err(Self::bad_gateway(format!(
                "downstream refused the gateway identity: {status:?}"
            ))),
            // A peer out of room (tonic's own load shedding, a message over
            // its limits) is the server's condition, not the client's
            // budget: 503 with Retry-After, never a 429.
            Code::ResourceExhausted => {
                tracing::warn!(message = status.message(), "downstream exhausted");
                Err(Self::busy())
            }
            // The connection failed under the call (a replica stopped):
            // the service is away, not its answer malformed or late.
            Code::Unknown | Code::Internal | Code::Cancelled
                if storefront_platform::client::transport_failed(status) =>
            {
                Err(Self::unavailable("a downstream service", status.message()))
            }
            Code::Unavailable => Err(Self::unavailable("a downstream service", status.message())),
            // The gateway cancels a call only when its deadline passes
            // (tonic reports its own timeout as Cancelled).
            Code::DeadlineExceeded | Code::Cancelled => {
                tracing::warn!(message = status.message(), "downstream deadline exceeded");
                Err(Self::new(
                    StatusCode::GATEWAY_TIMEOUT,
                    "GATEWAY_TIMEOUT",
                    "a downstream service did not respond in time",
                ))
            }
            Code::Ok | Code::Unknown | Code::Internal | Code::DataLoss | Code::Unimplemented => {
                Err(Self::bad_gateway(format!("{status:?}")))
            }
        }
    }

    /// The one mapping from a downstream gRPC status to an HTTP error: a
    /// service's refusal by the kind it carries (`ErrorKind::TABLE`, the
    /// mesh's one status table); anything else by what the hop says.
    pub fn from_status(status: &tonic::Status) -> Self {
        if storefront_platform::client::is_shed(status) {
            return Self::busy();
        }
        let StatusDetails {
            kind,
            reason,
            violations,
        } = status_details(status);
        let kind = match kind {
            Some(ErrorKind::Unavailable) => {
                return Self::unavailable("a downstream service", status.message());
            }
            Some(ErrorKind::Internal) => return Self::bad_gateway(format!("{status:?}")),
            Some(kind) => kind,
            None => match Self::from_hop(status) {
                Ok(kind) => kind,
                Err(answer) => return answer,
            },
        };
        let row = kind.row();
        let http = StatusCode::from_u16(row.http).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        // Only a service's own refusal (it carries our ErrorInfo) speaks to
        // the client in its words; anything else (tonic's, a proxy's) might
        // describe internals, so the client gets its kind's words.
        let message = match reason {
            Some(_) => Cow::Owned(status.message().to_string()),
            None => {
                tracing::warn!(code = ?status.code(), message = status.message(), "downstream refusal without error details");
                Cow::Borrowed(row.message)
            }
        };
        Self {
            status: http,
            code: Some(reason.map_or(Cow::Borrowed(row.code), Cow::Owned)),
            message,
            errors: violations
                .into_iter()
                .map(|v| FieldError {
                    field: v.field,
                    code: v.code.into_owned(),
                    message: v.message,
                })
                .collect(),
            about: None,
        }
    }

    pub fn body(&self) -> ErrorBody {
        ErrorBody {
            status: self.status.as_u16(),
            message: self.message.to_string(),
            code: self.code.clone(),
            kind: error_type(self.status),
            errors: self.errors.clone(),
            cart: self.about.as_ref().and_then(|a| a.cart.clone()),
            checkout_session: self.about.as_ref().and_then(|a| a.checkout_session.clone()),
            payment: self.about.as_ref().and_then(|a| a.payment.clone()),
        }
    }
}

impl From<tonic::Status> for ApiError {
    fn from(status: tonic::Status) -> Self {
        Self::from_status(&status)
    }
}

impl From<CallError> for ApiError {
    fn from(error: CallError) -> Self {
        match error {
            CallError::CircuitOpen(_) => Self::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "CIRCUIT_OPEN",
                error.to_string(),
            ),
            CallError::Token(peer, e) => Self::unavailable(peer, e),
            CallError::Status(status) => Self::from_status(&status),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status;
        let mut response = (status, Json(self.body())).into_response();
        if status.is_server_error() || status == StatusCode::TOO_MANY_REQUESTS {
            response
                .headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
        }
        // Every 503 is temporary: say when to come back (a handler may
        // set a more precise value over it).
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(1u32));
        }
        response
    }
}

/// A service's message that lacks what its JSON needs: that service's
/// bug, answered 502.
impl From<storefront_json::Invalid> for ApiError {
    fn from(e: storefront_json::Invalid) -> Self {
        Self::bad_gateway(e)
    }
}

#[cfg(test)]
mod tests {
    use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};

    use super::*;

    fn mapped(kind: ErrorKind, code: &'static str) -> ApiError {
        ApiError::from(tonic::Status::from(ServiceError::new(kind, code, "m")))
    }

    #[test]
    fn grpc_codes_map_to_the_architecture_table() {
        assert_eq!(
            mapped(ErrorKind::Validation, "VALIDATION_ERROR").status,
            422
        );
        assert_eq!(mapped(ErrorKind::BadRequest, "INVALID_FILTER").status, 400);
        assert_eq!(
            mapped(ErrorKind::Validation, "INVALID_CONTENT").status,
            422,
            "the kind decides, not the code"
        );
        assert_eq!(mapped(ErrorKind::NotFound, "NOT_FOUND").status, 404);
        assert_eq!(
            mapped(ErrorKind::Conflict, "CONCURRENT_MODIFICATION").status,
            409
        );
        assert_eq!(
            mapped(ErrorKind::Unauthenticated, "INVALID_CREDENTIALS").status,
            401
        );
        assert_eq!(mapped(ErrorKind::PermissionDenied, "FORBIDDEN").status, 403);
        // A peer's exhaustion is not the client's rate limit.
        let exhausted = ApiError::from(tonic::Status::resource_exhausted("message too large"));
        assert_eq!(
            (exhausted.status.as_u16(), exhausted.code.as_deref()),
            (503, Some("DOWNSTREAM_BUSY"))
        );
        assert_eq!(
            exhausted.into_response().headers()[header::RETRY_AFTER],
            "1"
        );
        assert_eq!(mapped(ErrorKind::Unavailable, "X").status, 503);
        assert_eq!(mapped(ErrorKind::Internal, "X").status, 502);
        assert_eq!(
            ApiError::from(tonic::Status::deadline_exceeded("slow")).status,
            504
        );
        assert_eq!(
            ApiError::from(tonic::Status::cancelled("Timeout expired")).status,
            504
        );
        assert_eq!(
            ApiError::from(tonic::Status::unavailable("down")).status,
            503
        );
        assert_eq!(
            ApiError::from(tonic::Status::unknown("garbage")).status,
            502
        );
        // The identity layer's refusals are the gateway's problem, not the caller's.
        assert_eq!(
            ApiError::from(tonic::Status::unauthenticated("no token")).status,
            502
        );
        assert_eq!(
            ApiError::from(tonic::Status::permission_denied("not allowed")).status,
            502
        );
    }

    #[test]
    fn only_a_service_s_own_refusal_reaches_the_client_in_its_words() {
        let own = ApiError::from(tonic::Status::from(ServiceError::new(
            ErrorKind::NotFound,
            "NOT_FOUND",
            "product 'x' does not exist",
        )));
        assert_eq!(own.message, "product 'x' does not exist");
        // A refusal from tonic or a proxy, without our details, may name
        // internals: the client gets the status's generic text.
        let foreign = ApiError::from(tonic::Status::invalid_argument(
            "failed to decode Protobuf message: storefront.internal.Thing.secret",
        ));
        assert_eq!(foreign.status, 400);
        assert!(!foreign.message.contains("Protobuf"), "{}", foreign.message);
        let foreign = ApiError::from(tonic::Status::not_found("/var/lib/app/db.sqlite"));
        assert_eq!(
            (foreign.status.as_u16(), &*foreign.message),
            (404, "no such resource")
        );
    }

    #[test]
    fn field_violations_become_errors_entries() {
        let err = ServiceError::new(ErrorKind::BadRequest, "INVALID_FILTER", "bad").with_violation(
            FieldViolation::new("filter[price]", "INVALID_VALUE", "not a number"),
        );
        let api = ApiError::from(tonic::Status::from(err));
        let body = serde_json::to_value(api.body()).unwrap();
        assert_eq!(body["code"], "INVALID_FILTER");
        assert_eq!(body["type"], "validation_error");
        assert_eq!(body["errors"][0]["field"], "filter[price]");
        assert_eq!(body["errors"][0]["code"], "INVALID_VALUE");
    }
}
