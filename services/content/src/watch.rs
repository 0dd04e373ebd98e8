//! Every content replica follows its folder (`CONTENT_WATCH_SECS`): in a
//! cluster the folder is a mounted ConfigMap that the kubelet swaps whole
//! when it changes, so each replica reloads by itself within the interval
//! and a reload reaches every replica, not only the one an operator's call
//! landed on. A change is seen by the files' names, sizes and modification
//! times (and the ConfigMap's `..data` link); a broken edit is logged and
//! the last good content kept, as a reload keeps it.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::service::ContentApi;

/// What the folder holds now, cheaply: its JSON files' names, sizes and
/// modification times, and where a ConfigMap's `..data` points.
pub fn fingerprint(dir: &Path) -> std::io::Result<Vec<(String, u64, u128)>> {
    let mut seen = Vec::new();
    if let Ok(target) = std::fs::read_link(dir.join("..data")) {
        seen.push((target.to_string_lossy().into_owned(), 0, 0));
    }
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let meta = std::fs::metadata(&path)?;
        let modified = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        seen.push((
            entry.file_name().to_string_lossy().into_owned(),
            meta.len(),
            modified,
        ));
    }
    seen.sort();
    Ok(seen)
}

/// Reloads `api`'s content whenever its folder changes, every `every`,
/// until `shutdown`.
pub async fn follow(api: ContentApi, dir: Arc<Path>, every: Duration, shutdown: CancellationToken) {
    let mut last = fingerprint(&dir).ok();
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(every) => {}
        }
        let now = fingerprint(&dir).ok();
        if now.is_none() || now == last {
            continue;
        }
        last = now;
        let reloaded = api.load();
        match reloaded {
            Ok(library) => {
                let documents = library.len();
                api.replace(library);
                tracing::info!(documents, "content folder changed: reloaded");
            }
            Err(e) => {
                tracing::warn!(error = %e, "content folder changed but does not load; the last good content stays")
            }
        }
    }
}
