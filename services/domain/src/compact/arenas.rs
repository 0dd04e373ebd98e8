//! The list of a `Records`' arenas, in chunks shared between versions.
//!
//! Every stock or price change makes a catalog version, and a version is
//! the last one cloned: with the arenas in one list, each clone (and the
//! drop of the version it replaced) touched the reference count of every
//! arena, each on its own cache line (about 2,300 for 100,000 products'
//! records). In chunks, a clone touches one count per chunk, and an edit
//! copies the chunk of the arena it changes.

use std::sync::Arc;

use super::Arena;

/// Arenas per chunk.
const CHUNK: usize = 64;

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Arenas {
    chunks: Vec<Arc<Vec<Arc<Arena>>>>,
    len: usize,
}

impl Arenas {
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn get(&self, a: usize) -> &Arc<Arena> {
        &self.chunks[a / CHUNK][a % CHUNK]
    }

    /// Arena `a`, copied first if another version shares it (and its
    /// chunk, if shared).
    pub fn get_mut(&mut self, a: usize) -> &mut Arena {
        let chunk = Arc::make_mut(&mut self.chunks[a / CHUNK]);
        Arc::make_mut(&mut chunk[a % CHUNK])
    }

    /// Arena `a` changed: by `edit` in place when no other version holds
    /// it, else made anew by `copy` from the one shared (one pass over its
    /// bytes, where a clone and then an edit that grows it copies twice).
    pub fn update(
        &mut self,
        a: usize,
        edit: impl FnOnce(&mut Arena),
        copy: impl FnOnce(&Arena) -> Arena,
    ) {
        let chunk = Arc::make_mut(&mut self.chunks[a / CHUNK]);
        let slot = &mut chunk[a % CHUNK];
        match Arc::get_mut(slot) {
            Some(arena) => edit(arena),
            None => *slot = Arc::new(copy(slot)),
        }
    }

    pub fn last(&self) -> Option<&Arc<Arena>> {
        self.len.checked_sub(1).map(|a| self.get(a))
    }

    pub fn last_mut(&mut self) -> Option<&mut Arena> {
        let a = self.len.checked_sub(1)?;
        Some(self.get_mut(a))
    }

    pub fn push(&mut self, arena: Arc<Arena>) {
        if self.len.is_multiple_of(CHUNK) {
            self.chunks.push(Arc::new(Vec::with_capacity(CHUNK)));
        }
        if let Some(chunk) = self.chunks.last_mut() {
            Arc::make_mut(chunk).push(arena);
        }
        self.len += 1;
    }

    /// Removes the last arena.
    pub fn pop(&mut self) {
        let Some(chunk) = self.chunks.last_mut() else {
            return;
        };
        Arc::make_mut(chunk).pop();
        if chunk.is_empty() {
            self.chunks.pop();
        }
        self.len -= 1;
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Arena>> {
        self.chunks.iter().flat_map(|chunk| chunk.iter())
    }

    /// The arenas, moved out (copied only where another version shares
    /// their chunk).
    pub fn into_arenas(self) -> impl Iterator<Item = Arc<Arena>> {
        self.chunks.into_iter().flat_map(Arc::unwrap_or_clone)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arenas_are_found_by_index_across_chunks_and_popped_from_the_end() {
        let mut list = Arenas::default();
        let arena = |n: u8| {
            Arc::new(Arena {
                bytes: vec![n],
                ..Arena::default()
            })
        };
        for n in 0..=CHUNK as u8 {
            list.push(arena(n));
        }
        assert_eq!(list.len(), CHUNK + 1);
        assert_eq!(list.get(CHUNK).bytes, [CHUNK as u8]);
        let before = list.clone();
        list.get_mut(3).bytes.push(9);
        assert_eq!(before.get(3).bytes, [3], "the version before is untouched");
        assert!(Arc::ptr_eq(before.get(CHUNK), list.get(CHUNK)));
        list.pop();
        assert_eq!(list.len(), CHUNK);
        assert_eq!(list.last().map(|a| a.bytes[0]), Some(CHUNK as u8 - 1));
        let moved: Vec<u8> = list.into_arenas().map(|a| a.bytes[0]).collect();
        assert_eq!(moved, (0..CHUNK as u8).collect::<Vec<_>>());
    }
}
