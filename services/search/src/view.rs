//! What indexing reads of an exported product (a listing summary): the
//! text searched and the facts listings filter and sort by, its variants'
//! attributes among them. Everything else (slugs, media, the master
//! variant's SKU, attributes and media) is skipped by protobuf rather
//! than decoded into strings and maps only to be dropped.

mod facts;
mod text;
mod wire;

pub use facts::facts;

use storefront_proto::catalog::v1::{Product, Variant};
use storefront_proto::common::v1::{LocalizedString, Money, ResourceMeta};

/// `storefront.catalog.v1.Product`, the fields indexing reads (same tags).
#[derive(Clone, PartialEq, prost::Message)]
pub struct IndexedProduct {
    #[prost(message, optional, tag = "1")]
    pub meta: Option<ResourceMeta>,
    #[prost(string, tag = "2")]
    pub key: String,
    #[prost(message, optional, tag = "3")]
    pub name: Option<LocalizedString>,
    #[prost(message, optional, tag = "4")]
    pub description: Option<LocalizedString>,
    #[prost(string, tag = "6")]
    pub brand: String,
    #[prost(string, repeated, tag = "7")]
    pub category_ids: Vec<String>,
    #[prost(int32, tag = "8")]
    pub status: i32,
    #[prost(bool, tag = "9")]
    pub featured: bool,
    #[prost(uint32, tag = "10")]
    pub popularity: u32,
    #[prost(bool, tag = "11")]
    pub in_stock: bool,
    #[prost(message, optional, tag = "13")]
    pub master_variant: Option<VariantPrices>,
    #[prost(string, repeated, tag = "16")]
    pub variant_attributes: Vec<String>,
}

/// The locale each language's fields are filled from.
pub const LOCALES: [&str; 2] = ["en-AU", "de-DE"];

/// What a product's search document is made of: its name and description
/// in each of `LOCALES`, brand, categories and popularity (its tie key).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DocumentText<'a> {
    pub name: [&'a str; 2],
    pub description: [&'a str; 2],
    pub brand: &'a str,
    pub category_ids: Vec<&'a str>,
    pub popularity: u32,
}

pub(crate) fn local<'a>(ls: Option<&'a LocalizedString>, locale: &str) -> &'a str {
    ls.and_then(|l| l.values.get(locale))
        .map_or("", String::as_str)
}

impl<'a> From<&'a Product> for DocumentText<'a> {
    fn from(p: &'a Product) -> Self {
        DocumentText {
            name: LOCALES.map(|l| local(p.name.as_ref(), l)),
            description: LOCALES.map(|l| local(p.description.as_ref(), l)),
            brand: &p.brand,
            category_ids: p.category_ids.iter().map(String::as_str).collect(),
            popularity: p.popularity,
        }
    }
}

/// `storefront.catalog.v1.Variant`, its prices only.
#[derive(Clone, PartialEq, prost::Message)]
pub struct VariantPrices {
    #[prost(message, repeated, tag = "5")]
    pub prices: Vec<Money>,
}

impl From<IndexedProduct> for Product {
    fn from(p: IndexedProduct) -> Self {
        Product {
            meta: p.meta,
            key: p.key,
            name: p.name,
            description: p.description,
            brand: p.brand,
            category_ids: p.category_ids,
            status: p.status,
            featured: p.featured,
            popularity: p.popularity,
            in_stock: p.in_stock,
            master_variant: p.master_variant.map(|v| Variant {
                prices: v.prices,
                ..Default::default()
            }),
            variant_attributes: p.variant_attributes,
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use storefront_domain::catalog::ProductFacts;

    use super::*;

    fn localized(text: &str) -> Option<LocalizedString> {
        Some(LocalizedString {
            values: [("en-AU", text), ("de-DE", text)]
                .map(|(l, t)| (l.to_string(), t.to_string()))
                .into(),
        })
    }

    #[test]
    fn the_view_reads_what_indexing_needs_as_the_whole_product_does() {
        let money = |c: &str, cents| Money {
            currency_code: c.into(),
            cent_amount: cents,
            fraction_digits: 2,
        };
        let media = storefront_proto::catalog::v1::Media {
            id: "m".into(),
            url: "https://x/m.jpg".into(),
            alt: localized("alt"),
            ..Default::default()
        };
        let variant = Variant {
            id: 1,
            sku: "SKU-1".into(),
            attributes: [("size".to_string(), "M".to_string())].into(),
            prices: vec![money("AUD", 4995), money("NZD", 5499)],
            media: vec![media.clone()],
            ..Default::default()
        };
        let p = Product {
            meta: Some(ResourceMeta {
                id: "p1".into(),
                version: 3,
                created_at: Some(storefront_proto::Timestamp {
                    seconds: 1_700_000_000,
                    nanos: 5,
                }),
                last_modified_at: None,
            }),
            key: "linen-shirt".into(),
            name: localized("Linen Shirt"),
            description: localized("A linen shirt."),
            slug: localized("linen-shirt"),
            brand: "Aoraki".into(),
            category_ids: vec!["c1".into(), "c2".into()],
            status: 2,
            featured: true,
            popularity: 77,
            in_stock: true,
            master_variant: Some(variant.clone()),
            variants: vec![variant],
            media: vec![media],
            ..Default::default()
        };
        // As exported: a listing summary, its variants' attributes beside it.
        let bytes = storefront_domain::catalog::summary(&p).encode_to_vec();
        let view: Product = IndexedProduct::decode(bytes.as_slice()).unwrap().into();
        assert_eq!(ProductFacts::of(&view), ProductFacts::of(&p));
        assert_eq!(
            (
                &view.name,
                &view.description,
                &view.brand,
                &view.category_ids
            ),
            (&p.name, &p.description, &p.brand, &p.category_ids)
        );
        assert!(view.media.is_empty() && view.slug.is_none() && view.variants.is_empty());
        // What a document is made of, read from the summary as exported.
        let text = DocumentText::decode(&bytes).unwrap();
        assert_eq!(text, DocumentText::from(&p));
    }
}
