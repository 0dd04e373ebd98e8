//! `storefront.catalog.v1.CategoryTree`, written by hand so that the
//! catalog answers from bytes it encoded once: the tree changes only with
//! the catalog, and cloning and encoding its ~50 categories' localized
//! maps per request cost more than the gateway's JSON. The wire is the
//! declared message's; a client decodes `roots` as usual.

use bytes::{Buf, BufMut, Bytes};
use prost::encoding::{self, DecodeContext, WireType};
use prost::{DecodeError, Message};

use crate::catalog::v1::CategoryNode;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct CategoryTree {
    /// What a client decoded (or a server built as structs).
    pub roots: Vec<CategoryNode>,
    /// Field 1 entries already encoded, written after `roots`.
    pub encoded_roots: Bytes,
}

impl CategoryTree {
    /// A tree a server keeps to answer with: encoded now, once.
    pub fn encoded(roots: &[CategoryNode]) -> Self {
        let mut buf = Vec::with_capacity(encoding::message::encoded_len_repeated(1, roots));
        encoding::message::encode_repeated(1, roots, &mut buf);
        Self {
            roots: Vec::new(),
            encoded_roots: buf.into(),
        }
    }
}

impl Message for CategoryTree {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        encoding::message::encode_repeated(1, &self.roots, buf);
        buf.put_slice(&self.encoded_roots);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => encoding::message::merge_repeated(wire_type, &mut self.roots, buf, ctx),
            _ => encoding::skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        encoding::message::encoded_len_repeated(1, &self.roots) + self.encoded_roots.len()
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::v1::Category;
    use crate::common::v1::LocalizedString;

    /// The message as `catalog.proto` declares it, derived by prost.
    #[derive(Clone, PartialEq, Message)]
    struct Declared {
        #[prost(message, repeated, tag = "1")]
        roots: Vec<CategoryNode>,
    }

    fn node(key: &str, children: Vec<CategoryNode>) -> CategoryNode {
        let name = LocalizedString {
            values: [("en-AU", key), ("de-DE", "Ä")]
                .into_iter()
                .map(|(l, v)| (l.to_string(), v.to_string()))
                .collect(),
        };
        CategoryNode {
            category: Some(Category {
                key: key.into(),
                name: Some(name),
                position: 3,
                ..Default::default()
            }),
            children,
        }
    }

    #[test]
    fn an_encoded_tree_is_the_declared_message() {
        let roots = vec![
            node("women", vec![node("women-shirts", Vec::new())]),
            node("men", Vec::new()),
        ];
        let served = CategoryTree::encoded(&roots).encode_to_vec();
        let declared = Declared {
            roots: roots.clone(),
        };
        assert_eq!(served, declared.encode_to_vec(), "the same bytes");
        let received = CategoryTree::decode(served.as_slice()).unwrap();
        assert_eq!(received.roots, roots);
        assert!(received.encoded_roots.is_empty());
        assert_eq!(CategoryTree::encoded(&[]).encode_to_vec(), Vec::<u8>::new());
    }
}
