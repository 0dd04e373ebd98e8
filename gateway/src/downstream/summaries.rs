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

use std::sync::{Arc, RwLock};

use storefront_domain::compact::Dictionary;
use storefront_platform::client::call::CallError;
use storefront_proto::catalog::v1::{GetSummaryDictionaryRequest, ListProductsRequest};
use storefront_proto::encoded::ListProductsResponse;

use super::{CallContext, Downstreams};
use crate::error::ApiError;

/// Dictionaries held: the current one, the one before an import, and
/// those of replicas that were fed differently (each replica names its
/// own; more than this and the oldest is fetched again when it returns).
const HELD: usize = 4;

/// A listing's reply and, when its products came compressed, what they
/// are compressed against.
pub struct Listing {
    pub reply: ListProductsResponse,
    pub dictionary: Option<Arc<Dictionary>>,
}

#[derive(Default)]
pub struct Summaries {
    /// Newest last.
    held: RwLock<Vec<Arc<Dictionary>>>,
}

impl Summaries {
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

    /// The listing `message` asks for; compressed when `compressed` (the
    /// gateway keeps products' JSON), else as the catalog decompresses it.
    pub async fn list(
        &self,
        downstreams: &Downstreams,
        ctx: &CallContext,
        mut message: ListProductsRequest,
        compressed: bool,
    ) -> Result<Listing, ApiError> {
        message.compressed = compressed;
        let again = compressed.then(|| message.clone());
        let reply = downstreams.catalog().list_products(ctx, message).await?;
        let (Some(mut again), false) = (again, reply.compressed.is_empty()) else {
            // Not asked, or a catalog that predates compressed listings.
            return Ok(Listing {
                reply,
                dictionary: None,
            });
        };
        let id = reply.dictionary_id;
        if let Some(dictionary) = self.get(id) {
            let dictionary = Some(dictionary);
            return Ok(Listing { reply, dictionary });
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
                Ok(Listing { reply, dictionary })
            }
            Err(CallError::Status(s)) if s.code() == tonic::Code::NotFound => {
                again.compressed = false;
                let reply = downstreams.catalog().list_products(ctx, again).await?;
                let dictionary = None;
                Ok(Listing { reply, dictionary })
            }
            Err(e) => Err(e.into()),
        }
    }
}
