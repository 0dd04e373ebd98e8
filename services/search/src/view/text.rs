//! A product's document text read straight from its encoded bytes: the
//! strings are borrowed, not decoded into a `Product`'s strings and maps.
//! An index build reads every exported product once, and decoding each
//! one's names and descriptions in every locale (three, two of them used)
//! into owned strings was most of that read. The wire is read with prost's
//! own helpers, with its rules: a field seen twice keeps its last value,
//! a message seen twice is merged, an unknown field is skipped.

use prost::encoding::decode_key;

use super::wire::{Wire, delimited, localized_entries, skip, string, varint, wrong};
use super::{DocumentText, LOCALES};

/// `Product`'s fields a document is made of (storefront/catalog/v1).
const NAME: u32 = 3;
const DESCRIPTION: u32 = 4;
const BRAND: u32 = 6;
const CATEGORY_IDS: u32 = 7;
const POPULARITY: u32 = 10;

impl<'a> DocumentText<'a> {
    /// The document text of the encoded `storefront.catalog.v1.Product`
    /// (a listing summary or the whole product) in `bytes`.
    pub fn decode(mut bytes: Wire<'a>) -> Result<Self, String> {
        let buf = &mut bytes;
        let mut text = DocumentText::default();
        while !buf.is_empty() {
            let (tag, wire) = decode_key(buf).map_err(wrong)?;
            match tag {
                NAME => localized(delimited(wire, buf)?, &mut text.name)?,
                DESCRIPTION => localized(delimited(wire, buf)?, &mut text.description)?,
                BRAND => text.brand = string(wire, buf)?,
                CATEGORY_IDS => text.category_ids.push(string(wire, buf)?),
                // As prost reads a uint32: the varint truncated.
                POPULARITY => text.popularity = varint(wire, buf)? as u32,
                _ => skip(wire, tag, buf)?,
            }
        }
        Ok(text)
    }
}

/// The values of `LOCALES` in an encoded `LocalizedString`, over those
/// in `texts` (a later entry of a locale wins, as in a map decoded).
fn localized<'a>(bytes: Wire<'a>, texts: &mut [&'a str; 2]) -> Result<(), String> {
    localized_entries(bytes, |locale, text| {
        if let Some(at) = LOCALES.iter().position(|&l| l == locale) {
            texts[at] = text;
        }
    })
}

#[cfg(test)]
mod tests {
    use prost::Message;
    use storefront_proto::catalog::v1::{Media, Product, Variant};
    use storefront_proto::common::v1::LocalizedString;

    use super::*;

    fn localized(pairs: &[(&str, &str)]) -> Option<LocalizedString> {
        Some(LocalizedString {
            values: pairs
                .iter()
                .map(|&(l, t)| (l.to_string(), t.to_string()))
                .collect(),
        })
    }

    fn product() -> Product {
        let texts = [
            ("de-DE", "Leinenhemd"),
            ("en-AU", "Linen Shirt"),
            ("en-NZ", "Linen Shirt NZ"),
        ];
        Product {
            key: "linen-shirt".into(),
            name: localized(&texts),
            description: localized(&[("en-AU", "A shirt of linen."), ("fr-FR", "Une chemise.")]),
            slug: localized(&texts),
            brand: "Aoraki".into(),
            category_ids: vec!["root".into(), "shirts".into()],
            popularity: 4_000_000_000,
            master_variant: Some(Variant {
                sku: "SKU-1".into(),
                ..Default::default()
            }),
            media: vec![Media {
                alt: localized(&texts),
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn borrowed_text_is_what_the_decoded_product_gives() {
        for p in [product(), Product::default()] {
            let bytes = p.encode_to_vec();
            assert_eq!(DocumentText::decode(&bytes), Ok(DocumentText::from(&p)));
        }
        let p = product();
        let text = DocumentText::from(&p);
        assert_eq!(text.name, ["Linen Shirt", "Leinenhemd"]);
        assert_eq!(text.description, ["A shirt of linen.", ""]);
        assert_eq!(text.popularity, 4_000_000_000);
    }

    #[test]
    fn a_field_written_twice_reads_as_prost_reads_it() {
        // Concatenated encodings are one message merged: scalars and
        // strings keep the last, maps and repeated fields add up.
        let first = product();
        let second = Product {
            name: localized(&[("de-DE", "Hemd")]),
            brand: "Kea".into(),
            category_ids: vec!["sale".into()],
            popularity: 7,
            ..Default::default()
        };
        let mut bytes = first.encode_to_vec();
        second.encode(&mut bytes).unwrap();
        let merged = Product::decode(bytes.as_slice()).unwrap();
        let text = DocumentText::decode(&bytes).unwrap();
        assert_eq!(text, DocumentText::from(&merged));
        assert_eq!(text.name, ["Linen Shirt", "Hemd"]);
        assert_eq!(text.category_ids, ["root", "shirts", "sale"]);
    }

    #[test]
    fn broken_bytes_are_refused_as_prost_refuses_them() {
        let bytes = product().encode_to_vec();
        for cut in [1, bytes.len() / 2, bytes.len() - 1] {
            let short = &bytes[..cut];
            if Product::decode(short).is_err() {
                assert!(DocumentText::decode(short).is_err(), "cut at {cut}");
            }
        }
        // The brand (tag 6) as a varint, then a string not UTF-8.
        assert!(DocumentText::decode(&[6 << 3, 1]).is_err());
        assert!(DocumentText::decode(&[(6 << 3) | 2, 2, 0xff, 0xfe]).is_err());
        assert!(Product::decode([(6 << 3) | 2, 2, 0xff, 0xfe].as_slice()).is_err());
    }
}
