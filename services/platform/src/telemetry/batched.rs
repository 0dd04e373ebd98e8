//! Log lines to stdout in batches: a request's thread appends its line to
//! a buffer and goes on; a writer thread writes what gathered a moment
//! after the first line of a batch, in one write. A write a line was 2%
//! of a checkout confirm's CPU (docs/performance.md); tracing-appender's
//! writer thread, woken for each line, cost more than it saved there.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use tracing_subscriber::fmt::MakeWriter;

/// How long a batch gathers after its first line: how late a line may be.
const GATHER: Duration = Duration::from_millis(20);

/// A batch this large is written at once by the thread that filled it,
/// which bounds the memory held and slows a program that logs faster than
/// stdout takes it, as a full pipe would (nothing is dropped).
const FULL: usize = 256 * 1024;

struct Shared {
    pending: Mutex<Vec<u8>>,
    /// The output and a spare buffer, locked while a batch is written so
    /// that batches leave in the order they were taken.
    out: Mutex<(Box<dyn Write + Send>, Vec<u8>)>,
    stop: AtomicBool,
    writer: std::sync::OnceLock<std::thread::Thread>,
}

impl Shared {
    fn append(&self, line: &[u8]) {
        let (first, full) = {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            let first = pending.is_empty();
            pending.extend_from_slice(line);
            (first, pending.len() >= FULL)
        };
        // Without the writer thread (stopped, or never started) a line
        // is written at once.
        let writer = self
            .writer
            .get()
            .filter(|_| !self.stop.load(Ordering::Acquire));
        match writer {
            _ if full => self.write_pending(),
            None => self.write_pending(),
            // Woken once a batch, not once a line.
            Some(writer) if first => writer.unpark(),
            Some(_) => {}
        }
    }

    fn write_pending(&self) {
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        let (writer, spare) = &mut *out;
        {
            let mut pending = self.pending.lock().unwrap_or_else(PoisonError::into_inner);
            std::mem::swap(&mut *pending, spare);
        }
        if !spare.is_empty() {
            // Nowhere to report a failed write of the log itself.
            let _ = writer.write_all(spare).and_then(|()| writer.flush());
            spare.clear();
        }
    }
}

/// Where the JSON layer writes (see [`batched`]).
#[derive(Clone)]
pub struct BatchedLines(Arc<Shared>);

/// One line's writer: appends what it is given to the batch.
pub struct LineSink<'a>(&'a Shared);

impl Write for LineSink<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.append(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for BatchedLines {
    type Writer = LineSink<'a>;
    fn make_writer(&'a self) -> LineSink<'a> {
        LineSink(&self.0)
    }
}

/// Writes what is left when dropped, and stops the writer thread.
#[must_use = "dropping it stops the writer: keep it until exit"]
pub struct Flusher {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Flusher {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
        self.shared.write_pending();
    }
}

/// Lines for `out` in batches, and the guard that writes the last of them.
pub fn batched(out: impl Write + Send + 'static) -> (BatchedLines, Flusher) {
    let shared = Arc::new(Shared {
        pending: Mutex::new(Vec::new()),
        out: Mutex::new((Box::new(out), Vec::new())),
        stop: AtomicBool::new(false),
        writer: std::sync::OnceLock::new(),
    });
    let for_thread = shared.clone();
    let thread = std::thread::Builder::new()
        .name("log-writer".into())
        .spawn(move || write_batches(&for_thread))
        .ok();
    if let Some(thread) = &thread {
        let _ = shared.writer.set(thread.thread().clone());
    }
    let flusher = Flusher {
        shared: shared.clone(),
        thread,
    };
    (BatchedLines(shared), flusher)
}

fn write_batches(shared: &Shared) {
    while !shared.stop.load(Ordering::Acquire) {
        std::thread::park();
        // Let the batch gather (a stop does not wait for it).
        if !shared.stop.load(Ordering::Acquire) {
            std::thread::sleep(GATHER);
        }
        shared.write_pending();
    }
}

#[cfg(test)]
#[path = "batched_tests.rs"]
mod tests;
