//! A product's JSON written straight from its protobuf bytes: the same
//! bytes `serde_json` writes for `model::catalog::Product` (listing form,
//! no variant list), field for field, without building the message or the
//! model (tests hold the two to byte equality).

use serde::Serialize;
use storefront_proto::Timestamp;

use super::wire::{Message, Result, Value, WireError, utf8};
use crate::model::catalog::status_name;

/// Appends `value` as JSON (strings escaped, numbers formatted) as
/// `serde_json` does.
pub(super) fn json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Writing to a Vec cannot fail, and these values always serialise.
    let _ = value.serialize(&mut serde_json::Serializer::new(out));
}

/// Appends a string field (its bytes as they came) as a JSON string,
/// escaped as `serde_json` escapes it; bytes that are not UTF-8 are an
/// error. Most strings (ids, names, URLs) are ASCII without a byte to
/// escape: one pass over eight bytes at a time checks both, and they are
/// copied whole.
pub(super) fn text(out: &mut Vec<u8>, bytes: &[u8]) -> Result<()> {
    if plain_ascii(bytes) {
        quoted(out, bytes);
        return Ok(());
    }
    string(out, utf8(bytes)?);
    Ok(())
}

/// Appends `s` as a JSON string, escaped as `serde_json` escapes it.
pub(super) fn string(out: &mut Vec<u8>, s: &str) {
    if s.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\') {
        json(out, s);
    } else {
        quoted(out, s.as_bytes());
    }
}

fn quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    out.extend_from_slice(bytes);
    out.push(b'"');
}

/// Whether every byte is ASCII that JSON leaves as it is (no quote,
/// backslash or control character): eight bytes a step, with the classic
/// "has a byte less than n" and "has a zero byte" word tricks.
fn plain_ascii(bytes: &[u8]) -> bool {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let mut chunks = bytes.chunks_exact(8);
    let mut bad = 0u64;
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let x = u64::from_ne_bytes(word);
        bad |= (x & HIGH)
            | (x.wrapping_sub(ONES * 0x20) & !x & HIGH)
            | has_zero(x ^ (ONES * u64::from(b'"')))
            | has_zero(x ^ (ONES * u64::from(b'\\')));
    }
    bad == 0
        && chunks
            .remainder()
            .iter()
            .all(|&b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\')
}

/// Appends an integer as JSON.
pub(super) fn integer(out: &mut Vec<u8>, n: impl itoa::Integer) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

fn boolean(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

/// `,"key":` (or without the comma for the first key).
pub(super) fn key(out: &mut Vec<u8>, first: bool, key: &str) {
    if !first {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

/// A message field that must be there, as `from_proto` requires it.
pub(super) fn required<'m, 'a>(m: &'m Message<'a>, what: &'static str) -> Result<&'m Message<'a>> {
    if m.is_present() {
        Ok(m)
    } else {
        Err(WireError::missing(what))
    }
}

/// A repeated field's values as one pass met them: on the stack while
/// few (a product has a few categories, pictures and prices), so writing
/// a page allocates nothing for them.
type Values<'a> = smallvec::SmallVec<[Value<'a>; 8]>;

/// The listing form of one product: everything but `variants`.
pub fn product(out: &mut Vec<u8>, p: &Message<'_>, locale: Projection<'_>) -> Result<()> {
    let (mut meta, mut name, mut description, mut slug) = Default::default();
    let (mut price, mut master) = (Message::default(), Message::default());
    let (mut key_, mut brand, mut status): (&[u8], &[u8], i32) = (b"", b"", 0);
    let (mut featured, mut popularity, mut in_stock) = (false, 0u32, false);
    // Repeated fields kept as they pass: read once, not once more each.
    let (mut categories, mut media) = (Values::new(), Values::new());
    for field in p.fields() {
        match field? {
            (1, v) => merge(&mut meta, v)?,
            (2, v) => key_ = v.text()?,
            (3, v) => merge(&mut name, v)?,
            (4, v) => merge(&mut description, v)?,
            (5, v) => merge(&mut slug, v)?,
            (6, v) => brand = v.text()?,
            (7, v) => categories.push(v),
            (8, v) => status = v.varint()? as i32,
            (9, v) => featured = v.varint()? != 0,
            (10, v) => popularity = v.varint()? as u32,
            (11, v) => in_stock = v.varint()? != 0,
            (12, v) => merge(&mut price, v)?,
            (13, v) => merge(&mut master, v)?,
            // Not in the listing form; refused as the model refuses it.
            (14, v) => {
                v.bytes()?;
            }
            (15, v) => media.push(v),
            // Search's index reads them; no representation shows them.
            (16, v) => {
                utf8(v.text()?)?;
            }
            _ => {}
        }
    }
    let master = required(&master, "product without master variant")?;
    let price = required(&price, "product without price")?;
    let meta = required(&meta, "resource without meta")?;
    out.push(b'{');
    resource_meta(out, meta)?;
    key(out, false, "key");
    text(out, key_)?;
    for (name_, text) in [
        ("name", &name),
        ("description", &description),
        ("slug", &slug),
    ] {
        key(out, false, name_);
        localized(out, text, locale)?;
    }
    key(out, false, "brand");
    text(out, brand)?;
    key(out, false, "categoryIds");
    out.push(b'[');
    for (i, id) in categories.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        text(out, id.text()?)?;
    }
    out.push(b']');
    key(out, false, "status");
    string(out, status_name(status));
    key(out, false, "featured");
    boolean(out, featured);
    key(out, false, "popularity");
    integer(out, popularity);
    key(out, false, "inStock");
    boolean(out, in_stock);
    key(out, false, "price");
    money(out, price)?;
    key(out, false, "masterVariant");
    variant(out, master, locale)?;
    key(out, false, "media");
    media_list(out, media, locale)?;
    out.push(b'}');
    Ok(())
}

pub(super) fn merge<'a>(m: &mut Message<'a>, v: Value<'a>) -> Result<()> {
    m.merge(v.bytes()?);
    Ok(())
}

/// The flattened `Meta`: id, version, createdAt, lastModifiedAt.
pub(super) fn resource_meta(out: &mut Vec<u8>, m: &Message<'_>) -> Result<()> {
    let (mut id, mut version): (&[u8], i64) = (b"", 0);
    let (mut created, mut modified) = (Message::default(), Message::default());
    for field in m.fields() {
        match field? {
            (1, v) => id = v.text()?,
            (2, v) => version = v.varint()? as i64,
            (3, v) => merge(&mut created, v)?,
            (4, v) => merge(&mut modified, v)?,
            _ => {}
        }
    }
    key(out, true, "id");
    text(out, id)?;
    key(out, false, "version");
    integer(out, version);
    key(out, false, "createdAt");
    timestamp(out, &created)?;
    key(out, false, "lastModifiedAt");
    timestamp(out, &modified)
}

/// RFC 3339 as `model::common::timestamp` writes it; "" when absent.
fn timestamp(out: &mut Vec<u8>, m: &Message<'_>) -> Result<()> {
    if !m.is_present() {
        string(out, "");
        return Ok(());
    }
    let mut ts = Timestamp::default();
    for field in m.fields() {
        match field? {
            (1, v) => ts.seconds = v.varint()? as i64,
            (2, v) => ts.nanos = v.varint()? as i32,
            _ => {}
        }
    }
    out.push(b'"');
    storefront_domain::time::write_rfc3339(out, &ts);
    out.push(b'"');
    Ok(())
}

/// Which locale's strings an answer carries: every one (None), or one
/// (`localeProjection`, `model::locale`).
pub type Projection<'a> = Option<&'a str>;

/// A `LocalizedString` (one map field, 1) as a JSON object: whole, or
/// with the one entry a reader of the projected locale is shown.
pub(super) fn localized(out: &mut Vec<u8>, m: &Message<'_>, locale: Projection<'_>) -> Result<()> {
    let Some(locale) = locale else {
        return map(out, m.repeated(1));
    };
    let mut best: Option<(u8, &[u8], &[u8])> = None;
    for entry in m.repeated(1) {
        let (k, v) = map_entry(entry?.bytes()?)?;
        let rank = crate::model::locale::rank(k, locale);
        // The first of equals in key order; a repeated key's last value.
        let better = best.is_none_or(|(r, bk, _)| rank < r || (rank == r && k <= bk));
        if better {
            best = Some((rank, k, v));
        }
    }
    out.push(b'{');
    if let Some((_, k, v)) = best {
        text(out, k)?;
        out.push(b':');
        text(out, v)?;
    }
    out.push(b'}');
    Ok(())
}

fn map_entry(bytes: &[u8]) -> Result<(&[u8], &[u8])> {
    let (mut k, mut v): (&[u8], &[u8]) = (b"", b"");
    for field in Message::new(bytes).fields() {
        match field? {
            (1, x) => k = x.text()?,
            (2, x) => v = x.text()?,
            _ => {}
        }
    }
    Ok((k, v))
}

/// A map field's `entries` as a `BTreeMap` serialises them: keys in
/// order, the last value of a repeated key. The catalog sends maps in key
/// order, so that case is written as it is read, without collecting.
fn map<'a>(
    out: &mut Vec<u8>,
    entries: impl Iterator<Item = Result<Value<'a>>> + Clone,
) -> Result<()> {
    out.push(b'{');
    let start = out.len();
    let mut previous: Option<&[u8]> = None;
    for entry in entries.clone() {
        let (k, v) = map_entry(entry?.bytes()?)?;
        if previous.is_some_and(|p| p >= k) {
            // Out of order or repeated: start over, collected and sorted.
            out.truncate(start);
            let mut sorted = Vec::new();
            for entry in entries {
                sorted.push(map_entry(entry?.bytes()?)?);
            }
            object(out, sorted)?;
            break;
        }
        if previous.is_some() {
            out.push(b',');
        }
        text(out, k)?;
        out.push(b':');
        text(out, v)?;
        previous = Some(k);
    }
    out.push(b'}');
    Ok(())
}

/// Entries in any order, as a `BTreeMap` holds them (without braces).
/// Byte order of UTF-8 is the order of its characters, so keys compare as
/// the map's strings would.
fn object(out: &mut Vec<u8>, mut entries: Vec<(&[u8], &[u8])>) -> Result<()> {
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let mut first = true;
    for (i, (k, v)) in entries.iter().enumerate() {
        if entries.get(i + 1).is_some_and(|next| next.0 == *k) {
            // Overwritten, but a decoder checks it all the same.
            for skipped in [k, v] {
                utf8(skipped)?;
            }
            continue;
        }
        if !first {
            out.push(b',');
        }
        first = false;
        text(out, k)?;
        out.push(b':');
        text(out, v)?;
    }
    Ok(())
}

pub(super) fn money(out: &mut Vec<u8>, m: &Message<'_>) -> Result<()> {
    let (mut currency, mut cents, mut digits): (&[u8], i64, u32) = (b"", 0, 0);
    for field in m.fields() {
        match field? {
            (1, v) => currency = v.text()?,
            (2, v) => cents = v.varint()? as i64,
            (3, v) => digits = v.varint()? as u32,
            _ => {}
        }
    }
    out.extend_from_slice(br#"{"type":"centPrecision","currencyCode":"#);
    text(out, currency)?;
    key(out, false, "centAmount");
    integer(out, cents);
    key(out, false, "fractionDigits");
    integer(out, digits);
    out.push(b'}');
    Ok(())
}

fn variant(out: &mut Vec<u8>, v: &Message<'_>, locale: Projection<'_>) -> Result<()> {
    let (mut id, mut sku): (u32, &[u8]) = (0, b"");
    let (mut price, mut availability) = (Message::default(), Message::default());
    let (mut attributes, mut prices, mut media) = (Values::new(), Values::new(), Values::new());
    for field in v.fields() {
        match field? {
            (1, x) => id = x.varint()? as u32,
            (2, x) => sku = x.text()?,
            (3, x) => attributes.push(x),
            (4, x) => merge(&mut price, x)?,
            (5, x) => prices.push(x),
            (6, x) => merge(&mut availability, x)?,
            (7, x) => media.push(x),
            _ => {}
        }
    }
    let price = required(&price, "variant without price")?;
    out.push(b'{');
    key(out, true, "id");
    integer(out, id);
    key(out, false, "sku");
    text(out, sku)?;
    key(out, false, "attributes");
    map(out, attributes.into_iter().map(Ok))?;
    key(out, false, "price");
    money(out, price)?;
    key(out, false, "prices");
    out.push(b'[');
    for (i, m) in prices.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        money(out, &Message::new(m.bytes()?))?;
    }
    out.push(b']');
    let (mut stocked, mut quantity) = (false, 0u32);
    for field in availability.fields() {
        match field? {
            (1, x) => stocked = x.varint()? != 0,
            (2, x) => quantity = x.varint()? as u32,
            // Units held by checkouts: not shown, but read as the model
            // reads them (a damaged one refuses the product as it does).
            (3, x) => {
                x.varint()?;
            }
            _ => {}
        }
    }
    key(out, false, "availability");
    out.extend_from_slice(br#"{"inStock":"#);
    boolean(out, stocked);
    key(out, false, "quantity");
    integer(out, quantity);
    out.push(b'}');
    key(out, false, "media");
    media_list(out, media, locale)?;
    out.push(b'}');
    Ok(())
}

/// A repeated `Media` field's `items`, as a JSON array.
fn media_list(out: &mut Vec<u8>, items: Values<'_>, locale: Projection<'_>) -> Result<()> {
    out.push(b'[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        media(out, &Message::new(item.bytes()?), locale)?;
    }
    out.push(b']');
    Ok(())
}

fn media(out: &mut Vec<u8>, m: &Message<'_>, locale: Projection<'_>) -> Result<()> {
    let (mut id, mut url, mut video): (&[u8], &[u8], bool) = (b"", b"", false);
    let (mut width, mut height, mut position) = (0u32, 0u32, 0u32);
    let mut alt = Message::default();
    for field in m.fields() {
        match field? {
            (1, v) => id = v.text()?,
            (2, v) => video = v.varint()? as i32 == VIDEO,
            (3, v) => url = v.text()?,
            (4, v) => merge(&mut alt, v)?,
            (5, v) => width = v.varint()? as u32,
            (6, v) => height = v.varint()? as u32,
            (7, v) => position = v.varint()? as u32,
            _ => {}
        }
    }
    out.push(b'{');
    key(out, true, "id");
    text(out, id)?;
    key(out, false, "url");
    text(out, url)?;
    key(out, false, "type");
    string(out, if video { "video" } else { "image" });
    key(out, false, "alt");
    localized(out, &alt, locale)?;
    key(out, false, "width");
    integer(out, width);
    key(out, false, "height");
    integer(out, height);
    key(out, false, "position");
    integer(out, position);
    out.push(b'}');
    Ok(())
}

const VIDEO: i32 = storefront_proto::catalog::v1::MediaType::Video as i32;
