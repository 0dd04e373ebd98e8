//! `limit` and `offset`.

use crate::error::ApiError;
use storefront_proto::error::codes;

use super::invalid_parameter;

/// The services' own paging limits: the gateway refuses what they would.
pub use storefront_domain::query::{DEFAULT_LIMIT, MAX_LIMIT};

#[derive(Default)]
pub struct Page<'a> {
    pub limit: Option<&'a str>,
    pub offset: Option<&'a str>,
}

impl Page<'_> {
    pub fn validate(&self) -> Result<(u32, u64), ApiError> {
        let limit = match self.limit {
            None => DEFAULT_LIMIT,
            Some(raw) => {
                let n: i64 = raw.trim().parse().map_err(|_| {
                    invalid_parameter(
                        "limit",
                        codes::INVALID_FORMAT,
                        format!("limit must be an integer, got {raw:?}"),
                    )
                })?;
                if !(1..=i64::from(MAX_LIMIT)).contains(&n) {
                    return Err(invalid_parameter(
                        "limit",
                        codes::OUT_OF_RANGE,
                        format!("limit must be between 1 and {MAX_LIMIT}"),
                    ));
                }
                n as u32
            }
        };
        let offset = match self.offset {
            None => 0,
            Some(raw) => {
                let n: i128 = raw.trim().parse().map_err(|_| {
                    invalid_parameter(
                        "offset",
                        codes::INVALID_FORMAT,
                        format!("offset must be an integer, got {raw:?}"),
                    )
                })?;
                u64::try_from(n)
                    .ok()
                    .filter(|n| i64::try_from(*n).is_ok())
                    .ok_or_else(|| {
                        invalid_parameter(
                            "offset",
                            codes::OUT_OF_RANGE,
                            "offset must be 0 or more".to_string(),
                        )
                    })?
            }
        };
        Ok((limit, offset))
    }
}
