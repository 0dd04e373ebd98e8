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

/// Whether a scalar field holds its default (then it is not written).
fn is_default<T: Default + PartialEq>(value: &T) -> bool {
    *value == T::default()
}

/// A field of a message whose `Message` impl `encoded_message!` writes:
/// encoded, merged and measured as its kind says.
macro_rules! field {
    (encode message $tag:literal $f:expr, $buf:ident) => {
        if let Some(m) = $f {
            encoding::message::encode($tag, m, $buf);
        }
    };
    (merge message $f:expr, $wt:ident, $buf:ident, $ctx:ident) => {
        encoding::message::merge($wt, $f.get_or_insert_with(Default::default), $buf, $ctx)
    };
    (len message $tag:literal $f:expr) => {
        $f.as_ref()
            .map_or(0, |m| encoding::message::encoded_len($tag, m))
    };
    (encode products $tag:literal $f:expr, $buf:ident) => {
        $f.encode($tag, $buf)
    };
    (merge products $f:expr, $wt:ident, $buf:ident, $ctx:ident) => {
        $f.merge($wt, $buf, $ctx)
    };
    (len products $tag:literal $f:expr) => {
        $f.encoded_len($tag)
    };
    (encode messages $tag:literal $f:expr, $buf:ident) => {
        encoding::message::encode_repeated($tag, $f, $buf)
    };
    (merge messages $f:expr, $wt:ident, $buf:ident, $ctx:ident) => {
        encoding::message::merge_repeated($wt, $f, $buf, $ctx)
    };
    (len messages $tag:literal $f:expr) => {
        encoding::message::encoded_len_repeated($tag, $f)
    };
    (encode strings $tag:literal $f:expr, $buf:ident) => {
        encoding::string::encode_repeated($tag, $f, $buf)
    };
    (merge strings $f:expr, $wt:ident, $buf:ident, $ctx:ident) => {
        encoding::string::merge_repeated($wt, $f, $buf, $ctx)
    };
    (len strings $tag:literal $f:expr) => {
        encoding::string::encoded_len_repeated($tag, $f)
    };
    // Scalars: a default value is not written (proto3).
    (encode $kind:ident $tag:literal $f:expr, $buf:ident) => {
        if !is_default($f) {
            encoding::$kind::encode($tag, $f, $buf);
        }
    };
    (merge $kind:ident $f:expr, $wt:ident, $buf:ident, $ctx:ident) => {
        encoding::$kind::merge($wt, $f, $buf, $ctx)
    };
    (len $kind:ident $tag:literal $f:expr) => {
        if is_default($f) {
            0
        } else {
            encoding::$kind::encoded_len($tag, $f)
        }
    };
}

/// `Message` for a struct whose fields are named with their tag and kind
/// (`message`: optional; `messages`, `strings`: repeated; `products`;
/// scalars by prost's encoding module: `string`, `bytes`, `uint64`).
macro_rules! encoded_message {
    ($name:ident { $($tag:literal => $field:ident: $kind:ident),* $(,)? }) => {
        impl Message for $name {
            fn encode_raw(&self, buf: &mut impl BufMut) {
                $(field!(encode $kind $tag &self.$field, buf);)*
            }

            fn merge_field(
                &mut self,
                tag: u32,
                wire_type: WireType,
                buf: &mut impl Buf,
                ctx: DecodeContext,
            ) -> Result<(), DecodeError> {
                match tag {
                    $($tag => field!(merge $kind &mut self.$field, wire_type, buf, ctx),)*
                    _ => encoding::skip_field(wire_type, tag, buf, ctx),
                }
            }

            fn encoded_len(&self) -> usize {
                0 $(+ field!(len $kind $tag &self.$field))*
            }

            fn clear(&mut self) {
                *self = Self::default();
            }
        }
    };
}

/// `storefront.catalog.v1.ListProductsResponse`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListProductsResponse {
    pub page: Option<PageInfo>,
    pub products: Products,
    pub dictionary_id: u64,
    pub compressed: Vec<CompressedProduct>,
}

encoded_message!(ListProductsResponse {
    1 => page: message,
    2 => products: products,
    3 => dictionary_id: fixed64,
    4 => compressed: messages,
});

/// `storefront.catalog.v1.ProductBatch`. Decoded, its products stay
/// encoded (`products.encoded`) or compressed (`compressed`): the indexer
/// that reads it keeps the bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProductBatch {
    pub products: Products,
    pub catalog_version: u64,
    pub dictionary: Bytes,
    pub compressed: Vec<CompressedProduct>,
    pub tie_order: bool,
}

encoded_message!(ProductBatch {
    1 => products: products,
    2 => catalog_version: uint64,
    3 => dictionary: bytes,
    4 => compressed: messages,
    5 => tie_order: bool,
});

/// `storefront.search.v1.SearchResponse`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SearchResponse {
    pub page: Option<PageInfo>,
    pub products: Products,
    pub facets: Option<Facets>,
    pub dropped_words: Vec<String>,
    pub did_you_mean: String,
    pub dictionary_id: u64,
    pub compressed: Vec<CompressedProduct>,
}

encoded_message!(SearchResponse {
    1 => page: message,
    2 => products: products,
    3 => facets: message,
    4 => dropped_words: strings,
    5 => did_you_mean: string,
    6 => dictionary_id: fixed64,
    7 => compressed: messages,
});

/// `storefront.search.v1.SuggestResponse`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuggestResponse {
    pub completions: Vec<String>,
    pub products: Products,
}

encoded_message!(SuggestResponse {
    1 => completions: strings,
    2 => products: products,
});

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
            ..Default::default()
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
    fn a_compressed_listing_keeps_its_dictionary_and_tails() {
        let reply = ListProductsResponse {
            page: Some(PageInfo::default()),
            dictionary_id: u64::MAX - 7,
            compressed: vec![CompressedProduct {
                lz4: Bytes::from_static(b"\x01\x02"),
                length: 9,
                tail: Bytes::from_static(b"\x42\x00"),
            }],
            ..Default::default()
        };
        let bytes = reply.encode_to_vec();
        assert_eq!(bytes.len(), reply.encoded_len());
        assert_eq!(
            ListProductsResponse::decode(bytes.as_slice()).unwrap(),
            reply
        );
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
                tail: Bytes::new(),
            }],
            tie_order: true,
        };
        let bytes = batch.encode_to_vec();
        assert_eq!(bytes.len(), batch.encoded_len());
        let back = ProductBatch::decode(bytes.as_slice()).unwrap();
        assert_eq!(back.catalog_version, 7);
        assert!(back.tie_order);
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
