//! A hold ledger as its writers keep it from one write to the next: the
//! stored `HoldLedger` (the same bytes, so a reader decodes it as one),
//! indexed by a [`Book`] the first time a write needs it, and kept so in
//! the store's turn for the key's next writer in this process. A
//! network's ledger holds an entry per open checkout behind the address,
//! and making its book anew for every batch of writes hashed every entry
//! each time: with the book kept, a write costs what it touches, and the
//! ledger is only encoded.

use prost::bytes::{Buf, BufMut};
use prost::encoding::{DecodeContext, WireType};
use prost::{DecodeError, Message};
use storefront_proto::cart::storage::v1::HoldEntry;

use crate::ledger_book::Book;

/// `HoldLedger.entries`.
const ENTRIES: u32 = 1;

/// A `HoldLedger`, decoded (its entries) or indexed (its book): never
/// both, `book` takes the entries and a merge gives them back.
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

    /// The entries in the ledger's order: the book's, or (none made yet)
    /// as decoded; one of the two is empty.
    fn entries(&self) -> impl Iterator<Item = &HoldEntry> {
        let indexed = self.book.iter().flat_map(Book::entries);
        indexed.chain(self.decoded.iter())
    }
}

/// The wire form of `HoldLedger`, field for field.
impl Message for KeptLedger {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        for entry in self.entries() {
            prost::encoding::message::encode(ENTRIES, entry, buf);
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
        self.entries()
            .map(|entry| prost::encoding::message::encoded_len(ENTRIES, entry))
            .sum()
    }

    fn clear(&mut self) {
        *self = Self::default();
    }
}

#[cfg(test)]
#[path = "ledger_kept_tests.rs"]
mod tests;
