//! Products' JSON as written before, reused when the same bytes come again.
//!
//! Writing a product's JSON from its protobuf is most of what the gateway
//! does for a listing or a search besides the hops (about 2.7 us a product,
//! a sixth of a listing's CPU), and shoppers ask for the same products over
//! and over (a category's first pages, the best sellers). An entry is keyed
//! by a 128-bit hash of everything the JSON is written from (the product's
//! bytes, the reply's tail for it, the locale projection), so a product that
//! changes (a price, its stock, a rename) is simply another key: nothing is
//! ever stale, and no writer needs to tell the gateway. `quick_cache` holds
//! them, bounded by their bytes: its S3-FIFO policy keeps what is asked for
//! again when a scan passes through (a crawler walking every page), where a
//! least-recently-used list would let the scan flush it.

use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use quick_cache::Weighter;
use quick_cache::sync::Cache;
use storefront_domain::compact::Dictionary;
use storefront_proto::catalog::v1::CompressedProduct;
use storefront_proto::encoded::EncodedProduct;
use xxhash_rust::xxh3::Xxh3;

use super::product::Projection;
use crate::error::ApiError;

/// `PRODUCT_JSON_CACHE_MB`'s default, 32 MiB: some 13,000 products'
/// listing JSON with every locale's strings.
pub const DEFAULT_BYTES: usize = 32 << 20;

/// An entry's bookkeeping besides its JSON (the table's slot, the
/// shared buffer's header).
const ENTRY_OVERHEAD: u64 = 96;

/// Slots of keys written lately (512 KiB): about five times the products
/// the default holds.
const SEEN_SLOTS: usize = 1 << 16;

/// A guess of an entry's size, for the table's first allocation only.
const TYPICAL_ENTRY: u64 = 2_048;

/// A compressed product's key starts with this part, so that it never
/// meets an encoded one's (its parts are five, not three).
const COMPRESSED: &[u8] = b"lz4";

/// No product summary decompresses to more (the gRPC message limit): a
/// damaged length allocates nothing.
const MAX_SUMMARY: u32 = 4 << 20;

#[derive(Clone)]
struct BySize;

impl Weighter<u128, Bytes> for BySize {
    fn weight(&self, _key: &u128, json: &Bytes) -> u64 {
        json.len() as u64 + ENTRY_OVERHEAD
    }
}

pub struct ProductJson {
    /// None: nothing is kept (`PRODUCT_JSON_CACHE_MB=0`).
    held: Option<Cache<u128, Bytes, BySize>>,
    /// The keys written lately, one a slot (a later key takes the slot):
    /// a product's JSON is kept the second time it is written, so one
    /// seen once (most of a crawl, the long tail) costs a store here
    /// rather than a copy, an insert and an eviction.
    seen: Box<[AtomicU64]>,
    /// No product's JSON over this is kept: one never empties the rest.
    largest: u64,
}

impl ProductJson {
    /// At most `bytes` of JSON (and bookkeeping) held in all.
    pub fn new(bytes: usize) -> Self {
        let bytes = bytes as u64;
        let held = (bytes > 0).then(|| {
            let items = (bytes / TYPICAL_ENTRY).max(16) as usize;
            Cache::with_weighter(items, bytes, BySize)
        });
        let slots = if held.is_some() { SEEN_SLOTS } else { 0 };
        Self {
            held,
            seen: (0..slots).map(|_| AtomicU64::new(0)).collect(),
            largest: bytes / 64,
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
        if self.held.is_none() {
            return write(out, p, locale);
        }
        let key = key([&p.body[..], &p.tail[..]], locale);
        self.write_keyed(out, key, |out| write(out, p, locale))
    }

    /// Appends the JSON of `c`, compressed against `dictionary`: the one
    /// held for the same bytes, else `write`'s from the decompressed
    /// summary and the tail (kept when it succeeds). The block and the
    /// dictionary's id determine the summary, so they key it; fewer bytes
    /// to hash than the summary's.
    pub fn write_compressed(
        &self,
        out: &mut Vec<u8>,
        c: &CompressedProduct,
        dictionary: &Dictionary,
        locale: Projection<'_>,
        write: impl FnOnce(&mut Vec<u8>, &[u8], &[u8], Projection<'_>) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        let decompressed = |out: &mut Vec<u8>| {
            if c.length > MAX_SUMMARY {
                return Err(ApiError::bad_gateway("a product summary over 4 MiB"));
            }
            let body = dictionary
                .decompress(&c.lz4, c.length)
                .map_err(ApiError::bad_gateway)?;
            write(out, &body, &c.tail, locale)
        };
        if self.held.is_none() {
            return decompressed(out);
        }
        let id = dictionary.id().to_le_bytes();
        let key = key([COMPRESSED, &id[..], &c.lz4[..], &c.tail[..]], locale);
        self.write_keyed(out, key, decompressed)
    }

    /// Appends the JSON held under `key`, else `write`'s (kept when it
    /// succeeds and has been written lately).
    fn write_keyed(
        &self,
        out: &mut Vec<u8>,
        key: u128,
        write: impl FnOnce(&mut Vec<u8>) -> Result<(), ApiError>,
    ) -> Result<(), ApiError> {
        let Some(held) = &self.held else {
            return write(out);
        };
        if let Some(json) = held.get(&key) {
            out.extend_from_slice(&json);
            return Ok(());
        }
        let start = out.len();
        write(out)?;
        let json = &out[start..];
        if self.seen_before(key) && json.len() as u64 + ENTRY_OVERHEAD <= self.largest {
            held.insert(key, Bytes::copy_from_slice(json));
        }
        Ok(())
    }

    /// Whether `key` was written lately, noting that it was.
    fn seen_before(&self, key: u128) -> bool {
        let slot = &self.seen[(key as usize) % self.seen.len()];
        let tag = (key >> 64) as u64;
        slot.swap(tag, Ordering::Relaxed) == tag
    }

    /// Whether any JSON is kept (then listings are asked for compressed).
    pub fn holds(&self) -> bool {
        self.held.is_some()
    }

    /// Entries and bytes held (bookkeeping included).
    pub fn held(&self) -> (usize, usize) {
        self.held
            .as_ref()
            .map_or((0, 0), |c| (c.len(), c.weight() as usize))
    }
}

/// Everything the JSON is written from, each part preceded by its length
/// so that no two inputs run into one another; no locale is not any
/// locale's name (0xff is never UTF-8).
fn key<const N: usize>(parts: [&[u8]; N], locale: Projection<'_>) -> u128 {
    let mut hasher = Xxh3::new();
    let locale = locale.map_or(&b"\xff"[..], str::as_bytes);
    for part in parts.into_iter().chain([locale]) {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    hasher.digest128()
}
