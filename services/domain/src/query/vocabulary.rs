//! What each collection accepts, declared once: its sortable fields, its
//! structured filter fields with their types, and its explicit filter
//! parameters. The gateway validates queries and writes their OpenAPI
//! parameters from these tables; each service's `Schema::resolve` is
//! checked against them ([`assert_schema_follows`]).

use storefront_proto::common::v1::FilterOperator;

use super::{FieldType, Schema};

/// The type of a filterable field, which decides its operators and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    Text,
    Integer,
    /// A non-negative amount in cents.
    Cents,
    Boolean,
    Timestamp,
    /// One of a fixed set of values.
    Enum(&'static [&'static str]),
    /// An opaque identifier.
    Id,
    /// A product's variant attributes, filtered by name:
    /// `filter[attributes.colour]=Navy` (eq: some variant has it; ne: none
    /// has).
    Attribute,
}

impl FieldKind {
    pub fn allows(self, op: FilterOperator) -> bool {
        let ordered = matches!(
            self,
            FieldKind::Integer | FieldKind::Cents | FieldKind::Timestamp | FieldKind::Text
        );
        matches!(op, FilterOperator::Eq | FilterOperator::Ne) || ordered
    }
}

/// An explicit filter parameter (a named parameter such as `brand`, beside `filter[...]`).
#[derive(Debug, Clone, Copy)]
pub struct Explicit {
    /// The query parameter, e.g. `minPrice`.
    pub param: &'static str,
    /// The field it filters, e.g. `price`.
    pub field: &'static str,
    pub kind: ExplicitKind,
    /// What it means, for the published contract.
    pub description: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub enum ExplicitKind {
    /// `field eq value`, with the value typed by `FieldKind`.
    Equals(FieldKind),
    /// `field gte value` in cents.
    Min,
    /// `field lte value` in cents.
    Max,
}

#[derive(Debug, Clone, Copy)]
pub struct CollectionSpec {
    pub sort_fields: &'static [&'static str],
    pub filter_fields: &'static [(&'static str, FieldKind)],
    pub explicit: &'static [Explicit],
}

pub const PRODUCT_STATUSES: &[&str] = &storefront_proto::names::PRODUCT_STATUSES;

pub const PRODUCTS: CollectionSpec = CollectionSpec {
    sort_fields: &[
        "name",
        "price",
        "createdAt",
        "popularity",
        "featured",
        "inStock",
        "status",
        "brand",
    ],
    filter_fields: &[
        ("name", FieldKind::Text),
        ("price", FieldKind::Cents),
        ("createdAt", FieldKind::Timestamp),
        ("popularity", FieldKind::Integer),
        ("featured", FieldKind::Boolean),
        ("status", FieldKind::Enum(PRODUCT_STATUSES)),
        ("inStock", FieldKind::Boolean),
        ("category", FieldKind::Id),
        ("brand", FieldKind::Text),
        ("key", FieldKind::Text),
        ("attributes", FieldKind::Attribute),
    ],
    explicit: &[
        Explicit {
            param: "category",
            field: "category",
            kind: ExplicitKind::Equals(FieldKind::Id),
            description: "A category id: products in that category or any category below it.",
        },
        Explicit {
            param: "brand",
            field: "brand",
            kind: ExplicitKind::Equals(FieldKind::Text),
            description: "Exact brand name.",
        },
        Explicit {
            param: "status",
            field: "status",
            kind: ExplicitKind::Equals(FieldKind::Enum(PRODUCT_STATUSES)),
            description: "active, inactive or discontinued. Without it every status is listed.",
        },
        Explicit {
            param: "inStock",
            field: "inStock",
            kind: ExplicitKind::Equals(FieldKind::Boolean),
            description: "Only products with (true) or without (false) a variant in stock.",
        },
        Explicit {
            param: "featured",
            field: "featured",
            kind: ExplicitKind::Equals(FieldKind::Boolean),
            description: "Only featured products (true) or the others (false).",
        },
        Explicit {
            param: "minPrice",
            field: "price",
            kind: ExplicitKind::Min,
            description: "Lowest master-variant price, in cents of the requested currency.",
        },
        Explicit {
            param: "maxPrice",
            field: "price",
            kind: ExplicitKind::Max,
            description: "Highest master-variant price, in cents of the requested currency.",
        },
    ],
};

pub const CATEGORIES: CollectionSpec = CollectionSpec {
    sort_fields: &["name", "position"],
    filter_fields: &[],
    explicit: &[],
};

pub const COLLECTIONS: CollectionSpec = CollectionSpec {
    sort_fields: &["name", "position"],
    filter_fields: &[],
    explicit: &[],
};

/// Small lists served whole and paged by the gateway (variants, media).
pub const SUB_COLLECTION: CollectionSpec = CollectionSpec {
    sort_fields: &[],
    filter_fields: &[],
    explicit: &[],
};

pub const ADDRESSES: CollectionSpec = CollectionSpec {
    sort_fields: &["createdAt", "city", "country"],
    filter_fields: &[
        ("isDefault", FieldKind::Boolean),
        ("createdAt", FieldKind::Timestamp),
        ("city", FieldKind::Text),
        ("country", FieldKind::Text),
    ],
    explicit: &[Explicit {
        param: "isDefault",
        field: "isDefault",
        kind: ExplicitKind::Equals(FieldKind::Boolean),
        description: "Only the default address (true) or the others (false).",
    }],
};

pub const ORDER_STATUSES: &[&str] = &storefront_proto::names::ORDER_STATUSES;

pub const ORDERS: CollectionSpec = CollectionSpec {
    sort_fields: &["createdAt", "status", "totalAmount"],
    filter_fields: &[
        ("createdAt", FieldKind::Timestamp),
        ("status", FieldKind::Enum(ORDER_STATUSES)),
        ("totalAmount", FieldKind::Cents),
    ],
    explicit: &[],
};

impl FieldKind {
    /// Whether a service's field type is how this kind is compared: ids
    /// are text, or sets of them (a product's categories).
    pub fn is_typed_as(self, ty: FieldType) -> bool {
        match self {
            FieldKind::Text | FieldKind::Enum(_) => ty == FieldType::Text,
            FieldKind::Integer | FieldKind::Cents => ty == FieldType::Integer,
            FieldKind::Boolean => ty == FieldType::Boolean,
            FieldKind::Timestamp => ty == FieldType::Timestamp,
            FieldKind::Id => matches!(ty, FieldType::Text | FieldType::TextSet),
            FieldKind::Attribute => ty == FieldType::TextSet,
        }
    }
}

/// Every collection, to check a schema names no field of another.
const ALL: &[&CollectionSpec] = &[&PRODUCTS, &CATEGORIES, &COLLECTIONS, &ADDRESSES, &ORDERS];

/// Panics unless `S` resolves exactly the fields `spec` declares, each
/// filter field with its declared type. For each service's tests.
pub fn assert_schema_follows<S: Schema>(spec: &CollectionSpec) {
    for name in spec.sort_fields {
        assert!(S::resolve(name).is_some(), "sort field {name} unresolved");
    }
    for (name, kind) in spec.filter_fields {
        let ty = S::resolve(name).map(|(_, ty)| ty);
        assert!(
            ty.is_some_and(|ty| kind.is_typed_as(ty)),
            "filter field {name}: {kind:?} declared, {ty:?} resolved"
        );
    }
    let declared = |name: &str| {
        spec.sort_fields.contains(&name) || spec.filter_fields.iter().any(|(n, _)| *n == name)
    };
    let names = ALL.iter().flat_map(|s| {
        s.sort_fields
            .iter()
            .chain(s.filter_fields.iter().map(|(n, _)| n))
    });
    for name in names.chain(["id", "key", "position", "name"].iter()) {
        assert!(
            S::resolve(name).is_none() || declared(name),
            "{name} resolves but is not declared"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_product_schema_follows_the_vocabulary() {
        assert_schema_follows::<crate::catalog::ProductSchema>(&PRODUCTS);
    }
}
