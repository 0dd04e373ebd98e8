//! Where a feed is read from (`CATALOG_FEED`): a file, or an `https://`
//! URL (an object store's signed URL, say) streamed as it downloads, so
//! neither is ever held whole.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;

use bytes::{Buf, Bytes};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    Url(String),
}

impl Source {
    /// `value` as a source; plain `http://` only where `insecure_ok` (the
    /// local and development environments).
    pub fn parse(value: &str, insecure_ok: bool) -> Result<Self, String> {
        if value.starts_with("https://") || (insecure_ok && value.starts_with("http://")) {
            Ok(Source::Url(value.to_string()))
        } else if value.starts_with("http://") {
            Err("must be https:// (or a file path) outside local and development".into())
        } else if value.is_empty() {
            Err("is empty".into())
        } else {
            Ok(Source::File(PathBuf::from(value)))
        }
    }

    /// What the log may show: a URL without its query (a signed URL's
    /// query is its credential).
    pub fn shown(&self) -> String {
        match self {
            Source::File(path) => path.display().to_string(),
            Source::Url(url) => url.split('?').next().unwrap_or_default().to_string(),
        }
    }

    /// The feed's bytes as a reader for a blocking thread; a download goes
    /// on in a task of the current runtime meanwhile.
    pub async fn open(&self) -> anyhow::Result<Box<dyn BufRead + Send>> {
        match self {
            Source::File(path) => {
                let file = std::fs::File::open(path)
                    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
                Ok(Box::new(BufReader::with_capacity(1 << 20, file)))
            }
            Source::Url(url) => {
                let response = reqwest::get(url)
                    .await
                    .and_then(reqwest::Response::error_for_status)
                    .map_err(|e| anyhow::anyhow!("{}: {}", self.shown(), e.without_url()))?;
                Ok(Box::new(BufReader::with_capacity(
                    1 << 20,
                    download(response),
                )))
            }
        }
    }
}

/// Chunks waiting between the download and the reader: a few MB at most.
const AHEAD: usize = 64;

/// The body of `response`, read as it arrives (by a blocking thread).
fn download(mut response: reqwest::Response) -> Chunks {
    let (send, chunks) = tokio::sync::mpsc::channel(AHEAD);
    tokio::spawn(async move {
        loop {
            let next = match response.chunk().await {
                Ok(Some(chunk)) => Ok(chunk),
                Ok(None) => return,
                Err(e) => Err(std::io::Error::other(e.without_url())),
            };
            let failed = next.is_err();
            if send.send(next).await.is_err() || failed {
                return;
            }
        }
    });
    Chunks::new(chunks)
}

/// Bytes arriving in chunks from a task, read by a blocking thread.
pub(crate) struct Chunks {
    chunks: tokio::sync::mpsc::Receiver<std::io::Result<Bytes>>,
    current: Bytes,
}

impl Chunks {
    pub(crate) fn new(chunks: tokio::sync::mpsc::Receiver<std::io::Result<Bytes>>) -> Self {
        Self {
            chunks,
            current: Bytes::new(),
        }
    }
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while !self.current.has_remaining() {
            match self.chunks.blocking_recv() {
                Some(chunk) => self.current = chunk?,
                // The download ended.
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.remaining());
        self.current.copy_to_slice(&mut buf[..n]);
        Ok(n)
    }
}
