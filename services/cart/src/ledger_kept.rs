//! A hold ledger as its writers keep it from one write to the next: the
//! stored `HoldLedger` (the same bytes, so a reader decodes it as one),
//! indexed by a [`Book`] the first time a write needs it, and kept so in
//! the store's turn for the key's next writer in this process. A
//! network's ledger holds an entry per open checkout behind the address,
//! and making its book anew for every batch of writes hashed every entry
//! each time: with the book kept, a write costs what it touches, and the
//! ledger is only encoded: its entries' bytes, each encoded once
//! (`Book::wire`), copied one after another.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};
use storefront_proto::cart::storage::v1::HoldEntry;

use crate::ledger_book::{Book, ENTRIES};

/// A `HoldLedger`, decoded (its entries) or indexed (its book): never
/// both, `book` takes the entries and a merge gives them back, so either
/// is the whole ledger.
#[derive(Clone, Default)]
pub struct KeptLedger {
    decoded: Vec<HoldEntry>,
    book: Option<Book>,
}

impl KeptLedger {
    /// The ledger's book, made from its entries the first time.
    pub fn book(&mut self) -> &mut Book {
        let decoded = &mut self.decoded;
        self.book
            .get_or_insert_with(|| Book::new(std::mem::take(decoded)))
    }
}

/// The wire form of `HoldLedger`, field for field.
impl Message for KeptLedger {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        match &self.book {
            Some(book) => book.wire().for_each(|bytes| buf.put_slice(bytes)),
            None => (self.decoded.iter())
                .for_each(|entry| prost::encoding::message::encode(ENTRIES, entry, buf)),
        }
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag != ENTRIES {
            return prost::encoding::skip_field(wire_type, tag, buf, ctx);
        }
        // Merged into after it was indexed: entries again, indexed anew.
        if let Some(book) = self.book.take() {
            self.decoded = book.into_entries();
        }
        prost::encoding::message::merge_repeated(wire_type, &mut self.decoded, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        match &self.book {
            Some(book) => book.wire().map(<[u8]>::len).sum(),
            None => (self.decoded.iter())
                .map(|entry| prost::encoding::message::encoded_len(ENTRIES, entry))
                .sum(),
        }
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
#[path = "ledger_kept_tests.rs"]
mod tests;
