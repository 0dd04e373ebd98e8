//! Replies that carry many products, written by hand so that a server can
//! answer from products it holds already encoded.
//!
//! On the wire these are exactly the messages of `catalog.proto` and
//! `search.proto` (`repeated Product products`): a length-delimited field is
//! the same bytes whether it was encoded from a struct or copied from a
//! buffer. A server fills `encoded` (bytes it keeps per product, plus a
//! small per-request `tail` of fields, such as the price in the requested
//! currency, that protobuf merges into the product); a client decodes the
//! same field into `products`. Nothing is decoded and re-encoded per
//! request on the serving side.

use bytes::{Buf, BufMut, Bytes};
use prost::encoding::{self, DecodeContext, WireType, encode_key, encode_varint};
use prost::{DecodeError, Message};

use crate::catalog::v1::{CompressedProduct, Product};
use crate::common::v1::PageInfo;
use crate::search::v1::Facets;

/// A product encoded once (`body`) plus fields encoded for this request
/// (`tail`); the message is their concatenation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EncodedProduct {
    pub body: Bytes,
    pub tail: Vec<u8>,
}

impl EncodedProduct {
    fn len(&self) -> usize {
        self.body.len() + self.tail.len()
    }

    fn encode(&self, tag: u32, buf: &mut impl BufMut) {
        encode_key(tag, WireType::LengthDelimited, buf);
        encode_varint(self.len() as u64, buf);
        buf.put_slice(&self.body);
        buf.put_slice(&self.tail);
    }

    fn encoded_len(&self, tag: u32) -> usize {
        encoding::key_len(tag) + encoding::encoded_len_varint(self.len() as u64) + self.len()
    }

    /// The product this encodes (tests and tools; servers never need it).
    pub fn decode(&self) -> Result<Product, DecodeError> {
        let mut product = Product::decode(self.body.clone())?;
        product.merge(self.tail.as_slice())?;
        Ok(product)
    }
}

/// Field `tag` of a message holding products both ways.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Products {
    /// What a client decoded (or a server built as structs).
    pub products: Vec<Product>,
    /// What a server answers from; encoded after `products`.
    pub encoded: Vec<EncodedProduct>,
}

impl Products {
    fn encode(&self, tag: u32, buf: &mut impl BufMut) {
        encoding::message::encode_repeated(tag, &self.products, buf);
        for e in &self.encoded {
            e.encode(tag, buf);
        }
    }

    fn encoded_len(&self, tag: u32) -> usize {
        encoding::message::encoded_len_repeated(tag, &self.products)
            + self
                .encoded
                .iter()
                .map(|e| e.encoded_len(tag))
                .sum::<usize>()
    }

    /// Every product as a struct: those decoded as such, then those kept
    /// encoded (what a client receives).
    pub fn decoded(self) -> Result<Vec<Product>, DecodeError> {
        let mut products = self.products;
        for e in &self.encoded {
            products.push(e.decode()?);
        }
        Ok(products)
    }

    /// A client keeps each product as the bytes it arrived in (a slice of
    /// the reply's buffer, not a copy): the gateway writes its JSON from
    /// them without building the message, and `decoded` builds it for
    /// whoever wants structs.
    fn merge(
        &mut self,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        let mut body = Bytes::new();
        encoding::bytes::merge(wire_type, &mut body, buf, ctx)?;
        self.encoded.push(EncodedProduct {
            body,
            tail: Vec::new(),
        });
        Ok(())
    }
}

/// An optional message field `tag`: encoded, merged, measured.
fn put<M: Message>(tag: u32, field: &Option<M>, buf: &mut impl BufMut) {
    if let Some(m) = field {
        encoding::message::encode(tag, m, buf);
    }
}

fn merge<M: Message + Default>(
    field: &mut Option<M>,
    wire_type: WireType,
    buf: &mut impl Buf,
    ctx: DecodeContext,
) -> Result<(), DecodeError> {
    encoding::message::merge(wire_type, field.get_or_insert_with(M::default), buf, ctx)
}

fn len<M: Message>(tag: u32, field: &Option<M>) -> usize {
    field
        .as_ref()
        .map_or(0, |m| encoding::message::encoded_len(tag, m))
}

/// `storefront.catalog.v1.ListProductsResponse`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListProductsResponse {
    pub page: Option<PageInfo>,
    pub products: Products,
}

impl Message for ListProductsResponse {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        put(1, &self.page, buf);
        self.products.encode(2, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => merge(&mut self.page, wire_type, buf, ctx),
            2 => self.products.merge(wire_type, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        len(1, &self.page) + self.products.encoded_len(2)
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

/// `storefront.catalog.v1.ProductBatch`. Decoded, its products stay
/// encoded (`products.encoded`) or compressed (`compressed`): the indexer
/// that reads it keeps the bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProductBatch {
    pub products: Products,
    pub catalog_version: u64,
    pub dictionary: Bytes,
    pub compressed: Vec<CompressedProduct>,
}

impl Message for ProductBatch {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        self.products.encode(1, buf);
        if self.catalog_version != 0 {
            encoding::uint64::encode(2, &self.catalog_version, buf);
        }
        if !self.dictionary.is_empty() {
            encoding::bytes::encode(3, &self.dictionary, buf);
        }
        encoding::message::encode_repeated(4, &self.compressed, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => self.products.merge(wire_type, buf, ctx),
            2 => encoding::uint64::merge(wire_type, &mut self.catalog_version, buf, ctx),
            3 => encoding::bytes::merge(wire_type, &mut self.dictionary, buf, ctx),
            4 => encoding::message::merge_repeated(wire_type, &mut self.compressed, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        self.products.encoded_len(1)
            + if self.catalog_version != 0 {
                encoding::uint64::encoded_len(2, &self.catalog_version)
            } else {
                0
            }
            + if self.dictionary.is_empty() {
                0
            } else {
                encoding::bytes::encoded_len(3, &self.dictionary)
            }
            + encoding::message::encoded_len_repeated(4, &self.compressed)
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

/// `storefront.search.v1.SearchResponse`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResponse {
    pub page: Option<PageInfo>,
    pub products: Products,
    pub facets: Option<Facets>,
    pub dropped_words: Vec<String>,
    pub did_you_mean: String,
}

impl Message for SearchResponse {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        put(1, &self.page, buf);
        self.products.encode(2, buf);
        put(3, &self.facets, buf);
        encoding::string::encode_repeated(4, &self.dropped_words, buf);
        if !self.did_you_mean.is_empty() {
            encoding::string::encode(5, &self.did_you_mean, buf);
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => merge(&mut self.page, wire_type, buf, ctx),
            2 => self.products.merge(wire_type, buf, ctx),
            3 => merge(&mut self.facets, wire_type, buf, ctx),
            4 => encoding::string::merge_repeated(wire_type, &mut self.dropped_words, buf, ctx),
            5 => encoding::string::merge(wire_type, &mut self.did_you_mean, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        let did_you_mean = if self.did_you_mean.is_empty() {
            0
        } else {
            encoding::string::encoded_len(5, &self.did_you_mean)
        };
        len(1, &self.page)
            + self.products.encoded_len(2)
            + len(3, &self.facets)
            + encoding::string::encoded_len_repeated(4, &self.dropped_words)
            + did_you_mean
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

/// `storefront.search.v1.SuggestResponse`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuggestResponse {
    pub completions: Vec<String>,
    pub products: Products,
}

impl Message for SuggestResponse {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        encoding::string::encode_repeated(1, &self.completions, buf);
        self.products.encode(2, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => encoding::string::merge_repeated(wire_type, &mut self.completions, buf, ctx),
            2 => self.products.merge(wire_type, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        encoding::string::encoded_len_repeated(1, &self.completions) + self.products.encoded_len(2)
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::v1::Variant;
    use crate::common::v1::Money;

    /// The message as `catalog.proto` declares it, derived by prost.
    #[derive(Clone, PartialEq, Message)]
    struct Declared {
        #[prost(message, optional, tag = "1")]
        page: Option<PageInfo>,
        #[prost(message, repeated, tag = "2")]
        products: Vec<Product>,
    }

    fn product(key: &str) -> Product {
        Product {
            key: key.into(),
            brand: "Acme".into(),
            master_variant: Some(Variant {
                id: 1,
                sku: format!("{key}-1"),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn encoded_products_are_the_declared_message_with_their_tail_merged() {
        let money = Money {
            currency_code: "AUD".into(),
            cent_amount: 4995,
            fraction_digits: 2,
        };
        let tail = Product {
            price: Some(money.clone()),
            master_variant: Some(Variant {
                price: Some(money.clone()),
                ..Default::default()
            }),
            ..Default::default()
        }
        .encode_to_vec();
        let page = PageInfo {
            limit: 20,
            offset: 0,
            count: 2,
            total: 2,
        };
        let reply = ListProductsResponse {
            page: Some(page),
            products: Products {
                products: Vec::new(),
                encoded: ["a", "b"]
                    .map(|k| EncodedProduct {
                        body: product(k).encode_to_vec().into(),
                        tail: tail.clone(),
                    })
                    .to_vec(),
            },
        };
        let bytes = reply.encode_to_vec();
        assert_eq!(bytes.len(), reply.encoded_len());
        let declared = Declared::decode(bytes.as_slice()).unwrap();
        let mut want = product("a");
        want.price = Some(money.clone());
        want.master_variant.as_mut().unwrap().price = Some(money);
        assert_eq!(declared.products[0], want);
        assert_eq!(declared.products[1].key, "b");
        assert_eq!(declared.page, Some(page));
        // And our own client-side decoding agrees.
        let ours = ListProductsResponse::decode(bytes.as_slice()).unwrap();
        assert_eq!(ours.products.decoded().unwrap(), declared.products);
        assert_eq!(reply.products.encoded[0].decode().unwrap(), want);
    }

    #[test]
    fn batches_keep_products_encoded_on_both_sides() {
        let batch = ProductBatch {
            products: Products {
                products: vec![product("a")],
                encoded: vec![EncodedProduct {
                    body: product("b").encode_to_vec().into(),
                    tail: Vec::new(),
                }],
            },
            catalog_version: 7,
            dictionary: Bytes::from_static(b"typical"),
            compressed: vec![CompressedProduct {
                lz4: Bytes::from_static(b"\x01\x02"),
                length: 9,
            }],
        };
        let bytes = batch.encode_to_vec();
        assert_eq!(bytes.len(), batch.encoded_len());
        let back = ProductBatch::decode(bytes.as_slice()).unwrap();
        assert_eq!(back.catalog_version, 7);
        assert_eq!(back.dictionary, batch.dictionary);
        assert_eq!(back.compressed, batch.compressed);
        let keys: Vec<String> = back
            .products
            .encoded
            .iter()
            .map(|e| e.decode().unwrap().key)
            .collect();
        assert_eq!(keys, ["a", "b"]);
    }

    #[test]
    fn a_search_response_keeps_its_dropped_words_and_suggestion() {
        for (dropped, suggestion) in [(vec![], ""), (vec!["unicorn".to_string()], "mug")] {
            let reply = SearchResponse {
                dropped_words: dropped,
                did_you_mean: suggestion.to_string(),
                ..Default::default()
            };
            let bytes = reply.encode_to_vec();
            assert_eq!(bytes.len(), reply.encoded_len());
            assert_eq!(SearchResponse::decode(bytes.as_slice()).unwrap(), reply);
        }
    }
}
