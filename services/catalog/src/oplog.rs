//! The ids of the stock operations a catalog version has applied, so that
//! an operation repeated (a retry, another replica) applies once. It lives
//! beside the catalog it belongs to: each version holds one, sharing all
//! but its newest chunk with the version before.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

/// Operation ids per chunk, and chunks kept: a repeat is known for the
/// last 131,072 operations (over two minutes at 1,000 checkouts a second).
const OPS_PER_CHUNK: usize = 1_024;
const OP_CHUNKS: usize = 128;

/// The ids of the stock operations applied lately. Each catalog version
/// holds one; a version shares all but the newest chunk with the one before.
#[derive(Debug, Clone, Default)]
pub struct OpLog {
    chunks: VecDeque<Arc<HashSet<Box<str>>>>,
}

impl OpLog {
    pub fn contains(&self, id: &str) -> bool {
        self.chunks.iter().any(|c| c.contains(id))
    }

    /// This log with `ids` applied; the oldest chunk goes beyond the bound.
    pub fn with(&self, ids: &[String]) -> OpLog {
        let mut next = self.clone();
        for id in ids {
            match next.chunks.back_mut() {
                Some(last) if last.len() < OPS_PER_CHUNK => {
                    Arc::make_mut(last).insert(id.as_str().into());
                }
                _ => next
                    .chunks
                    .push_back(Arc::new(HashSet::from([id.as_str().into()]))),
            }
        }
        while next.chunks.len() > OP_CHUNKS {
            next.chunks.pop_front();
        }
        next
    }
}
