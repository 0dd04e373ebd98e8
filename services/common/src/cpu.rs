//! CPU-heavy request work (broad listings, searches) off the async
//! workers, at most one task per core at a time: the async workers stay
//! free for cheap requests, and a burst of heavy ones queues (without a
//! thread each) instead of thrashing the cores.

use std::sync::OnceLock;

use tokio::sync::Semaphore;

use crate::error::ServiceError;

fn permits() -> &'static Semaphore {
    static PERMITS: OnceLock<Semaphore> = OnceLock::new();
    PERMITS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(2, usize::from);
        Semaphore::new(cores)
    })
}

/// Runs `work` on the blocking pool once a core is free.
pub async fn run<T, F>(work: F) -> Result<T, ServiceError>
where
    F: FnOnce() -> T + Send + 'static,
    T: Send + 'static,
{
    let _permit = permits()
        .acquire()
        .await
        .map_err(|e| ServiceError::internal(e.to_string()))?;
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ServiceError::internal(e.to_string()))
}
