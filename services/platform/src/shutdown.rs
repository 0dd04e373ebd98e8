//! Process signals into a cancellation token.

use tokio_util::sync::CancellationToken;

/// Cancels the returned token on SIGINT or SIGTERM.
pub fn on_signal() -> CancellationToken {
    let token = CancellationToken::new();
    let trigger = token.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        tracing::info!("shutdown signal received");
        trigger.cancel();
    });
    token
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {},
                    _ = term.recv() => {},
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

/// How long a server keeps accepting after shutdown is asked for, and how
/// long in-flight work may then take.
#[derive(Debug, Clone, Copy)]
pub struct DrainTimes {
    /// Accepting on while the load balancer takes the instance out (it
    /// stops sending once readiness fails).
    pub delay: std::time::Duration,
    /// The most in-flight work may take once accepting stopped.
    pub timeout: std::time::Duration,
}

/// The shutdown sequence of every server of the mesh: run `servers` (given
/// the token that stops them accepting) until `shutdown`; then run
/// `not_ready` (readiness fails), keep accepting for `times.delay`, stop
/// accepting, and let in-flight work finish for at most `times.timeout`.
/// Returns whether the servers finished before the timeout cut them off.
pub async fn drain<F, Fut, E>(
    shutdown: CancellationToken,
    times: DrainTimes,
    not_ready: impl std::future::Future<Output = ()>,
    servers: F,
) -> Result<bool, E>
where
    F: FnOnce(CancellationToken) -> Fut,
    Fut: std::future::Future<Output = Result<(), E>>,
{
    let stop_accepting = CancellationToken::new();
    let draining = {
        let stop_accepting = stop_accepting.clone();
        async move {
            shutdown.cancelled().await;
            not_ready.await;
            tokio::time::sleep(times.delay).await;
            stop_accepting.cancel();
            tokio::time::sleep(times.timeout).await;
        }
    };
    tokio::select! {
        result = servers(stop_accepting) => result.map(|()| true),
        () = draining => Ok(false),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use tokio::time::Instant;

    use super::*;

    const TIMES: DrainTimes = DrainTimes {
        delay: Duration::from_secs(5),
        timeout: Duration::from_secs(10),
    };

    /// Shutdown asked for after 1 s (virtual time: the clock is paused and
    /// jumps to each timer, so the durations below are exact).
    fn shutdown_after_a_second() -> CancellationToken {
        let shutdown = CancellationToken::new();
        let trigger = shutdown.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(1)).await;
            trigger.cancel();
        });
        shutdown
    }

    #[tokio::test(start_paused = true)]
    async fn readiness_fails_then_accepting_stops_after_the_delay_then_work_drains() {
        let events = Arc::new(Mutex::new(Vec::new()));
        let started = Instant::now();
        let log = |e: &'static str| {
            let events = events.clone();
            move || {
                events
                    .lock()
                    .unwrap()
                    .push((e, started.elapsed().as_secs()))
            }
        };
        let (not_ready, stopped) = (log("not ready"), log("stop accepting"));
        let drained = drain(
            shutdown_after_a_second(),
            TIMES,
            async move { not_ready() },
            |stop| async move {
                stop.cancelled().await;
                stopped();
                // In-flight work finishing within the timeout.
                tokio::time::sleep(Duration::from_secs(3)).await;
                Ok::<(), ()>(())
            },
        )
        .await;
        assert_eq!(drained, Ok(true));
        assert_eq!(
            *events.lock().unwrap(),
            [("not ready", 1), ("stop accepting", 6)]
        );
        assert_eq!(started.elapsed().as_secs(), 9);
    }

    #[tokio::test(start_paused = true)]
    async fn work_past_the_drain_timeout_is_cut_off() {
        let started = Instant::now();
        let drained = drain(shutdown_after_a_second(), TIMES, async {}, |_| {
            std::future::pending::<Result<(), ()>>()
        })
        .await;
        assert_eq!(drained, Ok(false));
        assert_eq!(started.elapsed().as_secs(), 16);
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_fails_is_an_error_at_once() {
        let drained = drain(CancellationToken::new(), TIMES, async {}, |_| async {
            Err::<(), _>("bind lost")
        })
        .await;
        assert_eq!(drained, Err("bind lost"));
    }
}
