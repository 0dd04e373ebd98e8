//! The large arrays of columns a version dropped, kept a moment for the
//! next version's columns. A live change writes each changed column's
//! arrays anew (readers of the version before hold the old ones), and at
//! 1,000,000 products each is 4 MB: written into memory fresh from the
//! system, every page faulted in and zeroed, then given back within 10 ms
//! (`MIMALLOC_PURGE_DELAY`), page faults and `madvise` were about two
//! thirds of a price change's CPU. Kept here, the version after reuses
//! them as they are. Bounded: at most `MOST_BYTES`, and each gone back to
//! the allocator after `IDLE` unused (a reaper thread runs while any is
//! kept), so a shop that stops changing holds nothing extra.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Arrays shorter than this are the allocator's to reuse (its own free
/// lists keep small blocks).
pub(super) const SMALLEST: usize = 1 << 15;
/// The most kept at once: one price change's columns at 1,000,000
/// products (four currencies and a name, two arrays each).
const MOST_BYTES: usize = 48 << 20;
/// How long an array unused is kept.
const IDLE: Duration = Duration::from_millis(1_500);

struct Kept {
    array: Vec<u32>,
    since: Instant,
}

#[derive(Default)]
struct Spare {
    kept: Vec<Kept>,
    bytes: usize,
    reaping: bool,
}

/// Kept arrays; one for the process (`SPARE`), others in tests.
pub(super) struct Pool(Mutex<Spare>);

static SPARE: Pool = Pool::new();

fn bytes(array: &Vec<u32>) -> usize {
    array.capacity() * size_of::<u32>()
}

impl Spare {
    /// Takes out what was unused for `IDLE` by `now`, to be freed outside
    /// the lock.
    fn expired(&mut self, now: Instant) -> Vec<Kept> {
        let (gone, kept) = std::mem::take(&mut self.kept)
            .into_iter()
            .partition(|k| now.duration_since(k.since) >= IDLE);
        self.kept = kept;
        self.bytes = self.kept.iter().map(|k| bytes(&k.array)).sum();
        gone
    }
}

/// `SPARE.take(len)`.
pub(super) fn take(len: usize) -> Vec<u32> {
    SPARE.take(len)
}

/// `SPARE.give(array)`.
pub(super) fn give(array: Vec<u32>) {
    SPARE.give(array);
}

impl Pool {
    pub(super) const fn new() -> Self {
        Self(Mutex::new(Spare {
            kept: Vec::new(),
            bytes: 0,
            reaping: false,
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Spare> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// An empty array with room for `len` entries: a kept one when one
    /// fits (the smallest that does, and not more than twice the room),
    /// else new, with a little more room so that the next versions' (a
    /// product or two more) fit it too.
    pub(super) fn take(&self, len: usize) -> Vec<u32> {
        if len < SMALLEST {
            return Vec::with_capacity(len);
        }
        let found = {
            let mut spare = self.lock();
            let fits = |k: &Kept| (len..=len * 2).contains(&k.array.capacity());
            let best = (spare.kept.iter().enumerate())
                .filter(|(_, k)| fits(k))
                .min_by_key(|(_, k)| k.array.capacity())
                .map(|(i, _)| i);
            best.map(|i| {
                let kept = spare.kept.swap_remove(i);
                spare.bytes -= bytes(&kept.array);
                kept.array
            })
        };
        match found {
            Some(mut array) => {
                array.clear();
                array
            }
            None => Vec::with_capacity(len + len / 64),
        }
    }

    /// Keeps `array` for a next version when it is large and there is
    /// room; frees it otherwise (outside the lock).
    pub(super) fn give(&'static self, array: Vec<u32>) {
        if array.capacity() < SMALLEST {
            return;
        }
        let now = Instant::now();
        let (gone, refused, reap) = {
            let mut spare = self.lock();
            let gone = spare.expired(now);
            if spare.bytes + bytes(&array) > MOST_BYTES {
                (gone, Some(array), false)
            } else {
                spare.bytes += bytes(&array);
                spare.kept.push(Kept { array, since: now });
                let reap = !spare.reaping;
                spare.reaping = true;
                (gone, None, reap)
            }
        };
        drop((gone, refused));
        if reap {
            self.start_reaper();
        }
    }

    /// Frees what stays unused, every half `IDLE`, until nothing is kept.
    fn start_reaper(&'static self) {
        let reaper = std::thread::Builder::new()
            .name("listing-spare".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(IDLE / 2);
                    let mut spare = self.lock();
                    let gone = spare.expired(Instant::now());
                    let done = spare.kept.is_empty();
                    spare.reaping = !done;
                    drop(spare);
                    drop(gone);
                    if done {
                        return;
                    }
                }
            });
        if reaper.is_err() {
            // No thread: nothing is kept rather than kept for good.
            let gone = std::mem::take(&mut *self.lock());
            drop(gone);
        }
    }

    /// How many bytes are kept now.
    #[cfg(test)]
    fn kept_bytes(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static POOL: Pool = Pool::new();

    #[test]
    fn a_dropped_array_is_taken_again_then_freed_when_idle() {
        let len = SMALLEST * 4;
        let mut array = POOL.take(len);
        assert!(array.capacity() >= len);
        array.extend(0..len as u32);
        let at = array.as_ptr();
        POOL.give(array);
        assert!(POOL.kept_bytes() >= len * 4);
        // The same memory, empty: nothing of the version before shows.
        let again = POOL.take(len - 3);
        assert_eq!(again.as_ptr(), at);
        assert!(again.is_empty());
        assert_eq!(POOL.kept_bytes(), 0);
        // Too small to keep; far more room than asked is not taken.
        POOL.give(Vec::with_capacity(SMALLEST - 1));
        assert_eq!(POOL.kept_bytes(), 0);
        POOL.give(again);
        let small = POOL.take(len / 4);
        assert_ne!(small.as_ptr(), at);
        // Past the bound, arrays are freed at once.
        for _ in 0..(MOST_BYTES / (len * 4) + 4) {
            POOL.give(Vec::with_capacity(len));
        }
        assert!(POOL.kept_bytes() <= MOST_BYTES);
        assert!(POOL.kept_bytes() > MOST_BYTES / 2);
        // The reaper frees what stays unused (within about 1.5 IDLE; the
        // bound is far above that only so that a loaded machine's late
        // wake-ups do not fail the test).
        let until = Instant::now() + IDLE * 20;
        while POOL.kept_bytes() > 0 && Instant::now() < until {
            std::thread::sleep(IDLE / 4);
        }
        assert_eq!(POOL.kept_bytes(), 0);
        drop(small);
    }
}
