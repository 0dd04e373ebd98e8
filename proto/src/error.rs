//! The one error type services answer with, and the one status table: each
//! kind's gRPC code and the HTTP status the gateway answers it with, side
//! by side ([`ErrorKind::TABLE`]). A service's status carries its kind, its
//! code (ErrorInfo reason) and its field violations (BadRequest) across the
//! hop, so the gateway rebuilds its error bodies without guessing.

use std::borrow::Cow;
use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation as PbFieldViolation, StatusExt};

/// The ErrorInfo domain of every error this mesh produces.
pub const ERROR_DOMAIN: &str = "storefront";

/// What went wrong, independent of transport: mapped to gRPC and HTTP by
/// [`ErrorKind::TABLE`] alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A malformed request parameter (HTTP 400).
    BadRequest,
    /// A well-formed request whose fields fail validation (HTTP 422).
    Validation,
    NotFound,
    Conflict,
    Unauthenticated,
    PermissionDenied,
    Unavailable,
    Internal,
    /// No authorized payment, or the method was declined (HTTP 402).
    PaymentRequired,
}

/// One kind's row of [`ErrorKind::TABLE`].
#[derive(Debug, Clone, Copy)]
pub struct KindRow {
    pub kind: ErrorKind,
    /// Its name on the wire (ErrorInfo metadata `kind`).
    pub name: &'static str,
    pub grpc: Code,
    /// The HTTP status the gateway answers (a service's internal failure
    /// is the gateway's 502: the fault is past the hop).
    pub http: u16,
    /// The error body's `type`.
    pub body_type: &'static str,
    /// The body's `code` and `message` when a status of the kind carries
    /// none of its own (one from outside the mesh).
    pub code: &'static str,
    pub message: &'static str,
}

const fn row(
    kind: ErrorKind,
    name: &'static str,
    grpc: Code,
    http: u16,
    body_type: &'static str,
    code: &'static str,
    message: &'static str,
) -> KindRow {
    KindRow {
        kind,
        name,
        grpc,
        http,
        body_type,
        code,
        message,
    }
}

impl ErrorKind {
    /// Each kind: its name on the wire, its gRPC code, its HTTP status, the
    /// error body's `type`, and the code and message it is answered with
    /// when it carries none. A code shared by two kinds reads back as the
    /// first; so does an HTTP status.
    pub const TABLE: [KindRow; 9] = [
        row(
            ErrorKind::BadRequest,
            "bad_request",
            Code::InvalidArgument,
            400,
            "validation_error",
            "BAD_REQUEST",
            "the request could not be processed",
        ),
        row(
            ErrorKind::Validation,
            "validation",
            Code::InvalidArgument,
            422,
            "validation_error",
            codes::VALIDATION_ERROR,
            "the request was not valid",
        ),
        row(
            ErrorKind::NotFound,
            "not_found",
            Code::NotFound,
            404,
            "not_found_error",
            codes::NOT_FOUND,
            "no such resource",
        ),
        row(
            ErrorKind::Conflict,
            "conflict",
            Code::FailedPrecondition,
            409,
            "conflict_error",
            "CONFLICT",
            "the request conflicts with the resource's state",
        ),
        row(
            ErrorKind::Unauthenticated,
            "unauthenticated",
            Code::Unauthenticated,
            401,
            "auth_error",
            "UNAUTHORIZED",
            "authentication is required",
        ),
        row(
            ErrorKind::PermissionDenied,
            "permission_denied",
            Code::PermissionDenied,
            403,
            "auth_error",
            "FORBIDDEN",
            "not allowed",
        ),
        row(
            ErrorKind::Unavailable,
            "unavailable",
            Code::Unavailable,
            503,
            "api_error",
            "SERVICE_UNAVAILABLE",
            "a downstream service is temporarily unavailable",
        ),
        row(
            ErrorKind::Internal,
            "internal",
            Code::Internal,
            502,
            "api_error",
            "BAD_GATEWAY",
            "a downstream service returned an invalid response",
        ),
        // The spec's types have none for payments: a payment missing or
        // declined conflicts with what the checkout needs.
        row(
            ErrorKind::PaymentRequired,
            "payment_required",
            Code::FailedPrecondition,
            402,
            "conflict_error",
            "PAYMENT_REQUIRED",
            "the checkout needs an authorized payment",
        ),
    ];

    pub fn row(self) -> KindRow {
        Self::TABLE
            .into_iter()
            .find(|row| row.kind == self)
            .unwrap_or(Self::TABLE[7]) // Internal
    }

    /// The kind answered with HTTP `status`, if one is.
    pub fn of_http(status: u16) -> Option<ErrorKind> {
        Self::TABLE
            .into_iter()
            .find(|row| row.http == status)
            .map(|row| row.kind)
    }

    pub fn grpc_code(self) -> Code {
        self.row().grpc
    }

    pub fn http_status(self) -> u16 {
        self.row().http
    }

    pub fn name(self) -> &'static str {
        self.row().name
    }

    /// The kind a service's status carries: `None` for a status without
    /// this mesh's ErrorInfo (tonic's, a proxy's, the identity layer's).
    /// A status from a service that sent no kind reads back by its code.
    pub fn of_status(status: &Status) -> Option<ErrorKind> {
        Self::of_details(status, &status.get_error_details())
    }

    /// As [`ErrorKind::of_status`], from details already read.
    fn of_details(status: &Status, details: &ErrorDetails) -> Option<ErrorKind> {
        let info = details.error_info()?;
        let named = info.metadata.get(KIND_KEY).and_then(|name| {
            Self::TABLE
                .into_iter()
                .find(|row| row.name == name)
                .map(|row| row.kind)
        });
        named.or_else(|| {
            Self::TABLE
                .into_iter()
                .find(|row| row.grpc == status.code())
                .map(|row| row.kind)
        })
    }
}

pub mod codes;

/// One field-level error (`errors[]` of the gateway's error body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldViolation {
    pub field: String,
    pub code: Cow<'static, str>,
    pub message: String,
}

impl FieldViolation {
    pub fn new(
        field: impl Into<String>,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            code: code.into(),
            message: message.into(),
        }
    }
}

/// A domain error of a service.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct ServiceError {
    pub kind: ErrorKind,
    /// The machine-readable code (the error body's `code`), e.g. `INVALID_FILTER`.
    pub code: Cow<'static, str>,
    pub message: String,
    pub violations: Vec<FieldViolation>,
}

impl ServiceError {
    pub fn new(
        kind: ErrorKind,
        code: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            code: code.into(),
            message: message.into(),
            violations: Vec::new(),
        }
    }

    pub fn with_violation(mut self, violation: FieldViolation) -> Self {
        self.violations.push(violation);
        self
    }

    pub fn not_found(what: &str, id: &str) -> Self {
        Self::new(
            ErrorKind::NotFound,
            codes::NOT_FOUND,
            format!("{what} {} does not exist", excerpt(id)),
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, "INTERNAL", message)
    }
}

/// Client input as an error text may quote it: at most [`EXCERPT_CHARS`]
/// characters, quoted, with control and invisible characters escaped, and
/// an ellipsis when cut. A message must never carry what a client sent in
/// full: a status travels in HTTP/2 headers (twice, in `grpc-message` and
/// in the details), whose size is limited, and ends up in logs.
pub fn excerpt(input: &str) -> String {
    let mut out = String::with_capacity(EXCERPT_CHARS + 8);
    out.push('\'');
    for (i, c) in input.chars().enumerate() {
        if i == EXCERPT_CHARS {
            out.push('…');
            break;
        }
        if c.is_control() || c == '\'' || c == '\\' || crate::text::is_format(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// The most characters of client input an error message quotes.
pub const EXCERPT_CHARS: usize = 40;
/// Caps on what one status carries, in bytes, whatever a service wrote:
/// with base64 and percent-encoding still far under the HTTP/2
/// header-list limit (16 KiB by default), so an error can never turn into
/// a reset stream.
const MAX_MESSAGE_BYTES: usize = 512;
const MAX_FIELD_BYTES: usize = 128;
const MAX_REASON_BYTES: usize = 64;
const MAX_VIOLATIONS: usize = 12;

fn capped(mut text: String, max: usize) -> String {
    if text.len() > max {
        let mut cut = max - '…'.len_utf8();
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push('…');
    }
    text
}

impl From<ServiceError> for Status {
    fn from(err: ServiceError) -> Self {
        let mut details = ErrorDetails::new();
        // The kind travels too: 400 and 422 share InvalidArgument.
        let metadata = HashMap::from([(KIND_KEY.to_string(), err.kind.name().to_string())]);
        details.set_error_info(err.code.as_ref(), ERROR_DOMAIN, metadata);
        if !err.violations.is_empty() {
            let violations: Vec<PbFieldViolation> = err
                .violations
                .into_iter()
                .take(MAX_VIOLATIONS)
                .map(|v| PbFieldViolation {
                    field: capped(v.field, MAX_FIELD_BYTES),
                    description: capped(v.message, MAX_MESSAGE_BYTES / 2),
                    reason: capped(v.code.into_owned(), MAX_REASON_BYTES),
                    localized_message: None,
                })
                .collect();
            details.set_bad_request(violations);
        }
        let message = capped(err.message, MAX_MESSAGE_BYTES);
        Status::with_error_details(err.kind.grpc_code(), message, details)
    }
}

/// A failed item of a batch call, as its call alone would have failed.
impl From<Status> for crate::common::v1::CallStatus {
    fn from(status: Status) -> Self {
        Self {
            code: status.code() as i32,
            message: status.message().to_string(),
            details: status.details().to_vec(),
        }
    }
}

impl From<crate::common::v1::CallStatus> for Status {
    fn from(failed: crate::common::v1::CallStatus) -> Self {
        let code = Code::from_i32(failed.code);
        Status::with_details(code, failed.message, failed.details.into())
    }
}

const KIND_KEY: &str = "kind";

/// What a service's status says, read once: its kind, its ErrorInfo
/// reason (the error code), its field violations.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StatusDetails {
    /// `None`: not a status of this mesh's services (see
    /// [`ErrorKind::of_status`]).
    pub kind: Option<ErrorKind>,
    pub reason: Option<String>,
    pub violations: Vec<FieldViolation>,
}

/// Reads back what [`From<ServiceError> for Status`] wrote: the kind, the
/// ErrorInfo reason and the field violations (field, code, message).
pub fn status_details(status: &Status) -> StatusDetails {
    let details = status.get_error_details();
    let kind = ErrorKind::of_details(status, &details);
    let reason = details.error_info().map(|info| info.reason.clone());
    let violations = details
        .bad_request()
        .map(|br| {
            br.field_violations
                .iter()
                .map(|v| {
                    FieldViolation::new(v.field.clone(), v.reason.clone(), v.description.clone())
                })
                .collect()
        })
        .unwrap_or_default();
    StatusDetails {
        kind,
        reason,
        violations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_items_status_is_the_status_its_call_alone_would_have() {
        let error = ServiceError::new(ErrorKind::Validation, "VALIDATION_ERROR", "lines")
            .with_violation(FieldViolation::new("lines", "INVALID_VALUE", "none"));
        let alone = Status::from(error);
        let item = crate::common::v1::CallStatus::from(alone.clone());
        let back = Status::from(item);
        assert_eq!(back.code(), alone.code());
        assert_eq!(back.message(), alone.message());
        assert_eq!(status_details(&back), status_details(&alone));
        assert_eq!(status_details(&back).violations[0].field, "lines");
    }

    #[test]
    fn every_kind_crosses_the_hop_as_itself() {
        for KindRow { kind, grpc, .. } in ErrorKind::TABLE {
            let status = Status::from(ServiceError::new(kind, "X", "m"));
            assert_eq!(status.code(), grpc);
            assert_eq!(ErrorKind::of_status(&status), Some(kind), "{kind:?}");
        }
        // Not ours: the hop decides, not the table.
        assert_eq!(ErrorKind::of_status(&Status::not_found("x")), None);
        let names: std::collections::HashSet<_> =
            ErrorKind::TABLE.iter().map(|row| row.name).collect();
        assert_eq!(names.len(), ErrorKind::TABLE.len(), "one name each");
    }

    #[test]
    fn a_status_without_a_kind_reads_back_by_its_code() {
        // As services before the table wrote it: only `validation` named.
        let mut details = ErrorDetails::new();
        let other = HashMap::from([(KIND_KEY.to_string(), "other".to_string())]);
        details.set_error_info("CART_ORDERED", ERROR_DOMAIN, other);
        let status = Status::with_error_details(Code::FailedPrecondition, "m", details);
        assert_eq!(ErrorKind::of_status(&status), Some(ErrorKind::Conflict));
    }

    #[test]
    fn client_input_is_quoted_short_and_escaped() {
        assert_eq!(excerpt("p-1"), "'p-1'");
        let long = excerpt(&"x".repeat(10_000));
        assert_eq!(long.chars().count(), EXCERPT_CHARS + 3, "{long}");
        assert!(long.ends_with("…'"));
        let hostile = excerpt("a\nb\u{202E}c'd");
        assert_eq!(hostile, "'a\\u{a}b\\u{202e}c\\u{27}d'");
    }

    #[test]
    fn a_status_stays_small_whatever_the_service_wrote() {
        let mut err = ServiceError::new(
            ErrorKind::Validation,
            "VALIDATION_ERROR",
            "€".repeat(100_000),
        );
        for _ in 0..1_000 {
            err = err.with_violation(FieldViolation::new(
                "f".repeat(10_000),
                "C".repeat(999),
                "é".repeat(10_000),
            ));
        }
        let status = Status::from(err);
        let total = status.message().len() + status.details().len();
        assert!(total < 8 * 1024, "{total} bytes");
        assert!(status.message().ends_with('…'));
        let violations = status_details(&status).violations;
        assert_eq!(violations.len(), MAX_VIOLATIONS);
    }

    #[test]
    fn details_survive_the_status_round_trip() {
        let err = ServiceError::new(ErrorKind::BadRequest, "INVALID_FILTER", "bad filter")
            .with_violation(FieldViolation::new(
                "filter[price]",
                "INVALID_VALUE",
                "not a number",
            ));
        let status = Status::from(err);
        assert_eq!(status.code(), Code::InvalidArgument);
        assert_eq!(status.message(), "bad filter");
        let StatusDetails {
            reason, violations, ..
        } = status_details(&status);
        assert_eq!(reason.as_deref(), Some("INVALID_FILTER"));
        assert_eq!(
            violations,
            vec![FieldViolation::new(
                "filter[price]",
                "INVALID_VALUE",
                "not a number"
            )]
        );
    }
}
