//! Listings that arrive as the catalog holds them: each product's summary
//! one LZ4 block against a dictionary the catalog names by its hash.
//!
//! The gateway keeps products' JSON by the bytes it is written from
//! (`transcode::ProductJson`), so for most of a listing's products it never
//! needs the summary itself; decompressing every product of every page in
//! the catalog was a tenth of a listing's CPU. The catalog now sends the
//! blocks, and the gateway decompresses only the products whose JSON it
//! does not hold. A dictionary changes with an import only, so the few
//! held here are fetched once each (`GetSummaryDictionary`); one the
//! catalog no longer holds (replaced by an import between the listing and
//! the fetch) makes the listing be asked again, decompressed.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use storefront_domain::compact::Dictionary;
use storefront_platform::client::call::CallError;
use storefront_proto::catalog::v1::{CompressedProduct, GetSummaryDictionaryRequest};
use storefront_proto::encoded::{ListProductsResponse, SearchResponse};

use super::{CallContext, Downstreams};
use crate::error::ApiError;
use crate::transcode::Compressed;

/// Dictionaries held: the current one, the one before an import, and
/// those of replicas that were fed differently (each replica names its
/// own; more than this and the oldest is fetched again when it returns).
const HELD: usize = 4;

/// How long a downstream that named a dictionary the catalog no longer
/// holds is asked for its products decompressed: a search index rebuilding
/// after an import names the old one for seconds (some 15 s at 1,000,000
/// products), and a gateway that never held it would otherwise pay two
/// calls and a fetch for every search meanwhile.
const PLAIN_FOR: Duration = Duration::from_secs(2);

/// Who answers: listings come from the catalog, searches from the index.
#[derive(Clone, Copy, Debug)]
pub enum Source {
    Catalog = 0,
    Search = 1,
}

/// A reply whose products may have come compressed: them, and the id of
/// what they are compressed against.
pub trait Compressible {
    fn compressed(&self) -> (&[CompressedProduct], u64);
}

impl Compressible for ListProductsResponse {
    fn compressed(&self) -> (&[CompressedProduct], u64) {
        (&self.compressed, self.dictionary_id)
    }
}

impl Compressible for SearchResponse {
    fn compressed(&self) -> (&[CompressedProduct], u64) {
        (&self.compressed, self.dictionary_id)
    }
}

/// A reply and, when its products came compressed, what they are
/// compressed against.
pub struct Answer<R> {
    pub reply: R,
    pub dictionary: Option<Arc<Dictionary>>,
}

impl<R: Compressible> Answer<R> {
    /// The reply's compressed products, for the transcoder.
    pub fn compressed(&self) -> Compressed<'_> {
        Compressed {
            products: self.reply.compressed().0,
            dictionary: self.dictionary.as_deref(),
        }
    }
}

pub struct Summaries {
    /// Newest last.
    held: RwLock<Vec<Arc<Dictionary>>>,
    since: Instant,
    /// Per `Source`: until when (ms after `since`) it is asked for its
    /// products decompressed.
    plain_until: [AtomicU64; 2],
}

impl Default for Summaries {
    fn default() -> Self {
        Self {
            held: RwLock::default(),
            since: Instant::now(),
            plain_until: Default::default(),
        }
    }
}

impl Summaries {
    fn now_ms(&self) -> u64 {
        self.since.elapsed().as_millis() as u64
    }

    fn get(&self, id: u64) -> Option<Arc<Dictionary>> {
        let held = self.held.read().unwrap_or_else(|e| e.into_inner());
        held.iter().find(|d| d.id() == id).cloned()
    }

    fn keep(&self, dictionary: Dictionary) -> Arc<Dictionary> {
        let dictionary = Arc::new(dictionary);
        let mut held = self.held.write().unwrap_or_else(|e| e.into_inner());
        if !held.iter().any(|d| d.id() == dictionary.id()) {
            if held.len() == HELD {
                held.remove(0);
            }
            held.push(dictionary.clone());
        }
        dictionary
    }

    /// `ask(compressed)`'s reply from `source` with the dictionary its
    /// products need (fetched from the catalog the first time); asked
    /// again with `ask(false)` when the catalog no longer holds it, and
    /// asked so for `PLAIN_FOR` after. A downstream that predates
    /// compressed replies answers decompressed, and needs none.
    pub async fn ask<R, F, Fut>(
        &self,
        downstreams: &Downstreams,
        ctx: &CallContext,
        (source, compressed): (Source, bool),
        ask: F,
    ) -> Result<Answer<R>, ApiError>
    where
        R: Compressible,
        F: Fn(bool) -> Fut,
        Fut: Future<Output = Result<R, CallError>>,
    {
        let plain_until = &self.plain_until[source as usize];
        let compressed = compressed && self.now_ms() >= plain_until.load(Ordering::Relaxed);
        let reply = ask(compressed).await?;
        let (products, id) = reply.compressed();
        if products.is_empty() {
            let dictionary = None;
            return Ok(Answer { reply, dictionary });
        }
        if let Some(dictionary) = self.get(id) {
            let dictionary = Some(dictionary);
            return Ok(Answer { reply, dictionary });
        }
        let asked = GetSummaryDictionaryRequest { id };
        match downstreams
            .catalog()
            .get_summary_dictionary(ctx, asked)
            .await
        {
            Ok(held) => {
                let dictionary = Dictionary::new(held.bytes);
                if dictionary.id() != id {
                    return Err(ApiError::bad_gateway("a dictionary not of its id"));
                }
                let dictionary = Some(self.keep(dictionary));
                Ok(Answer { reply, dictionary })
            }
            Err(CallError::Status(s)) if s.code() == tonic::Code::NotFound => {
                let until = self.now_ms() + PLAIN_FOR.as_millis() as u64;
                plain_until.store(until, Ordering::Relaxed);
                tracing::info!(
                    ?source,
                    "a dictionary the catalog no longer holds: asked decompressed"
                );
                let reply = ask(false).await?;
                let dictionary = None;
                Ok(Answer { reply, dictionary })
            }
            Err(e) => Err(e.into()),
        }
    }
}
