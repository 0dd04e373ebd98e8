//! Start-up and import builds spread over every core: plain threads, so
//! that the pure domain code (listing indexes, generation, comparisons)
//! needs no runtime.

use std::sync::atomic::{AtomicUsize, Ordering};

/// `work(0..jobs)` spread over every core (start-up builds: indexes,
/// generation), results in job order. Each worker takes the next job when
/// it is free, so jobs of uneven size (or a core taken by something else
/// for a while) do not leave one worker finishing alone.
pub fn map_on_cores<R, F>(jobs: usize, work: F) -> Vec<R>
where
    F: Fn(usize) -> R + Sync,
    R: Send,
{
    let workers = std::thread::available_parallelism()
        .map_or(2, usize::from)
        .min(jobs.max(1));
    let next = AtomicUsize::new(0);
    let (work, next) = (&work, &next);
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(move || {
                    std::iter::from_fn(|| {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        (j < jobs).then(|| (j, work(j)))
                    })
                    .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_by_key(|(j, _)| *j);
    done.into_iter().map(|(_, r)| r).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_job_runs_once_and_results_keep_their_order() {
        let out = super::map_on_cores(1000, |j| j * 2);
        assert_eq!(out, (0..1000).map(|j| j * 2).collect::<Vec<_>>());
        assert!(super::map_on_cores(0, |j| j).is_empty());
    }
}
