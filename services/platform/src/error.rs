//! The one error type services answer with, and its mapping onto gRPC status
//! codes with rich details (ErrorInfo reason + BadRequest field violations),
//! so the gateway can rebuild its error bodies without guessing.

use std::borrow::Cow;
use std::collections::HashMap;

use tonic::{Code, Status};
use tonic_types::{ErrorDetails, FieldViolation as PbFieldViolation, StatusExt};

/// The ErrorInfo domain of every error this mesh produces.
pub const ERROR_DOMAIN: &str = "storefront";

/// What went wrong, independent of transport. Mapped to a gRPC code in
/// [`ErrorKind::grpc_code`] and to HTTP by the gateway.
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
    RateLimited,
    Unavailable,
    Internal,
}

impl ErrorKind {
    pub fn grpc_code(self) -> Code {
        match self {
            ErrorKind::BadRequest | ErrorKind::Validation => Code::InvalidArgument,
            ErrorKind::NotFound => Code::NotFound,
            ErrorKind::Conflict => Code::FailedPrecondition,
            ErrorKind::Unauthenticated => Code::Unauthenticated,
            ErrorKind::PermissionDenied => Code::PermissionDenied,
            ErrorKind::RateLimited => Code::ResourceExhausted,
            ErrorKind::Unavailable => Code::Unavailable,
            ErrorKind::Internal => Code::Internal,
        }
    }
}

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
            "NOT_FOUND",
            format!("{what} '{id}' does not exist"),
        )
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Internal, "INTERNAL", message)
    }
}

impl From<ServiceError> for Status {
    fn from(err: ServiceError) -> Self {
        let mut details = ErrorDetails::new();
        // The kind travels too: 400 and 422 share InvalidArgument.
        let metadata = HashMap::from([(KIND_KEY.to_string(), kind_name(err.kind).to_string())]);
        details.set_error_info(err.code.as_ref(), ERROR_DOMAIN, metadata);
        if !err.violations.is_empty() {
            let violations: Vec<PbFieldViolation> = err
                .violations
                .into_iter()
                .map(|v| PbFieldViolation {
                    field: v.field,
                    description: v.message,
                    reason: v.code.into_owned(),
                    localized_message: None,
                })
                .collect();
            details.set_bad_request(violations);
        }
        Status::with_error_details(err.kind.grpc_code(), err.message, details)
    }
}

const KIND_KEY: &str = "kind";

fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Validation => "validation",
        _ => "other",
    }
}

/// Whether a status carries a field-validation failure (HTTP 422) rather
/// than a malformed request (400).
pub fn is_validation(status: &Status) -> bool {
    let details = status.get_error_details();
    details.error_info().is_some_and(|info| {
        info.metadata
            .get(KIND_KEY)
            .is_some_and(|k| k == "validation")
    })
}

/// Reads back what [`From<ServiceError> for Status`] wrote: the ErrorInfo
/// reason and the field violations (field, code, message).
pub fn status_details(status: &Status) -> (Option<String>, Vec<FieldViolation>) {
    let details = status.get_error_details();
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
    (reason, violations)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let (reason, violations) = status_details(&status);
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
