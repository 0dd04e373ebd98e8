//! Replies that carry many products (listings, search, suggestions), and
//! carts, written as JSON straight from the protobuf bytes the downstream
//! sent: no message decoded into owned strings and maps, no model built,
//! no second pass by `serde`. The JSON is byte for byte what the models in
//! `model::catalog`, `model::search` and `model::cart` serialise to (the
//! OpenAPI schema comes from them); tests hold the two paths equal.

mod cart;
mod product;
mod product_json;
mod wire;

pub use product::Projection;
pub use product_json::{DEFAULT_BYTES as DEFAULT_PRODUCT_JSON_BYTES, ProductJson};

#[cfg(test)]
mod compressed_tests;
#[cfg(test)]
mod product_json_tests;
#[cfg(test)]
mod tests;

use axum::http::HeaderValue;
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use storefront_domain::compact::Dictionary;
use storefront_proto::catalog::v1::CompressedProduct;
use storefront_proto::common::v1::PageInfo;
use storefront_proto::encoded::{EncodedProduct, Products};

use crate::error::ApiError;

/// A JSON body already written.
#[derive(Debug)]
pub struct JsonBytes(Vec<u8>);

impl JsonBytes {
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    pub fn into_bytes(self) -> Vec<u8> {
        self.0
    }
}

impl IntoResponse for JsonBytes {
    fn into_response(self) -> Response {
        (
            [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
            self.0,
        )
            .into_response()
    }
}

/// Products that came compressed (`downstream::summaries`), with what
/// they are compressed against.
#[derive(Clone, Copy, Default)]
pub struct Compressed<'a> {
    pub products: &'a [CompressedProduct],
    pub dictionary: Option<&'a Dictionary>,
}

/// Room for a reply's JSON: keys make it about twice its protobuf.
fn buffer(products: &Products, compressed: Compressed<'_>) -> Vec<u8> {
    let encoded: usize = products.encoded.iter().map(|e| e.body.len()).sum();
    let compressed: usize = compressed.products.iter().map(|c| c.length as usize).sum();
    Vec::with_capacity((encoded + compressed) * 2 + 512)
}

fn field<T: Serialize + ?Sized>(out: &mut Vec<u8>, first: bool, name: &str, value: &T) {
    product::key(out, first, name);
    product::json(out, value);
}

/// The products of a client-side reply (kept encoded, or compressed) as
/// a JSON array.
fn array(
    out: &mut Vec<u8>,
    products: &Products,
    compressed: Compressed<'_>,
    locale: Projection<'_>,
    held: &ProductJson,
) -> Result<(), ApiError> {
    if !products.products.is_empty() {
        // Decoded replies never carry structs (see `encoded::Products`).
        return Err(ApiError::bad_gateway("products decoded as structs"));
    }
    let mut first = true;
    let mut comma = |out: &mut Vec<u8>| {
        if !std::mem::take(&mut first) {
            out.push(b',');
        }
    };
    out.push(b'[');
    for p in &products.encoded {
        comma(out);
        held.write(out, p, locale, one)?;
    }
    if !compressed.products.is_empty() {
        let dictionary = compressed
            .dictionary
            .ok_or_else(|| ApiError::bad_gateway("compressed products without a dictionary"))?;
        for c in compressed.products {
            comma(out);
            held.write_compressed(out, c, dictionary, locale, parts)?;
        }
    }
    out.push(b']');
    Ok(())
}

fn one(out: &mut Vec<u8>, p: &EncodedProduct, locale: Projection<'_>) -> Result<(), ApiError> {
    parts(out, &p.body, &p.tail, locale)
}

/// A product's JSON from its encoded bytes and the fields merged after.
fn parts(
    out: &mut Vec<u8>,
    body: &[u8],
    tail: &[u8],
    locale: Projection<'_>,
) -> Result<(), ApiError> {
    let mut message = wire::Message::new(body);
    if !tail.is_empty() {
        message.merge(tail);
    }
    product::product(out, &message, locale).map_err(ApiError::bad_gateway)
}

/// `model::common::Paged<Product>`.
pub fn paged(
    page: Option<PageInfo>,
    products: &Products,
    compressed: Compressed<'_>,
    locale: Projection<'_>,
    held: &ProductJson,
) -> Result<JsonBytes, ApiError> {
    let page = page.ok_or_else(|| ApiError::bad_gateway("list reply without page info"))?;
    let sent = products.encoded.len() + products.products.len() + compressed.products.len();
    if page.count as usize != sent {
        return Err(ApiError::bad_gateway("page count does not match results"));
    }
    let mut out = buffer(products, compressed);
    out.push(b'{');
    field(&mut out, true, "limit", &page.limit);
    field(&mut out, false, "offset", &page.offset);
    field(&mut out, false, "count", &page.count);
    field(&mut out, false, "total", &page.total);
    out.extend_from_slice(b",\"results\":");
    array(&mut out, products, compressed, locale, held)?;
    out.push(b'}');
    Ok(JsonBytes(out))
}

/// `model::search::SearchResult`: the envelope, the hits, `facets`, then
/// what the search left out or suggests (`relaxed`), when anything.
pub fn search(
    page: Option<PageInfo>,
    products: &Products,
    compressed: Compressed<'_>,
    facets: &impl Serialize,
    relaxed: (&[String], &str),
    locale: Projection<'_>,
    held: &ProductJson,
) -> Result<JsonBytes, ApiError> {
    let (dropped_words, did_you_mean) = relaxed;
    let page = page.ok_or_else(|| ApiError::bad_gateway("search reply without page"))?;
    let mut out = buffer(products, compressed);
    out.push(b'{');
    field(&mut out, true, "limit", &page.limit);
    field(&mut out, false, "offset", &page.offset);
    // What this page holds, whatever the reply's page says.
    let count = (products.encoded.len() + compressed.products.len()) as u32;
    field(&mut out, false, "count", &count);
    field(&mut out, false, "total", &page.total);
    out.extend_from_slice(b",\"results\":");
    array(&mut out, products, compressed, locale, held)?;
    field(&mut out, false, "facets", facets);
    if !dropped_words.is_empty() {
        field(&mut out, false, "droppedWords", dropped_words);
    }
    if !did_you_mean.is_empty() {
        field(&mut out, false, "didYouMean", did_you_mean);
    }
    out.push(b'}');
    Ok(JsonBytes(out))
}

/// `model::search::Suggestions`.
pub fn suggestions(
    completions: &[String],
    products: &Products,
    locale: Projection<'_>,
    held: &ProductJson,
) -> Result<JsonBytes, ApiError> {
    let mut out = buffer(products, Compressed::default());
    out.push(b'{');
    field(&mut out, true, "completions", completions);
    out.extend_from_slice(b",\"products\":");
    array(&mut out, products, Compressed::default(), locale, held)?;
    out.push(b'}');
    Ok(JsonBytes(out))
}

/// `model::cart::Cart`, from the cart service's reply as it arrived.
pub fn cart(reply: &[u8]) -> Result<JsonBytes, ApiError> {
    // Keys and escapes make the JSON about twice the protobuf.
    let mut out = Vec::with_capacity(reply.len() * 2 + 256);
    cart::cart(&mut out, &wire::Message::new(reply)).map_err(ApiError::bad_gateway)?;
    Ok(JsonBytes(out))
}
