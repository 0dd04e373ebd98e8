//! A whole feed imported (or checked: a dry run): read as it streams in,
//! every problem reported by line, and the catalog it makes one new
//! version, whole or not at all.

use std::io::BufReader;

use bytes::Bytes;
use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::catalog::v1::{FeedChunk, FeedProblem, ImportReply};
use tokio::sync::mpsc;

use crate::feed::load::FeedError;
use crate::feed::source::Chunks;
use crate::feed::{self, ReadError};
use crate::live::Live;
use crate::store::{Catalog, Parts};

fn problems(errors: Vec<FeedError>) -> Vec<FeedProblem> {
    errors
        .into_iter()
        .map(|e| FeedProblem {
            line: e.line as u64,
            field: e.field,
            message: e.message,
        })
        .collect()
}

/// What an import would do to `current`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Counts {
    created: u64,
    updated: u64,
    unchanged: u64,
    deleted: u64,
}

/// Products of `parts` compared with `current`'s, on every core: a kept
/// product is updated only when its record's bytes differ.
fn counts(current: &Catalog, parts: &Parts) -> Counts {
    const CHUNK: usize = 4096;
    let facts = &parts.facts;
    let per_chunk = storefront_domain::cores::map_on_cores(facts.len().div_ceil(CHUNK), |j| {
        let mut c = Counts::default();
        for (row, f) in facts.iter().enumerate().skip(j * CHUNK).take(CHUNK) {
            let Some(held) = current.product_row(&f.id) else {
                c.created += 1;
                continue;
            };
            let theirs = parts.products.encoded(row as u32);
            match (current.products.encoded(held), theirs) {
                (Ok(a), Ok(b)) if a == b => c.unchanged += 1,
                _ => c.updated += 1,
            }
        }
        c
    });
    let mut all = per_chunk
        .into_iter()
        .fold(Counts::default(), |a, c| Counts {
            created: a.created + c.created,
            updated: a.updated + c.updated,
            unchanged: a.unchanged + c.unchanged,
            deleted: 0,
        });
    all.deleted = current.products.len() as u64 - all.updated - all.unchanged;
    all
}

/// Imports the feed `chunks` carry: checked whole, then (unless a dry run)
/// the catalog it describes replaces the current one as the next version.
pub async fn import(
    api: &Live,
    mut chunks: tonic::Streaming<FeedChunk>,
) -> Result<ImportReply, ServiceError> {
    let first = chunks
        .message()
        .await
        .map_err(|e| {
            ServiceError::new(
                ErrorKind::BadRequest,
                "BAD_REQUEST",
                e.message().to_string(),
            )
        })?
        .unwrap_or_default();
    let dry_run = first.dry_run;
    let (send, receive) = mpsc::channel::<std::io::Result<Bytes>>(64);
    tokio::spawn(async move {
        let mut next = Some(first.data);
        while let Some(data) = next {
            if send.send(Ok(data)).await.is_err() {
                return;
            }
            next = match chunks.message().await {
                Ok(Some(chunk)) => Some(chunk.data),
                Ok(None) => None,
                Err(e) => {
                    let _ = send
                        .send(Err(std::io::Error::other(e.message().to_string())))
                        .await;
                    None
                }
            };
        }
    });
    let reader = BufReader::with_capacity(1 << 20, Chunks::new(receive));
    // An upload can be cut between two lines: it must say where it ends.
    // In the currencies the catalog prices in now (the markets may have
    // added one since start).
    let limits = crate::feed::load::FeedLimits {
        count_required: true,
        currencies: api.read().currencies.clone(),
        ..api.feed_limits.clone()
    };
    let read =
        storefront_platform::cpu::run_once("catalog-import", move || feed::read(reader, limits))
            .await?;
    api.import(read, dry_run).await
}

impl Live {
    /// The import's end: its counts against the current catalog and, unless
    /// `dry_run` or the feed had problems, the new catalog swapped in.
    async fn import(
        &self,
        read: Result<Parts, ReadError>,
        dry_run: bool,
    ) -> Result<ImportReply, ServiceError> {
        let parts = match read {
            Ok(parts) => parts,
            Err(ReadError::Io(e)) => {
                return Err(ServiceError::new(
                    ErrorKind::BadRequest,
                    "BAD_REQUEST",
                    format!("the feed could not be read: {e}"),
                ));
            }
            Err(ReadError::Refused(refused)) => {
                return Ok(ImportReply {
                    catalog_version: self.current().version,
                    applied: false,
                    error_count: refused.total as u64,
                    errors: problems(refused.errors),
                    ..Default::default()
                });
            }
        };
        // Compared and built off the runtime's threads, at build priority.
        let current = self.current();
        let (counted, built) = storefront_platform::cpu::run_once("catalog-import", move || {
            let counted = counts(&current, &parts);
            drop(current);
            (counted, (!dry_run).then(|| Catalog::new(parts)))
        })
        .await?;
        let mut reply = ImportReply {
            to_create: counted.created,
            to_update: counted.updated,
            unchanged: counted.unchanged,
            to_delete: counted.deleted,
            ..Default::default()
        };
        let Some(built) = built else {
            reply.catalog_version = self.current().version;
            return Ok(reply);
        };
        let next = self.replace_whole(built).await?;
        reply.catalog_version = next.version;
        reply.applied = true;
        Ok(reply)
    }
}
