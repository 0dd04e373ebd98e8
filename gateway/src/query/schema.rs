//! The OpenAPI schemas of `sort`, `filter` and the explicit filter
//! parameters (`brand`, `minPrice`, ...) of a collection endpoint, from the
//! same `CollectionSpec` the gateway validates them with.

use serde_json::Value;
use storefront_domain::query::{DEFAULT_LIMIT, MAX_LIMIT, MAX_SORT_KEYS, MAX_STRUCTURED_FILTERS};
use storefront_proto::common::v1::FilterOperator;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::{
    ArrayBuilder, KnownFormat, ObjectBuilder, Required, Schema, SchemaFormat, Type,
};

use super::spec::{CollectionSpec, Explicit, ExplicitKind, FieldKind};

/// Characters of a query value that are surely within its 1 KiB limit
/// (4 bytes each at most).
const MAX_VALUE_CHARS: usize = 256;

/// A string with no control character (ECMA-262 pattern).
pub const NO_CONTROL_CHARACTERS: &str = r"^[^\u0000-\u001F\u007F-\u009F]*$";

/// An optional query parameter, to be finished (`build`).
pub fn optional_query(
    name: &str,
    description: impl Into<String>,
    schema: Schema,
) -> ParameterBuilder {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
}

/// Every query parameter of a collection endpoint, in the order a reader
/// wants them: paging, `sort`, the explicit filters, then `filter`.
pub fn parameters(spec: &CollectionSpec, default_order: &str) -> Vec<Parameter> {
    let query = optional_query;
    let integer = |format: KnownFormat, minimum: i64, default: u64| {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(format)))
            .minimum(Some(minimum))
            .default(Some(default.into()))
    };
    let limit = integer(KnownFormat::Int32, 1, DEFAULT_LIMIT.into()).maximum(Some(MAX_LIMIT));
    let mut params = vec![
        query(
            "limit",
            format!("Page size, 1 to {MAX_LIMIT}."),
            limit.into(),
        )
        .build(),
        query(
            "offset",
            "Results to skip.".into(),
            integer(KnownFormat::Int64, 0, 0).into(),
        )
        .build(),
    ];
    if !spec.sort_fields.is_empty() {
        let description = format!(
            "`field:asc|desc` (direction `asc` by default), repeatable or comma-separated, \
             applied in order; fields: {}. Without it: {default_order}. Ties are broken by id.",
            spec.sort_fields.join(", ")
        );
        params.push(query("sort", description, sort(spec)).build());
    }
    params.extend(spec.explicit.iter().map(explicit));
    if let Some(schema) = filter(spec) {
        params.push(
            query("filter", filter_description(spec), schema)
                .style(Some(ParameterStyle::DeepObject))
                .explode(Some(true))
                .build(),
        );
    }
    params
}

/// How `filter[...]` is written, with the endpoint's fields and which of
/// them take only `eq` and `ne`.
fn filter_description(spec: &CollectionSpec) -> String {
    let names = |keep: fn(FieldKind) -> bool| {
        spec.filter_fields
            .iter()
            .filter(|(_, kind)| keep(*kind))
            .map(|&(name, kind)| match kind {
                FieldKind::Attribute => format!("{name}.<attribute>"),
                _ => name.to_string(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut description = format!(
        "`filter[<field>]=v` or `filter[<field>[<op>]]=v`, op one of eq, ne, gt, gte, lt, lte; \
         at most {MAX_STRUCTURED_FILTERS}. Fields: {}.",
        names(|_| true)
    );
    let equality = names(|kind| !kind.allows(FilterOperator::Lt));
    if !equality.is_empty() {
        description.push_str(&format!(" {equality}: eq and ne only."));
    }
    if spec
        .filter_fields
        .iter()
        .any(|&(_, k)| k == FieldKind::Attribute)
    {
        description.push_str(
            " `filter[attributes.colour]=Navy`: products with a variant whose attribute `colour` \
             is `Navy` (ne: with none), compared as spelled; an attribute no product has matches \
             nothing.",
        );
    }
    description
}

/// `sort`: each value one of the endpoint's fields, bare or with
/// `:asc`/`:desc`, at most `MAX_SORT_KEYS` values. A field named again is
/// redundant and ignored (the first mention decides). Comma-separated keys
/// in one value are read too.
fn sort(spec: &CollectionSpec) -> Schema {
    let values: Vec<Value> = spec
        .sort_fields
        .iter()
        .flat_map(|f| [f.to_string(), format!("{f}:asc"), format!("{f}:desc")])
        .map(Value::from)
        .collect();
    let items = ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(values));
    ArrayBuilder::new()
        .items(items)
        .max_items(Some(MAX_SORT_KEYS))
        .into()
}

/// `filter` as a deep object: `filter[<field>]=<value>` for each of the
/// endpoint's filterable fields, typed as the gateway parses it; any
/// other field is refused. (`filter[<field>[<op>]]` nests one level
/// deeper than deepObject describes: the parameter's description gives it.)
fn filter(spec: &CollectionSpec) -> Option<Schema> {
    if spec.filter_fields.is_empty() {
        return None;
    }
    let mut object = ObjectBuilder::new()
        .schema_type(Type::Object)
        .max_properties(Some(MAX_STRUCTURED_FILTERS))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    let mut named = Vec::new();
    for &(field, kind) in spec.filter_fields {
        if kind == FieldKind::Attribute {
            // `filter[attributes.colour]`: one property per attribute
            // name, any name (the pattern shows the usual ones), a text.
            named.push(format!(r"{field}\.[A-Za-z0-9_-]{{1,64}}"));
            let text: Schema = value(kind).into();
            object = object.additional_properties(Some(AdditionalProperties::RefOr(text.into())));
            continue;
        }
        named.push(regex_escape(field));
        object = object.property(field, value(kind));
    }
    if spec
        .filter_fields
        .iter()
        .any(|&(_, k)| k == FieldKind::Attribute)
    {
        let pattern = format!("^({})$", named.join("|"));
        let names = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(pattern));
        object = object.property_names(Some(names));
    }
    Some(object.into())
}

/// A field name as a regular expression matching only it.
fn regex_escape(name: &str) -> String {
    name.chars()
        .flat_map(|c| match c.is_ascii_alphanumeric() {
            true => vec![c],
            false => vec!['\\', c],
        })
        .collect()
}

/// One filter value of `kind`, as `query::filter::typed` accepts it.
fn value(kind: FieldKind) -> ObjectBuilder {
    let integer = |minimum: i64| {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(minimum))
            .maximum(Some(i64::MAX))
    };
    match kind {
        FieldKind::Text | FieldKind::Id | FieldKind::Attribute => ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_VALUE_CHARS))
            .pattern(Some(NO_CONTROL_CHARACTERS)),
        FieldKind::Integer => integer(i64::MIN),
        FieldKind::Cents => integer(0),
        FieldKind::Boolean => ObjectBuilder::new().schema_type(Type::Boolean),
        FieldKind::Timestamp => ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime))),
        FieldKind::Enum(values) => ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(values.iter().copied())),
    }
}

/// An explicit filter parameter of a collection, as `query::parse` reads
/// it: optional, one value typed by its field (text values are bounded
/// with every other query value when the document is completed).
fn explicit(e: &Explicit) -> Parameter {
    let schema: Schema = match e.kind {
        ExplicitKind::Min | ExplicitKind::Max => {
            value(FieldKind::Cents).maximum(None::<i64>).into()
        }
        ExplicitKind::Equals(FieldKind::Text | FieldKind::Id) => {
            ObjectBuilder::new().schema_type(Type::String).into()
        }
        ExplicitKind::Equals(FieldKind::Enum(values)) => ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(format!("^({})$", values.join("|"))))
            .into(),
        ExplicitKind::Equals(kind) => value(kind).into(),
    };
    ParameterBuilder::new()
        .name(e.param)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(e.description))
        .schema(Some(schema))
        .build()
}
