//! The shop's catalog as a feed: NDJSON, one record a line (format in
//! `docs/feed.md`). Written by `storefront catalog export` and the
//! internal export route, read at start (`CATALOG_FEED`), by
//! `storefront catalog check` and by an import.

pub mod acp;
pub(crate) mod batch;
pub mod cli;
pub mod convert;
pub(crate) mod limits;
pub mod load;
mod parse;
pub mod record;
pub mod source;

use std::io::{BufRead, Write};

use storefront_proto::catalog::v1::{Category, Collection};

use self::load::{FeedError, FeedLimits, Loader};
use self::record::{FORMAT_VERSION, Header, Record};
use crate::store::{Parts, StoredProducts};

/// Writes one record and its newline.
fn line(out: &mut impl Write, record: &Record) -> std::io::Result<()> {
    serde_json::to_writer(&mut *out, record)?;
    out.write_all(b"\n")
}

/// Writes a catalog as a feed: the header, categories (parents first, as
/// they are held), products in row order, collections.
pub fn write(
    categories: &[Category],
    products: &StoredProducts,
    collections: &[Collection],
    out: &mut impl Write,
) -> std::io::Result<()> {
    let records = categories.len() + products.len() + collections.len();
    line(
        out,
        &Record::Header(Header {
            kind: None,
            version: FORMAT_VERSION,
            records: Some(records as u64),
        }),
    )?;
    for c in categories {
        line(out, &Record::Category(convert::category_record(c)))?;
    }
    for row in 0..products.len() as u32 {
        let product = products.decode(row).map_err(std::io::Error::other)?;
        line(out, &Record::Product(convert::product_record(&product)))?;
    }
    for c in collections {
        line(out, &Record::Collection(convert::collection_record(c)))?;
    }
    out.flush()
}

/// How many problems of a bad feed are kept to be shown (all are
/// counted; `catalog check` prints every one).
pub const REPORTED_ERRORS: usize = 1_000;

/// A feed that is not a catalog: its problems (the first
/// `REPORTED_ERRORS`) and how many there were.
#[derive(Debug, Clone)]
pub struct Refused {
    pub errors: Vec<FeedError>,
    pub total: usize,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the feed has {} problem(s)", self.total)?;
        for e in &self.errors {
            write!(f, "\n  {e}")?;
        }
        if self.total > self.errors.len() {
            write!(f, "\n  ... and {} more", self.total - self.errors.len())?;
        }
        Ok(())
    }
}

impl std::error::Error for Refused {}

/// Reads a whole feed into catalog parts, or every problem it has.
pub fn read(reader: impl BufRead, limits: FeedLimits) -> Result<Parts, ReadError> {
    let mut errors = Vec::new();
    let mut total = 0;
    let mut keep = |e: FeedError| {
        total += 1;
        if errors.len() < REPORTED_ERRORS {
            errors.push(e);
        }
    };
    let mut loader = Loader::new(&mut keep, limits);
    loader.read(reader).map_err(ReadError::Io)?;
    let parts = loader.finish();
    match parts {
        Some(parts) => Ok(parts),
        None => Err(ReadError::Refused(Refused { errors, total })),
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("the feed could not be read: {0}")]
    Io(std::io::Error),
    #[error("{0}")]
    Refused(Refused),
}

#[cfg(test)]
mod tests;
