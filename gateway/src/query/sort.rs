//! `sort=field:direction`, repeated (or comma-separated), applied in order.

use axum::http::StatusCode;
use storefront_proto::common::v1::{SortDirection, SortField};
use storefront_proto::error::codes;

use crate::error::ApiError;

use super::{CollectionSpec, invalid_parameter};

pub fn parse(values: &[&str], spec: &CollectionSpec) -> Result<Vec<SortField>, ApiError> {
    let mut out = Vec::new();
    for term in values.iter().flat_map(|v| v.split(',')) {
        let term = term.trim();
        let (field, direction) = term.split_once(':').unwrap_or((term, "asc"));
        let direction = match direction {
            "asc" => SortDirection::Asc,
            "desc" => SortDirection::Desc,
            other => {
                return Err(invalid_parameter(
                    "sort",
                    codes::INVALID_VALUE,
                    format!("sort direction must be asc or desc, got {other:?}"),
                ));
            }
        };
        if !spec.sort_fields.contains(&field) {
            let message = format!(
                "cannot sort by {field:?}; sortable fields: {}",
                spec.sort_fields.join(", ")
            );
            return Err(ApiError::new(
                StatusCode::BAD_REQUEST,
                codes::INVALID_SORT_FIELD,
                message.clone(),
            )
            .field("sort", codes::UNSUPPORTED, message));
        }
        out.push(SortField {
            field: field.to_string(),
            direction: direction as i32,
        });
    }
    Ok(out)
}
