//! The `storefront.search.v1.SearchService` gRPC implementation, and the
//! index it serves: swapped whole after a rebuild, so answers never pause.

use std::sync::{Arc, RwLock};

use storefront_platform::client::call::{Caller, Current};
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::catalog::v1::{ExportProductsRequest, ListCategoriesRequest};
use storefront_proto::common::v1::{ListQuery, PageRequest};
use storefront_proto::search::v1::search_service_server::SearchService;
use storefront_proto::search::v1::*;
use tonic::{Request, Response, Status};

use storefront_domain::catalog::priced_only;
use storefront_domain::currencies::Currencies;

use crate::build;
use crate::clients::Catalog;
use crate::clients::unavailable;
use crate::index::Indexed;
use crate::suggest;
use crate::synonyms::Synonyms;

/// Suggestions answered at most.
const MAX_SUGGESTIONS: u32 = 20;

#[derive(Clone)]
pub struct SearchApi {
    pub current: Arc<RwLock<Arc<Indexed>>>,
    pub catalog: Caller,
    pub synonyms: Arc<Synonyms>,
    /// Postings a search reads at most to be answered on the request's own
    /// task (`SEARCH_INLINE_POSTINGS`, default 200,000: about 2 ms of
    /// matching, some 9 ns a posting). Handing a search to the pool costs
    /// more than a narrow one takes, and pooled searches beside inline ones
    /// are more busy threads than cores: at 100,000 products every search
    /// inline measured 0.58x the hop floor for one word where 50,000 left
    /// 0.53x with twice the p99 (the broadest words went to the pool).
    pub inline_postings: u64,
    /// Builds and follows take turns (one writer per index).
    pub updating: Arc<tokio::sync::Mutex<()>>,
    /// Set by the first build: until then the service listens (alive,
    /// not ready) and answers UNAVAILABLE rather than an empty index.
    pub built: Arc<tokio::sync::watch::Sender<bool>>,
    /// The currencies prices are indexed in: the markets' at start, and
    /// any the catalog adds since (`ListChanges`).
    pub currencies: Arc<RwLock<Arc<Currencies>>>,
    /// The catalog's reindex generation this index reflects; 0 until the
    /// first follow (`reindex`).
    pub reindexed: Arc<std::sync::atomic::AtomicU64>,
}

impl SearchApi {
    /// The currencies the next build indexes prices in.
    pub fn currencies(&self) -> Arc<Currencies> {
        self.currencies
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

fn internal(e: tantivy::TantivyError) -> ServiceError {
    ServiceError::internal(format!("search index: {e}"))
}

impl SearchApi {
    /// The index searches read: refused until the first build.
    fn answering(&self) -> Result<Arc<Indexed>, ServiceError> {
        if !*self.built.borrow() {
            return Err(ServiceError::new(
                ErrorKind::Unavailable,
                "SEARCH_INDEX_BUILDING",
                "the search index is being built from the catalog",
            ));
        }
        Ok(self.index())
    }

    pub fn index(&self) -> Arc<Indexed> {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Serves `next` and hands back the index it replaces, for the caller
    /// to drop once the lock is released (searches wait on it).
    #[must_use = "the replaced index is the caller's to drop"]
    pub(crate) fn replace(&self, next: Indexed) -> Arc<Indexed> {
        std::mem::replace(
            &mut *self.current.write().unwrap_or_else(|p| p.into_inner()),
            Arc::new(next),
        )
    }

    /// Builds a fresh index from the catalog's export and swaps it in (in
    /// turn with other builds and follows).
    pub async fn rebuild(&self) -> Result<ReindexResponse, ServiceError> {
        let _turn = self.updating.lock().await;
        self.rebuild_now().await
    }

    /// As `rebuild`, the caller holding the turn. The export streams into
    /// the builder, so indexing overlaps the transfer.
    pub(crate) async fn rebuild_now(&self) -> Result<ReindexResponse, ServiceError> {
        let catalog = Catalog(&self.catalog);
        let query = ListQuery {
            page: Some(PageRequest {
                limit: 100,
                offset: 0,
            }),
            ..Default::default()
        };
        let categories = catalog
            .list_categories(&Current, ListCategoriesRequest { query: Some(query) })
            .await
            .map_err(unavailable)?
            .categories;
        let export = ExportProductsRequest {
            batch_size: 1000,
            compressed: true,
            product_ids: Vec::new(),
            // Documents come as they are to be kept: none is sorted.
            tie_order: true,
        };
        let mut stream = catalog
            .export_products(&Current, export)
            .await
            .map_err(unavailable)?;
        let started = std::time::Instant::now();
        let (batches, received) = std::sync::mpsc::sync_channel::<build::Batch>(16);
        let currencies = self.currencies();
        let builder = storefront_platform::cpu::run_once_waited_on("search-build", move || {
            build::build(received.into_iter(), &categories, currencies)
        });
        let mut version = 0;
        let streamed: Result<(), ServiceError> = async {
            while let Some(batch) = stream
                .message()
                .await
                .map_err(|s| unavailable(s.message()))?
            {
                version = batch.catalog_version;
                if batches.send(build::Batch::from(batch)).is_err() {
                    break;
                }
            }
            Ok(())
        }
        .await;
        drop(batches);
        let built = builder.await?.map_err(internal);
        streamed?;
        let mut built = built?;
        built.catalog_version = version;
        let documents = built.len() as u64;
        tracing::info!(
            documents,
            catalog_version = version,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "search index built"
        );
        storefront_platform::telemetry::metrics::catalog_version(
            "search_index_catalog_version",
            built.catalog_version,
        );
        storefront_platform::cpu::drop_off_requests(self.replace(built));
        self.built.send_replace(true);
        // Served at once; its segments merged in the next turn.
        let api = self.clone();
        tokio::spawn(async move { api.merge().await });
        Ok(ReindexResponse {
            catalog_version: version,
            documents,
        })
    }
}

fn not_merged(e: &dyn std::fmt::Display) {
    tracing::warn!(error = %e, "search index not merged; serving it as it is");
}

impl SearchApi {
    /// Merges the current index's segments into one and swaps it in, in
    /// turn with builds and follows (a follow waits for it: at 1,000,000
    /// products about 5 s, at 100,000 under one).
    async fn merge(&self) {
        let _turn = self.updating.lock().await;
        let current = self.index();
        let started = std::time::Instant::now();
        match storefront_platform::cpu::run_once_waited_on("search-merge", move || {
            build::merged(&current)
        })
        .await
        {
            Ok(Ok(Some(next))) => {
                tracing::info!(
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "search index merged into one segment"
                );
                storefront_platform::cpu::drop_off_requests(self.replace(next));
            }
            Ok(Ok(None)) => {}
            Ok(Err(e)) => not_merged(&e),
            Err(e) => not_merged(&e),
        }
    }
}

#[tonic::async_trait]
impl SearchService for SearchApi {
    async fn search(
        &self,
        request: Request<SearchRequest>,
    ) -> Result<Response<SearchResponse>, Status> {
        let mut req = request.into_inner();
        let indexed = self.answering()?;
        let currency = indexed.live.currencies.resolve(&req.currency_code)?;
        let query = req.query.take().unwrap_or_default();
        req.query = Some(priced_only(query, &indexed.listing, currency));
        let synonyms = self.synonyms.clone();
        // Matching, facets and ranking touch every hit: a broad search runs
        // on the blocking pool, so it never holds up cheap requests for
        // long; a narrow one here, as handing it over costs more than it
        // does. Both hold one of the same permits per core, so they take
        // turns rather than outnumber the cores (narrow searches beside
        // the pool's had doubled one-word p99 at 1,000,000 products).
        // The words once, for the estimate and the answer alike.
        let words = crate::passes::words(&indexed, &req)?;
        let reply = if crate::passes::postings(&indexed, &req, &words)? > self.inline_postings {
            storefront_platform::cpu::run(move || {
                crate::passes::answer(&indexed, &synonyms, req, words, currency)
            })
            .await??
        } else {
            storefront_platform::cpu::run_here(|| {
                crate::passes::answer(&indexed, &synonyms, req, words, currency)
            })
            .await??
        };
        Ok(Response::new(reply))
    }

    async fn suggest(
        &self,
        request: Request<SuggestRequest>,
    ) -> Result<Response<SuggestResponse>, Status> {
        let req = request.into_inner();
        let indexed = self.answering()?;
        let currency = indexed.live.currencies.resolve(&req.currency_code)?;
        let lang = indexed.fields.for_locale(&req.locale);
        let limit = req.limit.clamp(1, MAX_SUGGESTIONS) as usize;
        let (completions, products) =
            suggest::suggest(&indexed, lang, &self.synonyms, &req.text, limit, currency)?;
        Ok(Response::new(SuggestResponse {
            completions,
            products,
        }))
    }

    async fn reindex(
        &self,
        _: Request<ReindexRequest>,
    ) -> Result<Response<ReindexResponse>, Status> {
        Ok(Response::new(self.reindex_everywhere().await?))
    }
}
