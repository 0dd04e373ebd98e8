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
                let client = feed_client()
                    .map_err(|e| anyhow::anyhow!("{}: {}", self.shown(), e.without_url()))?;
                let response = client
                    .get(url)
                    .send()
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

/// The client a feed URL is fetched with: at most 3 redirects (a loop or
/// a chain to elsewhere ends, named), 10 s to connect, and a read that
/// stalls 60 s fails the start rather than hanging it.
fn feed_client() -> reqwest::Result<reqwest::Client> {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::limited(3))
        .connect_timeout(std::time::Duration::from_secs(10))
        .read_timeout(std::time::Duration::from_secs(60))
        .build()
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

#[cfg(test)]
mod tests {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A feed URL that redirects to itself for ever stops the start after
    /// a few hops, naming why, rather than looping.
    #[tokio::test]
    async fn a_redirect_loop_ends() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let hops = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let counted = hops.clone();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                counted.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let mut request = [0u8; 1024];
                let _ = socket.read(&mut request).await;
                let answer = "HTTP/1.1 302 Found\r\nLocation: /feed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
                let _ = socket.write_all(answer.as_bytes()).await;
            }
        });
        let source = Source::Url(format!("http://{addr}/feed?token=secret"));
        let error = source.open().await.err().expect("refused").to_string();
        assert!(error.contains("redirect"), "{error}");
        assert!(!error.contains("secret"), "the query stays out: {error}");
        assert!(hops.load(std::sync::atomic::Ordering::Relaxed) <= 4);
    }
}
