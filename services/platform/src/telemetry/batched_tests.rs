use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::prelude::*;

use super::{FULL, batched};
use crate::telemetry::json_logs;

/// Stdout as a slow pipe: each write takes a while, so batches fill while
/// one is written; counts the writes.
#[derive(Clone, Default)]
struct SlowPipe(Arc<Mutex<(Vec<u8>, usize)>>);

impl SlowPipe {
    fn written(&self) -> (String, usize) {
        let held = self.0.lock().unwrap();
        (String::from_utf8(held.0.clone()).unwrap(), held.1)
    }
}

impl Write for SlowPipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        std::thread::sleep(Duration::from_micros(300));
        let mut held = self.0.lock().unwrap();
        held.0.extend_from_slice(buf);
        held.1 += 1;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn every_line_of_every_thread_is_written_whole_and_in_order() {
    let pipe = SlowPipe::default();
    let (lines, flusher) = batched(pipe.clone());
    let dispatch = tracing::Dispatch::new(tracing_subscriber::registry().with(json_logs(lines)));
    const THREADS: u64 = 4;
    // Enough for batches to fill past FULL while a write is slow.
    const LINES: u64 = 2_000;
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            let dispatch = dispatch.clone();
            std::thread::spawn(move || {
                tracing::dispatcher::with_default(&dispatch, || {
                    let span = tracing::info_span!("request", correlation_id = %thread);
                    let _in = span.enter();
                    for n in 0..LINES {
                        tracing::info!(thread, n, padding = "x".repeat(100), "request served");
                    }
                })
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    // What is still gathering when the program stops is written then.
    drop(flusher);

    let (written, writes) = pipe.written();
    assert!(written.len() > 2 * FULL, "the test fills batches");
    let mut next = [0u64; THREADS as usize];
    for line in written.lines() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let thread = v["fields"]["thread"].as_u64().unwrap();
        assert_eq!(
            v["fields"]["n"].as_u64(),
            Some(next[thread as usize]),
            "{line}"
        );
        assert_eq!(v["span"]["correlation_id"], thread.to_string(), "{line}");
        next[thread as usize] += 1;
    }
    assert_eq!(next, [LINES; THREADS as usize]);
    // Each write holds many lines (the count is the mechanism, not a time).
    assert!(writes < (THREADS * LINES) as usize / 10, "{writes} writes");
}

#[test]
fn a_lone_line_is_written_without_another_after_it() {
    let pipe = SlowPipe::default();
    let (lines, _flusher) = batched(pipe.clone());
    lines
        .make_writer()
        .write_all(b"{\"alone\":true}\n")
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while pipe.written().0.is_empty() {
        assert!(Instant::now() < deadline, "the line was never written");
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(pipe.written(), ("{\"alone\":true}\n".to_owned(), 1));
}

#[test]
fn a_line_after_the_writer_stopped_is_written_at_once() {
    let pipe = SlowPipe::default();
    let (lines, flusher) = batched(pipe.clone());
    lines.make_writer().write_all(b"{\"n\":1}\n").unwrap();
    drop(flusher);
    lines.make_writer().write_all(b"{\"n\":2}\n").unwrap();
    assert_eq!(pipe.written().0, "{\"n\":1}\n{\"n\":2}\n");
}
