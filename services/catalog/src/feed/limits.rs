//! What a feed may make of its categories (depth, and the tree they make
//! as one answer), and reading past a line over the limit without keeping
//! it: the bounds that keep a feed's cost in proportion to its size.

use std::io::BufRead;
use std::sync::Arc;

use storefront_domain::currencies::Currencies;

use storefront_proto::catalog::v1::Category;

/// What a feed may make of its categories, and what its prices may be in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedLimits {
    /// `CATALOG_MAX_CATEGORY_DEPTH` (12, at most 32): levels of nesting, a
    /// root being the first. Each category carries its ancestors, so the
    /// depth bounds what each one weighs, and the tree's nesting.
    pub max_depth: usize,
    /// Whether the header must say how many records follow (`records`):
    /// so for an import and `catalog check`, where a feed cut short must
    /// not pass for a whole one.
    pub count_required: bool,
    /// The markets' currencies (`MARKETS_FILE`): a price in another is a
    /// problem of its line.
    pub currencies: Arc<Currencies>,
}

/// The encoded navigation tree (`GET /categories/tree`) at most: within
/// one gRPC answer (4 MiB) with room to spare.
pub const MAX_TREE_BYTES: usize = 3 << 20;

/// The deepest `CATALOG_MAX_CATEGORY_DEPTH` allowed: well inside the
/// nesting protobuf decoders accept (100 messages).
pub const DEEPEST: usize = 32;

impl Default for FeedLimits {
    fn default() -> Self {
        Self {
            max_depth: 12,
            count_required: false,
            currencies: Arc::new(Currencies::demo()),
        }
    }
}

/// What a category adds to the encoded tree at most: itself without its
/// ancestors (a tree node has none), and a node's framing per level.
pub(super) fn tree_bytes(category: &Category) -> usize {
    let ancestors = prost::encoding::message::encoded_len_repeated(7, &category.ancestors);
    prost::Message::encoded_len(category) - ancestors + 12 * (category.ancestors.len() + 1)
}

/// Reads past the rest of a line without keeping it: a line over the
/// limit costs a buffer's worth of memory, however long it is.
pub(super) fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match buf.iter().position(|&b| b == b'\n') {
            Some(at) => {
                reader.consume(at + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                reader.consume(n);
            }
        }
    }
}
