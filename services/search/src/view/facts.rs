//! A product's facts (what listings filter and sort by) read straight
//! from its encoded summary, as `text` reads its document text. A build
//! reads every product's facts once more after tantivy has committed, and
//! decoding each into a `Product` first (names and descriptions in every
//! locale into maps, every string owned) to keep a dozen fields was most
//! of that read. Same rules as prost's decode: the last of a field twice,
//! messages merged, repeated fields added up, unknown fields skipped.

use prost::encoding::decode_key;
use storefront_domain::catalog::{ProductFacts, SORT_LOCALE};
use storefront_domain::currencies::Code;
use storefront_domain::interned::Interned;

use super::wire::{Wire, delimited, localized_entries, skip, string, varint, wrong};

/// `Product`'s fields (storefront/catalog/v1) that facts are made of.
const META: u32 = 1;
const KEY: u32 = 2;
const NAME: u32 = 3;
const BRAND: u32 = 6;
const CATEGORY_IDS: u32 = 7;
const STATUS: u32 = 8;
const FEATURED: u32 = 9;
const POPULARITY: u32 = 10;
const IN_STOCK: u32 = 11;
const MASTER_VARIANT: u32 = 13;
const VARIANT_ATTRIBUTES: u32 = 16;
/// `ResourceMeta.id`, `.created_at`; `Timestamp.seconds`, `.nanos`.
const ID: u32 = 1;
const CREATED_AT: u32 = 3;
const SECONDS: u32 = 1;
const NANOS: u32 = 2;
/// `Variant.prices`; `Money.currency_code`, `.cent_amount`.
const PRICES: u32 = 5;
const CURRENCY_CODE: u32 = 1;
const CENT_AMOUNT: u32 = 2;

/// The facts' fields as read, borrowed from the bytes.
#[derive(Default)]
struct Read<'a> {
    id: &'a str,
    key: &'a str,
    name: Option<&'a str>,
    brand: &'a str,
    category_ids: Vec<&'a str>,
    status: i32,
    featured: bool,
    popularity: u32,
    in_stock: bool,
    created_at: Option<(i64, i32)>,
    /// The master variant's prices as read (code, amount).
    prices: Vec<(&'a str, i64)>,
    attributes: Vec<&'a str>,
}

/// The facts of the encoded `storefront.catalog.v1.Product` in `bytes`
/// (a listing summary), as `ProductFacts::interned` makes them of it.
pub fn facts(bytes: &[u8], strings: &mut Interned) -> Result<ProductFacts, String> {
    let read = Read::decode(bytes)?;
    let mut attributes: Vec<_> = read.attributes.iter().map(|a| strings.get(a)).collect();
    attributes.sort_unstable();
    attributes.dedup();
    Ok(ProductFacts {
        id: read.id.into(),
        key: read.key.into(),
        name: read.name.map(Into::into),
        brand: strings.get(read.brand),
        category_ids: {
            let path: Vec<_> = read.category_ids.iter().map(|c| strings.get(c)).collect();
            strings.set(&path)
        },
        status: read.status,
        featured: read.featured,
        popularity: read.popularity,
        in_stock: read.in_stock,
        created_at: read.created_at,
        prices: (read.prices.iter())
            .filter_map(|&(code, amount)| Some((Code::parse(code)?, amount)))
            .collect(),
        attributes: strings.set(&attributes),
    })
}

impl<'a> Read<'a> {
    fn decode(mut bytes: Wire<'a>) -> Result<Self, String> {
        let buf = &mut bytes;
        let mut read = Read::default();
        while !buf.is_empty() {
            let (tag, wire) = decode_key(buf).map_err(wrong)?;
            // Varints as prost reads each type: truncated, or not zero.
            match tag {
                META => read.meta(delimited(wire, buf)?)?,
                KEY => read.key = string(wire, buf)?,
                NAME => read.name(delimited(wire, buf)?)?,
                BRAND => read.brand = string(wire, buf)?,
                CATEGORY_IDS => read.category_ids.push(string(wire, buf)?),
                STATUS => read.status = varint(wire, buf)? as i32,
                FEATURED => read.featured = varint(wire, buf)? != 0,
                POPULARITY => read.popularity = varint(wire, buf)? as u32,
                IN_STOCK => read.in_stock = varint(wire, buf)? != 0,
                MASTER_VARIANT => read.variant(delimited(wire, buf)?)?,
                VARIANT_ATTRIBUTES => read.attributes.push(string(wire, buf)?),
                _ => skip(wire, tag, buf)?,
            }
        }
        Ok(read)
    }

    fn meta(&mut self, mut bytes: Wire<'a>) -> Result<(), String> {
        let buf = &mut bytes;
        while !buf.is_empty() {
            let (tag, wire) = decode_key(buf).map_err(wrong)?;
            match tag {
                ID => self.id = string(wire, buf)?,
                CREATED_AT => {
                    let at = self.created_at.get_or_insert((0, 0));
                    timestamp(delimited(wire, buf)?, at)?;
                }
                _ => skip(wire, tag, buf)?,
            }
        }
        Ok(())
    }

    /// The `SORT_LOCALE` entry of a `LocalizedString`, over any before.
    fn name(&mut self, bytes: Wire<'a>) -> Result<(), String> {
        localized_entries(bytes, |locale, text| {
            if locale == SORT_LOCALE {
                self.name = Some(text);
            }
        })
    }

    fn variant(&mut self, mut bytes: Wire<'a>) -> Result<(), String> {
        let buf = &mut bytes;
        while !buf.is_empty() {
            let (tag, wire) = decode_key(buf).map_err(wrong)?;
            match tag {
                PRICES => self.prices.push(money(delimited(wire, buf)?)?),
                _ => skip(wire, tag, buf)?,
            }
        }
        Ok(())
    }
}

/// A `Timestamp`'s fields merged into `at`.
fn timestamp(mut bytes: Wire<'_>, at: &mut (i64, i32)) -> Result<(), String> {
    let buf = &mut bytes;
    while !buf.is_empty() {
        let (tag, wire) = decode_key(buf).map_err(wrong)?;
        match tag {
            SECONDS => at.0 = varint(wire, buf)? as i64,
            NANOS => at.1 = varint(wire, buf)? as i32,
            _ => skip(wire, tag, buf)?,
        }
    }
    Ok(())
}

/// A `Money`'s currency code and amount.
fn money(mut bytes: Wire<'_>) -> Result<(&str, i64), String> {
    let buf = &mut bytes;
    let (mut code, mut amount) = ("", 0);
    while !buf.is_empty() {
        let (tag, wire) = decode_key(buf).map_err(wrong)?;
        match tag {
            CURRENCY_CODE => code = string(wire, buf)?,
            CENT_AMOUNT => amount = varint(wire, buf)? as i64,
            _ => skip(wire, tag, buf)?,
        }
    }
    Ok((code, amount))
}

#[cfg(test)]
#[path = "facts_tests.rs"]
mod tests;
