//! Evaluation of the collection query language (`ListQuery`: filters, then a
//! total sort order, then the page) over in-memory records. Every service
//! that lists something uses this, so paging, sorting and filtering
//! mean the same everywhere.

pub mod vocabulary;

use std::cmp::Ordering;
use storefront_proto::error::codes;

use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{Filter, FilterOperator, ListQuery, PageInfo, SortDirection};

use storefront_proto::error::{ErrorKind, FieldViolation, ServiceError, excerpt};

pub const DEFAULT_LIMIT: u32 = 20;
pub const MAX_LIMIT: u32 = 100;
/// Sort keys one query may name: work per request stays bounded.
pub const MAX_SORT_KEYS: usize = 4;
/// `filter[...]` filters one request may combine (the gateway's bound).
pub const MAX_STRUCTURED_FILTERS: usize = 16;
/// Explicit filter parameters (`brand=`, `minPrice=`) an endpoint has at
/// most; each may be given once.
pub const MAX_EXPLICIT_FILTERS: usize = 8;
/// Filters one query may combine, both kinds together.
pub const MAX_FILTERS: usize = MAX_STRUCTURED_FILTERS + MAX_EXPLICIT_FILTERS;

/// The type of a filterable or sortable field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Text,
    Integer,
    Boolean,
    Timestamp,
    /// A set of identifiers: `eq` means "contains", `ne` "does not contain".
    TextSet,
}

/// A field's value in one record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Value<'a> {
    Text(&'a str),
    Integer(i64),
    Boolean(bool),
    /// Seconds and nanoseconds since the epoch.
    Timestamp(i64, i32),
    TextSet(&'a [std::sync::Arc<str>]),
    Missing,
}

/// How records of one kind are filtered and sorted. `Field` is resolved from
/// its name once per query, so comparisons never match strings.
pub trait Schema {
    type Record;
    type Field: Copy;
    /// Request-wide inputs to field values (e.g. the price currency).
    type Context;
    fn resolve(name: &str) -> Option<(Self::Field, FieldType)>;
    fn id(record: &Self::Record) -> &str;
    fn value<'a>(record: &'a Self::Record, field: Self::Field, ctx: &Self::Context) -> Value<'a>;
    /// Whether the field's values depend on the context (an index keeps
    /// one column per context for it).
    fn varies(_field: Self::Field) -> bool {
        false
    }
}

/// One page of matches and its envelope numbers.
pub struct Page<'a, T> {
    pub items: Vec<&'a T>,
    pub info: PageInfo,
}

pub(crate) struct CompiledFilter<F> {
    pub field: F,
    pub ty: FieldType,
    pub op: FilterOperator,
    pub value: OwnedValue,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum OwnedValue {
    Text(String),
    Integer(i64),
    Boolean(bool),
    Timestamp(i64, i32),
}

/// Runs `query` over `items`: filters, sorts (ties broken by id, so the
/// order is total), then pages. `default_sort` applies when the query has
/// no sort.
pub fn run<'a, S: Schema>(
    items: &'a [S::Record],
    query: &ListQuery,
    ctx: &S::Context,
    default_sort: &[(S::Field, bool)],
) -> Result<Page<'a, S::Record>, ServiceError> {
    let matched = matching::<S>(items, query, ctx)?;
    order_and_page::<S>(matched, query, ctx, default_sort)
}

/// The records passing every filter of `query`, in their original order.
pub fn matching<'a, S: Schema>(
    items: &'a [S::Record],
    query: &ListQuery,
    ctx: &S::Context,
) -> Result<Vec<&'a S::Record>, ServiceError> {
    let filters = compile_filters::<S>(query)?;
    Ok(items
        .iter()
        .filter(|item| filters.iter().all(|f| matches::<S>(item, f, ctx)))
        .collect())
}

/// Sorts `matched` by the query's sort (or `default_sort`) and cuts the page.
pub fn order_and_page<'a, S: Schema>(
    mut matched: Vec<&'a S::Record>,
    query: &ListQuery,
    ctx: &S::Context,
    default_sort: &[(S::Field, bool)],
) -> Result<Page<'a, S::Record>, ServiceError> {
    let sort = compile_sort::<S>(query, default_sort)?;
    let (limit, offset) = page_bounds(query)?;
    let total = matched.len();
    let cmp = |a: &&S::Record, b: &&S::Record| compare::<S>(a, b, &sort, ctx);
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(total);
    let end = start.saturating_add(limit as usize).min(total);
    if start == end {
        let info = PageInfo {
            limit,
            offset,
            count: 0,
            total: total as u64,
        };
        return Ok(Page {
            items: Vec::new(),
            info,
        });
    }
    // Only the first `end` records need ordering: select them, sort those.
    if end < total {
        matched.select_nth_unstable_by(end - 1, cmp);
        matched.truncate(end);
    }
    matched.sort_unstable_by(cmp);
    let items: Vec<&S::Record> = matched.drain(start..end).collect();
    let info = PageInfo {
        limit,
        offset,
        count: items.len() as u32,
        total: total as u64,
    };
    Ok(Page { items, info })
}

/// The page's limit (0: the default) and offset, checked.
pub fn page_bounds(query: &ListQuery) -> Result<(u32, u64), ServiceError> {
    let page = query.page.unwrap_or_default();
    let limit = if page.limit == 0 {
        DEFAULT_LIMIT
    } else {
        page.limit
    };
    if limit > MAX_LIMIT {
        return Err(ServiceError::new(
            ErrorKind::BadRequest,
            codes::INVALID_QUERY_PARAMETER,
            format!("limit must be between 1 and {MAX_LIMIT}"),
        )
        .with_violation(FieldViolation::new(
            "limit",
            codes::OUT_OF_RANGE,
            "limit must be between 1 and 100",
        )));
    }
    Ok((limit, page.offset))
}

pub(crate) fn compile_sort<S: Schema>(
    query: &ListQuery,
    default_sort: &[(S::Field, bool)],
) -> Result<Vec<(S::Field, bool)>, ServiceError> {
    if query.sort.is_empty() {
        return Ok(default_sort.to_vec());
    }
    check_sort_keys(query)?;
    let sort = &query.sort;
    sort.iter()
        .enumerate()
        // A field sorted by again can never break a tie its first mention
        // left: redundant, so ignored (the first mention decides).
        .filter(|(i, s)| !sort[..*i].iter().any(|t| t.field == s.field))
        .map(|(_, s)| {
            let (field, _) = S::resolve(&s.field).ok_or_else(|| {
                ServiceError::new(
                    ErrorKind::BadRequest,
                    codes::INVALID_SORT_FIELD,
                    format!("cannot sort by {}", excerpt(&s.field)),
                )
                .with_violation(FieldViolation::new(
                    "sort",
                    codes::UNSUPPORTED,
                    format!("{} is not a sort field", excerpt(&s.field)),
                ))
            })?;
            Ok((field, s.direction() == SortDirection::Desc))
        })
        .collect()
}

/// At most `MAX_SORT_KEYS`, counting repeats: they cost parsing, not
/// ordering work.
fn check_sort_keys(query: &ListQuery) -> Result<(), ServiceError> {
    if query.sort.len() <= MAX_SORT_KEYS {
        return Ok(());
    }
    let message = format!("at most {MAX_SORT_KEYS} sort keys are allowed");
    Err(ServiceError::new(
        ErrorKind::BadRequest,
        codes::INVALID_SORT_FIELD,
        message.clone(),
    )
    .with_violation(FieldViolation::new("sort", codes::OUT_OF_RANGE, message)))
}

/// Every filter of `query`, compiled; at most `MAX_FILTERS`.
pub(crate) fn compile_filters<S: Schema>(
    query: &ListQuery,
) -> Result<Vec<CompiledFilter<S::Field>>, ServiceError> {
    if query.filters.len() > MAX_FILTERS {
        let message = format!("at most {MAX_FILTERS} filters can be combined");
        return Err(ServiceError::new(
            ErrorKind::BadRequest,
            codes::INVALID_FILTER,
            message.clone(),
        )
        .with_violation(FieldViolation::new("filter", codes::OUT_OF_RANGE, message)));
    }
    query.filters.iter().map(compile_filter::<S>).collect()
}

fn invalid_filter(field: &str, code: &'static str, message: String) -> ServiceError {
    ServiceError::new(
        ErrorKind::BadRequest,
        codes::INVALID_FILTER,
        message.clone(),
    )
    .with_violation(FieldViolation::new(
        format!("filter[{field}]"),
        code,
        message,
    ))
}

fn compile_filter<S: Schema>(filter: &Filter) -> Result<CompiledFilter<S::Field>, ServiceError> {
    let name = filter.field.as_str();
    let (field, ty) = S::resolve(name).ok_or_else(|| {
        invalid_filter(
            name,
            codes::UNSUPPORTED,
            format!("cannot filter by {}", excerpt(name)),
        )
    })?;
    let op = filter.operator();
    let ordered = matches!(
        ty,
        FieldType::Integer | FieldType::Timestamp | FieldType::Text
    );
    let op_ok = match op {
        FilterOperator::Eq | FilterOperator::Ne => true,
        FilterOperator::Gt | FilterOperator::Gte | FilterOperator::Lt | FilterOperator::Lte => {
            ordered
        }
        FilterOperator::Unspecified => false,
    };
    if !op_ok {
        return Err(invalid_filter(
            name,
            codes::UNSUPPORTED,
            format!("operator not supported for {}", excerpt(name)),
        ));
    }
    let kind = filter.value.as_ref().and_then(|v| v.kind.as_ref());
    let value = match (ty, kind) {
        (FieldType::Text | FieldType::TextSet, Some(Kind::Text(s))) => OwnedValue::Text(s.clone()),
        (FieldType::Integer, Some(Kind::Integer(i))) => OwnedValue::Integer(*i),
        (FieldType::Boolean, Some(Kind::Boolean(b))) => OwnedValue::Boolean(*b),
        (FieldType::Timestamp, Some(Kind::Timestamp(t))) => {
            OwnedValue::Timestamp(t.seconds, t.nanos)
        }
        _ => {
            return Err(invalid_filter(
                name,
                codes::INVALID_VALUE,
                format!("wrong value type for {}", excerpt(name)),
            ));
        }
    };
    Ok(CompiledFilter {
        field,
        ty,
        op,
        value,
    })
}

fn matches<S: Schema>(
    item: &S::Record,
    filter: &CompiledFilter<S::Field>,
    ctx: &S::Context,
) -> bool {
    let actual = S::value(item, filter.field, ctx);
    if let Value::TextSet(set) = actual {
        let OwnedValue::Text(wanted) = &filter.value else {
            return false;
        };
        let contains = set.iter().any(|s| **s == **wanted);
        return if filter.op == FilterOperator::Ne {
            !contains
        } else {
            contains
        };
    }
    let ord = match (&filter.value, actual) {
        (OwnedValue::Text(w), Value::Text(a)) => a.cmp(w.as_str()),
        (OwnedValue::Integer(w), Value::Integer(a)) => a.cmp(w),
        (OwnedValue::Boolean(w), Value::Boolean(a)) => a.cmp(w),
        (OwnedValue::Timestamp(ws, wn), Value::Timestamp(s, n)) => (s, n).cmp(&(*ws, *wn)),
        // A record without the field matches only "not equal".
        _ => return filter.op == FilterOperator::Ne,
    };
    match filter.op {
        FilterOperator::Eq => ord == Ordering::Equal,
        FilterOperator::Ne => ord != Ordering::Equal,
        FilterOperator::Gt => ord == Ordering::Greater,
        FilterOperator::Gte => ord != Ordering::Less,
        FilterOperator::Lt => ord == Ordering::Less,
        FilterOperator::Lte => ord != Ordering::Greater,
        FilterOperator::Unspecified => false,
    }
}

fn compare<S: Schema>(
    a: &S::Record,
    b: &S::Record,
    sort: &[(S::Field, bool)],
    ctx: &S::Context,
) -> Ordering {
    for &(field, desc) in sort {
        let ord = S::value(a, field, ctx).cmp(&S::value(b, field, ctx));
        let ord = if desc { ord.reverse() } else { ord };
        if ord != Ordering::Equal {
            return ord;
        }
    }
    S::id(a).cmp(S::id(b))
}

#[cfg(test)]
mod tests;
