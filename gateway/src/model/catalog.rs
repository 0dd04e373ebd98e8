//! Products, variants, media, categories and collections.

use serde::Serialize;
use storefront_proto::catalog::v1 as pb;
use utoipa::ToSchema;

use super::common::{LocalizedString, Meta, Money, localized};
use crate::error::ApiError;

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Media {
    pub id: String,
    pub url: String,
    /// `image` or `video`.
    #[serde(rename = "type")]
    #[schema(example = "image")]
    pub kind: &'static str,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub alt: LocalizedString,
    pub width: u32,
    pub height: u32,
    pub position: u32,
}

impl From<pb::Media> for Media {
    fn from(m: pb::Media) -> Self {
        let kind = if m.r#type == pb::MediaType::Video as i32 {
            "video"
        } else {
            "image"
        };
        Self {
            id: m.id,
            url: m.url,
            kind,
            alt: localized(m.alt),
            width: m.width,
            height: m.height,
            position: m.position,
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Availability {
    pub in_stock: bool,
    pub quantity: u32,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Variant {
    /// Unique within its product.
    pub id: u32,
    pub sku: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub attributes: std::collections::BTreeMap<String, String>,
    /// The price in the requested currency.
    pub price: Money,
    /// Every price of the variant, one per currency.
    pub prices: Vec<Money>,
    pub availability: Availability,
    pub media: Vec<Media>,
}

impl TryFrom<pb::Variant> for Variant {
    type Error = ApiError;
    fn try_from(v: pb::Variant) -> Result<Self, ApiError> {
        let availability = v.availability.unwrap_or_default();
        Ok(Self {
            id: v.id,
            sku: v.sku,
            attributes: v.attributes,
            price: v
                .price
                .map(Money::from)
                .ok_or_else(|| ApiError::bad_gateway("variant without price"))?,
            prices: v.prices.into_iter().map(Money::from).collect(),
            availability: Availability {
                in_stock: availability.in_stock,
                quantity: availability.quantity,
            },
            media: v.media.into_iter().map(Media::from).collect(),
        })
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    #[serde(flatten)]
    pub meta: Meta,
    pub key: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub description: LocalizedString,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub slug: LocalizedString,
    pub brand: String,
    /// The product's category and its ancestors, root first.
    pub category_ids: Vec<String>,
    /// active, inactive or discontinued.
    #[schema(example = "active")]
    pub status: &'static str,
    pub featured: bool,
    pub popularity: u32,
    pub in_stock: bool,
    /// The master variant's price in the requested currency.
    pub price: Money,
    pub master_variant: Variant,
    /// Every variant, master included; product detail only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variants: Option<Vec<Variant>>,
    pub media: Vec<Media>,
}

pub use storefront_proto::names::product_status as status_name;

impl Product {
    /// `detail` keeps the variants list; listings leave it out.
    pub fn from_proto(p: pb::Product, detail: bool) -> Result<Self, ApiError> {
        let master = p
            .master_variant
            .ok_or_else(|| ApiError::bad_gateway("product without master variant"))?;
        let variants = if detail {
            Some(
                p.variants
                    .into_iter()
                    .map(Variant::try_from)
                    .collect::<Result<Vec<_>, _>>()?,
            )
        } else {
            None
        };
        Ok(Self {
            meta: Meta::from_proto(p.meta)?,
            key: p.key,
            name: localized(p.name),
            description: localized(p.description),
            slug: localized(p.slug),
            brand: p.brand,
            category_ids: p.category_ids,
            status: status_name(p.status),
            featured: p.featured,
            popularity: p.popularity,
            in_stock: p.in_stock,
            price: p
                .price
                .map(Money::from)
                .ok_or_else(|| ApiError::bad_gateway("product without price"))?,
            master_variant: Variant::try_from(master)?,
            variants,
            media: p.media.into_iter().map(Media::from).collect(),
        })
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CategoryRef {
    pub id: String,
    pub key: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub slug: LocalizedString,
}

impl From<pb::CategoryRef> for CategoryRef {
    fn from(c: pb::CategoryRef) -> Self {
        Self {
            id: c.id,
            key: c.key,
            name: localized(c.name),
            slug: localized(c.slug),
        }
    }
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Category {
    #[serde(flatten)]
    pub meta: Meta,
    pub key: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub slug: LocalizedString,
    /// Absent for a root category.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<String>,
    /// Order among its siblings.
    pub position: u32,
    /// From the root down to the parent.
    pub ancestors: Vec<CategoryRef>,
}

impl TryFrom<pb::Category> for Category {
    type Error = ApiError;
    fn try_from(c: pb::Category) -> Result<Self, ApiError> {
        Ok(Self {
            meta: Meta::from_proto(c.meta)?,
            key: c.key,
            name: localized(c.name),
            slug: localized(c.slug),
            parent_id: Some(c.parent_id).filter(|p| !p.is_empty()),
            position: c.position,
            ancestors: c.ancestors.into_iter().map(CategoryRef::from).collect(),
        })
    }
}

/// A node of the navigation tree.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CategoryNode {
    pub id: String,
    pub key: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub slug: LocalizedString,
    pub position: u32,
    #[schema(no_recursion)]
    pub children: Vec<CategoryNode>,
}

impl TryFrom<pb::CategoryNode> for CategoryNode {
    type Error = ApiError;
    fn try_from(node: pb::CategoryNode) -> Result<Self, ApiError> {
        let c = node
            .category
            .ok_or_else(|| ApiError::bad_gateway("tree node without category"))?;
        Ok(Self {
            id: c
                .meta
                .map(|m| m.id)
                .ok_or_else(|| ApiError::bad_gateway("category without meta"))?,
            key: c.key,
            name: localized(c.name),
            slug: localized(c.slug),
            position: c.position,
            children: node
                .children
                .into_iter()
                .map(CategoryNode::try_from)
                .collect::<Result<_, _>>()?,
        })
    }
}

/// The navigation tree, roots in position order.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CategoryTree {
    pub roots: Vec<CategoryNode>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Collection {
    #[serde(flatten)]
    pub meta: Meta,
    pub key: String,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub name: LocalizedString,
    #[schema(value_type = std::collections::HashMap<String, String>)]
    pub description: LocalizedString,
    /// The products of the collection, in merchandised order.
    pub product_ids: Vec<String>,
    pub position: u32,
}

impl TryFrom<pb::Collection> for Collection {
    type Error = ApiError;
    fn try_from(c: pb::Collection) -> Result<Self, ApiError> {
        Ok(Self {
            meta: Meta::from_proto(c.meta)?,
            key: c.key,
            name: localized(c.name),
            description: localized(c.description),
            product_ids: c.product_ids,
            position: c.position,
        })
    }
}
