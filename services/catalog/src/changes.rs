//! Which products each recent version of the catalog changed, so that an
//! indexer that saw version v reads only what changed since (the search
//! index follows a change in a second, not a rebuild), or is told to
//! rebuild when the log no longer reaches back that far or an import
//! replaced the catalog whole.

use std::collections::VecDeque;
use std::sync::Arc;

/// Versions kept, and product ids over all of them: beyond either, the
/// oldest go (readers that far behind rebuild).
const MAX_VERSIONS: usize = 4_096;
const MAX_IDS: usize = 200_000;

#[derive(Debug, Clone, Default)]
pub struct ChangeLog {
    /// Oldest first: a version and the products it changed.
    entries: VecDeque<Arc<(u64, Vec<Arc<str>>)>>,
    /// A reader at this version or before it must rebuild.
    floor: u64,
    ids: usize,
}

/// What a reader at some version must do to catch up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Since {
    /// Re-read these products (changed, created or deleted).
    Changed(Vec<Arc<str>>),
    /// Re-read everything.
    Rebuild,
}

impl ChangeLog {
    /// A log that starts at `version`, the catalog read whole.
    pub fn starting_at(version: u64) -> Self {
        Self {
            floor: version,
            ..Self::default()
        }
    }

    /// This log with `version` having changed `ids`.
    pub fn with(&self, version: u64, ids: Vec<Arc<str>>) -> Self {
        let mut next = self.clone();
        next.ids += ids.len();
        next.entries.push_back(Arc::new((version, ids)));
        while next.entries.len() > MAX_VERSIONS || next.ids > MAX_IDS {
            let Some(old) = next.entries.pop_front() else {
                break;
            };
            next.ids -= old.1.len();
            next.floor = old.0;
        }
        next
    }

    /// The products the newest version changed.
    pub fn last_ids(&self) -> Vec<Arc<str>> {
        let mut ids = self.entries.back().map(|e| e.1.clone()).unwrap_or_default();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// What changed after `version` (None: nothing).
    pub fn since(&self, version: u64) -> Since {
        if version < self.floor {
            return Since::Rebuild;
        }
        let mut ids: Vec<Arc<str>> = self
            .entries
            .iter()
            .filter(|e| e.0 > version)
            .flat_map(|e| e.1.iter().cloned())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        Since::Changed(ids)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_gets_what_changed_since_or_a_rebuild() {
        let id = |s: &str| -> Arc<str> { s.into() };
        let log = ChangeLog::starting_at(1)
            .with(2, vec![id("a")])
            .with(3, vec![id("b"), id("a")]);
        assert_eq!(log.since(1), Since::Changed(vec![id("a"), id("b")]));
        assert_eq!(log.since(2), Since::Changed(vec![id("a"), id("b")]));
        assert_eq!(log.since(3), Since::Changed(vec![]));
        assert_eq!(log.since(0), Since::Rebuild);
        let mut long = ChangeLog::starting_at(1);
        for v in 2..(MAX_VERSIONS as u64 + 10) {
            long = long.with(v, vec![id("x")]);
        }
        assert_eq!(long.since(3), Since::Rebuild, "beyond the log's reach");
    }
}
