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
/// Versions per chunk: every version of the catalog holds the log, so a
/// change copies the list of chunks and the last chunk, not the log.
const CHUNK: usize = 64;

/// A version and the products it changed.
type Entry = Arc<(u64, Vec<Arc<str>>)>;

#[derive(Debug, Clone, Default)]
pub struct ChangeLog {
    /// Oldest first, in chunks of at most `CHUNK` versions.
    chunks: VecDeque<Arc<Vec<Entry>>>,
    /// A reader at this version or before it must rebuild.
    floor: u64,
    versions: usize,
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

    /// This log with `version` having changed `ids`. The oldest chunk goes
    /// whole when the log holds too much.
    pub fn with(&self, version: u64, ids: Vec<Arc<str>>) -> Self {
        let mut next = self.clone();
        next.ids += ids.len();
        next.versions += 1;
        let entry = Arc::new((version, ids));
        match next.chunks.back_mut() {
            Some(last) if last.len() < CHUNK => Arc::make_mut(last).push(entry),
            _ => next.chunks.push_back(Arc::new(vec![entry])),
        }
        while next.versions > MAX_VERSIONS || next.ids > MAX_IDS {
            let Some(old) = next.chunks.pop_front() else {
                break;
            };
            next.versions -= old.len();
            next.ids -= old.iter().map(|e| e.1.len()).sum::<usize>();
            next.floor = old.last().map_or(next.floor, |e| e.0);
        }
        next
    }

    fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    /// The products the newest version changed.
    pub fn last_ids(&self) -> Vec<Arc<str>> {
        let last = self.chunks.back().and_then(|c| c.last());
        let mut ids = last.map(|e| e.1.clone()).unwrap_or_default();
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
            .entries()
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
        let newest = MAX_VERSIONS as u64 + 9;
        assert_eq!(long.since(newest - 100), Since::Changed(vec![id("x")]));
        assert!(long.versions <= MAX_VERSIONS && long.versions > MAX_VERSIONS - CHUNK);
        assert_eq!(long.entries().count(), long.versions);
    }
}
