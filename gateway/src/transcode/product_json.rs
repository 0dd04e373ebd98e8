//! Products' JSON as written before, reused when the same bytes come again.
//!
//! Writing a product's JSON from its protobuf is most of what the gateway
//! does for a listing or a search besides the hops (about 2.7 us a product,
//! a sixth of a listing's CPU), and shoppers ask for the same products over
//! and over (a category's first pages, the best sellers). An entry is keyed
//! by a 128-bit hash of everything the JSON is written from (the product's
//! bytes, the reply's tail for it, the locale projection), so a product that
//! changes (a price, its stock, a rename) is simply another key: nothing is
//! ever stale, and nothing needs telling. The least recently used entries
//! go first once the shard holds its share of `PRODUCT_JSON_CACHE_MB`.

use std::sync::Mutex;

use lru::LruCache;
use storefront_proto::encoded::EncodedProduct;
use xxhash_rust::xxh3::Xxh3;

use super::product::Projection;
use crate::error::ApiError;

const SHARDS: usize = 16;

/// An entry's bookkeeping besides its bytes (the map's slot, the box).
const ENTRY_OVERHEAD: usize = 64;

struct Shard {
    entries: LruCache<u128, Box<[u8]>>,
    bytes: usize,
}

pub struct ProductJson {
    shards: Box<[Mutex<Shard>]>,
    /// Bytes a shard may hold; zero: nothing is kept.
    per_shard: usize,
}

impl ProductJson {
    /// At most `bytes` of JSON (and bookkeeping) held in all.
    pub fn new(bytes: usize) -> Self {
        let shard = || {
            Mutex::new(Shard {
                entries: LruCache::unbounded(),
                bytes: 0,
            })
        };
        Self {
            shards: (0..SHARDS).map(|_| shard()).collect(),
            per_shard: bytes / SHARDS,
        }
    }

    /// Appends `p`'s JSON to `out`: the one held for the same bytes, else
    /// `write`'s (kept when it succeeds).
    pub fn write(
        &self,
        out: &mut Vec<u8>,
        p: &EncodedProduct,
        locale: Projection<'_>,
        write: impl FnOnce(&mut Vec<u8>, &EncodedProduct, Projection<'_>) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        if self.per_shard == 0 {
            return write(out, p, locale);
        }
        let key = key(p, locale);
        let shard = &self.shards[(key as usize) % SHARDS];
        {
            let mut held = shard.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(json) = held.entries.get(&key) {
                out.extend_from_slice(json);
                return Ok(());
            }
        }
        let start = out.len();
        write(out, p, locale)?;
        let json: Box<[u8]> = out[start..].into();
        let size = json.len() + ENTRY_OVERHEAD;
        // One product never takes more than a small share of a shard.
        if size > self.per_shard / 8 {
            return Ok(());
        }
        let mut held = shard.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = held.entries.put(key, json) {
            held.bytes -= old.len() + ENTRY_OVERHEAD;
        }
        held.bytes += size;
        while held.bytes > self.per_shard {
            match held.entries.pop_lru() {
                Some((_, gone)) => held.bytes -= gone.len() + ENTRY_OVERHEAD,
                None => break,
            }
        }
        Ok(())
    }

    /// Entries and bytes held (bookkeeping included).
    pub fn held(&self) -> (usize, usize) {
        self.shards.iter().fold((0, 0), |(n, b), shard| {
            let held = shard.lock().unwrap_or_else(|e| e.into_inner());
            (n + held.entries.len(), b + held.bytes)
        })
    }
}

/// Everything the JSON is written from, each part preceded by its length
/// so that no two inputs run into one another.
fn key(p: &EncodedProduct, locale: Projection<'_>) -> u128 {
    let mut hasher = Xxh3::new();
    for part in [
        &p.body[..],
        &p.tail[..],
        locale.map_or(&b"\xff"[..], str::as_bytes),
    ] {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.digest128()
}

/// `PRODUCT_JSON_CACHE_MB`'s default, 32 MiB: some 14,000 products'
/// listing JSON with every locale's strings.
pub const DEFAULT_BYTES: usize = 32 << 20;
