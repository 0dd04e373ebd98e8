//! Reading a feed line by line into a catalog, checking every record: each
//! problem is reported as `line N: field: message` in line order (all of
//! them, not the first), and a feed with any is not a catalog. Categories
//! come first, then products, then collections, and a record may refer
//! only to records on earlier lines, so one pass over a stream is enough
//! and the file is never held whole. Product lines are read on every core
//! (`batch`).

use std::collections::{BTreeMap, HashMap};
use std::io::BufRead;
use std::sync::mpsc::{Receiver, SyncSender, channel, sync_channel};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use storefront_domain::catalog::ProductFacts;
use storefront_domain::currencies::Currencies;
use storefront_proto::Timestamp;
use storefront_proto::catalog::v1::{Category, Collection, Product};

use storefront_domain::catalog::meta_id;

use super::batch::{self, Batch, CategoryPaths, Context, Done};
use super::convert::{self, FieldProblem, Problems};
use super::limits::skip_line;
pub use super::limits::{DEEPEST, FeedLimits, MAX_TREE_BYTES};
pub use super::parse::{FeedError, parse_record};
pub(crate) use super::parse::{not_json, problem_of};
mod products;
mod records;
use records::path;

use super::record::ProductRecord;
use crate::store::{Parts, StoredProducts};

/// The longest line read; a longer one is an error of its own.
pub const MAX_LINE_BYTES: usize = 8 << 20;

/// Records read, per kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub categories: usize,
    pub products: usize,
    pub variants: usize,
    pub collections: usize,
}

impl std::fmt::Display for Counts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} categories, {} products ({} variants), {} collections",
            self.categories, self.products, self.variants, self.collections
        )
    }
}

#[derive(Deserialize)]
struct Kind<'a> {
    #[serde(rename = "type", borrow)]
    kind: Option<std::borrow::Cow<'a, str>>,
}

/// The `type` of a record written with it first (as exports are), read
/// without parsing the line twice; None for any other line.
fn kind_of(bytes: &[u8]) -> Option<&str> {
    let rest = bytes.strip_prefix(br#"{"type":""#)?;
    let end = rest.iter().position(|&b| b == b'"')?;
    std::str::from_utf8(&rest[..end]).ok()
}

/// Where the reader is in the feed: each stage's records come after the
/// previous stage's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Categories,
    Products,
    Collections,
}

/// Product batches on their way through the cores.
struct Pipeline<'s> {
    jobs: SyncSender<(usize, Batch, Arc<Context>)>,
    /// Each batch read, with its buffers back to be filled again.
    results: &'s Receiver<(usize, Done, Batch)>,
    sent: usize,
}

/// A feed being read.
pub struct Loader<'r> {
    now: Timestamp,
    /// What prices may be in (the limits').
    currencies: Arc<Currencies>,
    limits: FeedLimits,
    /// The encoded tree's size so far (`MAX_TREE_BYTES`).
    tree_bytes: usize,
    /// Records the header says follow it, if it says.
    declared: Option<u64>,
    header_line: bool,
    line: usize,
    records: usize,
    report: &'r mut dyn FnMut(FeedError),
    errors: usize,
    counts: Counts,
    stage: Stage,
    categories: Vec<Category>,
    category_index: HashMap<String, usize>,
    /// Frozen when the first product is read.
    context: Option<Arc<Context>>,
    batch: Batch,
    /// Batches read, emptied, to be filled again (as many as are in flight
    /// at most).
    spare: Vec<Batch>,
    /// Batches read, waiting for the ones before them.
    pending: BTreeMap<usize, Done>,
    taken: usize,
    /// Where each product id, sku and collection id was first seen (keys
    /// are hashes already: hashed again cheaply).
    first_seen: HashMap<u128, usize, foldhash::fast::RandomState>,
    chunks: Vec<StoredProducts>,
    facts: Vec<ProductFacts>,
    skus: Vec<(u64, u32)>,
    collections: Vec<Collection>,
}

impl<'r> Loader<'r> {
    /// `report` is told each problem as it is found, in line order.
    pub fn new(report: &'r mut dyn FnMut(FeedError), limits: FeedLimits) -> Self {
        Self {
            now: storefront_domain::time::now(),
            currencies: limits.currencies.clone(),
            limits,
            tree_bytes: 0,
            declared: None,
            header_line: false,
            line: 0,
            records: 0,
            report,
            errors: 0,
            counts: Counts::default(),
            stage: Stage::Categories,
            categories: Vec::new(),
            category_index: HashMap::new(),
            context: None,
            batch: Batch::default(),
            spare: Vec::new(),
            pending: BTreeMap::new(),
            taken: 0,
            first_seen: HashMap::default(),
            chunks: Vec::new(),
            facts: Vec::new(),
            skus: Vec::new(),
            collections: Vec::new(),
        }
    }

    fn fail(&mut self, field: impl Into<String>, message: impl Into<String>) {
        let line = self.line;
        self.report_error(FeedError {
            line,
            field: field.into(),
            message: message.into(),
        });
    }

    fn report_error(&mut self, error: FeedError) {
        self.errors += 1;
        (self.report)(error);
    }

    fn report_problems(&mut self, problems: Problems) {
        self.failed(problems.0);
    }

    fn failed(&mut self, problems: Vec<FieldProblem>) -> bool {
        let any = !problems.is_empty();
        for p in problems {
            self.fail(p.field, p.message);
        }
        any
    }

    /// Reads every line of `reader`, product lines on every core.
    pub fn read(&mut self, mut reader: impl BufRead) -> std::io::Result<()> {
        let workers = std::thread::available_parallelism().map_or(2, usize::from);
        let (jobs, queue) = sync_channel::<(usize, Batch, Arc<Context>)>(workers);
        let (finished, results) = channel();
        let queue = Mutex::new(queue);
        std::thread::scope(|scope| {
            for _ in 0..workers {
                let (queue, finished) = (&queue, finished.clone());
                scope.spawn(move || {
                    loop {
                        let job = queue.lock().unwrap_or_else(|p| p.into_inner()).recv();
                        let Ok((seq, batch, cx)) = job else { return };
                        let done = batch::read(&batch, &cx);
                        if finished.send((seq, done, batch.cleared())).is_err() {
                            return;
                        }
                    }
                });
            }
            let mut pipe = Pipeline {
                jobs,
                results: &results,
                sent: 0,
            };
            let read = self.read_lines(&mut reader, &mut pipe);
            self.flush(&mut pipe);
            // Workers stop once the queue is closed.
            drop(pipe);
            read
        })?;
        self.check_end();
        Ok(())
    }

    /// The feed ended where its header said it would (reported on the
    /// header's line).
    fn check_end(&mut self) {
        let found = (self.records - usize::from(self.header_line)) as u64;
        let problem = match self.declared {
            Some(declared) if declared != found => format!(
                "the header declares {declared} records and the feed has {found}: \
                 a feed cut short (or grown) is refused whole"
            ),
            None if self.limits.count_required => "is required: the header \
                 ({\"type\":\"header\",\"version\":1,\"records\":N}) must say how many records follow, \
                 so that a feed cut short is never applied as the whole catalog"
                .to_string(),
            _ => return,
        };
        self.report_error(FeedError {
            line: 1,
            field: "records".to_string(),
            message: problem,
        });
    }

    fn read_lines(
        &mut self,
        reader: &mut impl BufRead,
        pipe: &mut Pipeline<'_>,
    ) -> std::io::Result<()> {
        let mut buf = Vec::with_capacity(64 << 10);
        loop {
            buf.clear();
            let n = std::io::Read::take(&mut *reader, MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut buf)?;
            if n == 0 {
                return Ok(());
            }
            if buf.len() > MAX_LINE_BYTES && buf.last() != Some(&b'\n') {
                self.line += 1;
                self.flush(pipe);
                self.fail(
                    "record",
                    format!("the line is longer than {MAX_LINE_BYTES} bytes"),
                );
                skip_line(reader)?;
                continue;
            }
            self.line(&buf, pipe);
        }
    }

    /// One line of the feed (its newline included or not).
    fn line(&mut self, bytes: &[u8], pipe: &mut Pipeline<'_>) {
        self.line += 1;
        let bytes = bytes.trim_ascii();
        if bytes.is_empty() {
            return;
        }
        self.records += 1;
        let kind = match kind_of(bytes) {
            Some(kind) => Some(std::borrow::Cow::Borrowed(kind)),
            None => match serde_json::from_slice::<Kind<'_>>(bytes) {
                Ok(k) => k.kind,
                Err(e) => {
                    self.flush(pipe);
                    return self.fail("record", not_json(&e));
                }
            },
        };
        if kind.as_deref() == Some("product") {
            return self.product(bytes, pipe);
        }
        // Problems are reported in line order: the batches before first.
        self.flush(pipe);
        match kind.as_deref() {
            Some("header") => self.header(bytes),
            Some("category") => self.category(bytes),
            Some("collection") => self.collection(bytes),
            Some(_) => self.fail("type", "must be header, category, product or collection"),
            None => self.fail("type", "is required"),
        }
    }

    /// `bytes` as a record of type `T`, or its problem reported.
    fn parse<T: serde::de::DeserializeOwned>(&mut self, bytes: &[u8]) -> Option<T> {
        match parse_record(bytes) {
            Ok(record) => Some(record),
            Err((field, message)) => {
                self.fail(field, message);
                None
            }
        }
    }

    /// Whether a record of `stage` may come now; a problem if not.
    fn in_order(&mut self, stage: Stage) -> bool {
        if stage < self.stage {
            self.fail(
                "type",
                "out of order: categories come first, then products, then collections",
            );
            return false;
        }
        self.stage = stage;
        true
    }

    /// The problems found so far.
    pub fn errors(&self) -> usize {
        self.errors
    }

    pub fn counts(&self) -> Counts {
        self.counts
    }

    /// The catalog read, unless the feed had a problem.
    pub fn finish(self) -> Option<Parts> {
        if self.errors > 0 {
            return None;
        }
        let products = match self.context {
            Some(cx) => cx.empty.clone().concat(self.chunks),
            None => StoredProducts::new(&Product::default()),
        };
        Some(Parts {
            categories: self.categories,
            products,
            facts: self.facts,
            skus: self.skus,
            collections: self.collections,
            currencies: self.currencies,
        })
    }
}
