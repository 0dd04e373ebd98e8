//! What one store operation costs this process in CPU, on Redis and in
//! memory, against a bare redis-rs connection doing the same commands in
//! the same run (the baseline): reads (`get`, HMGET) and compare-and-sets
//! (`replace`, the store's script) of a VALUE-byte value, from TASKS tasks
//! at once for SECONDS each, on a two-worker runtime like a service's.
//! Prints operations a second and CPU a operation (from /proc/self/stat),
//! and each against the bare connection's.
//!
//! It writes keys `rt:rt:{n}` and `bare:rt:{n}` there: point it at a
//! scratch server.
//!
//! `cargo run --release -p storefront-platform --example store_round_trip -- REDIS_URL [tasks] [seconds] [value bytes]`

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use storefront_platform::store::Store;

fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0)
}

/// Runs `op` from `tasks` tasks for `seconds`: (ops a second, CPU us an op).
async fn measure<F, Fut>(tasks: usize, seconds: u64, op: F) -> (f64, f64)
where
    F: Fn(usize) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let op = Arc::new(op);
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let (t0, c0) = (Instant::now(), cpu_ticks());
    let handles: Vec<_> = (0..tasks)
        .map(|n| {
            let (op, stop, done) = (op.clone(), stop.clone(), done.clone());
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) {
                    op(n).await;
                    done.fetch_add(1, Ordering::Relaxed);
                    // In memory an operation never waits: the timer must run.
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    for h in handles {
        let _ = h.await;
    }
    let (elapsed, ticks) = (t0.elapsed().as_secs_f64(), cpu_ticks() - c0);
    let ops = done.load(Ordering::Relaxed) as f64;
    // Clock ticks are 10 ms on Linux.
    (ops / elapsed, ticks as f64 * 10_000.0 / ops.max(1.0))
}

/// The store's read of a value, as a bare command (HMGET of its version and data).
async fn bare_read(c: &mut redis::aio::MultiplexedConnection, key: &str) {
    let _: (Option<u64>, Option<Vec<u8>>) = redis::cmd("HMGET")
        .arg(key)
        .arg("v")
        .arg("d")
        .query_async(c)
        .await
        .unwrap_or_default();
}

fn report(name: &str, (rate, cpu): (f64, f64), base: Option<(f64, f64)>) {
    let against = base.map_or(String::new(), |(r, c)| {
        format!("  x bare: rate {:.2}, CPU {:.2}", rate / r, cpu / c)
    });
    println!("{name:<28} {rate:>9.0} ops/s {cpu:>7.1} us CPU an op{against}");
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let url = args
        .first()
        .cloned()
        .unwrap_or("redis://127.0.0.1:6379/".into());
    let tasks: usize = args.get(1).map_or(Ok(32), |s| s.parse())?;
    let seconds: u64 = args.get(2).map_or(Ok(3), |s| s.parse())?;
    let bytes: usize = args.get(3).map_or(Ok(600), |s| s.parse())?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(run(url, tasks, seconds, bytes))
}

async fn run(url: String, tasks: usize, seconds: u64, bytes: usize) -> anyhow::Result<()> {
    let value: Arc<[u8]> = (0..bytes).map(|i| i as u8).collect::<Vec<_>>().into();
    let keys: Arc<Vec<String>> = Arc::new((0..tasks).map(|n| format!("rt:{n}")).collect());

    // As the store connects: TCP_NODELAY (Nagle's algorithm would batch
    // the bare connection's writes, and its rate would not be comparable).
    let info = redis::IntoConnectionInfo::into_connection_info(url.as_str())?
        .set_tcp_settings(redis::io::tcp::TcpSettings::default().set_nodelay(true));
    let client = redis::Client::open(info)?;
    let bare = client.get_multiplexed_async_connection().await?;
    for key in keys.iter() {
        let mut c = bare.clone();
        redis::cmd("HSET")
            .arg(format!("bare:{key}"))
            .arg("v")
            .arg(1)
            .arg("d")
            .arg(&value[..])
            .exec_async(&mut c)
            .await?;
    }
    let (c, k) = (bare.clone(), keys.clone());
    let bare_get = measure(tasks, seconds, move |n| {
        let (mut c, key) = (c.clone(), format!("bare:{}", k[n]));
        async move {
            bare_read(&mut c, &key).await;
        }
    })
    .await;
    report("bare redis-rs HMGET", bare_get, None);
    let script = Arc::new(redis::Script::new(
        "local v = redis.call('HGET', KEYS[1], 'v') redis.call('HSET', KEYS[1], 'v', tonumber(v) + 1, 'd', ARGV[1]) return tonumber(v) + 1",
    ));
    let (c, k, v, s) = (bare.clone(), keys.clone(), value.clone(), script.clone());
    let bare_cas = measure(tasks, seconds, move |n| {
        let (mut c, key, v, s) = (c.clone(), format!("bare:{}", k[n]), v.clone(), s.clone());
        async move {
            bare_read(&mut c, &key).await;
            let _: Option<u64> = s.key(&key).arg(&v[..]).invoke_async(&mut c).await.ok();
        }
    })
    .await;
    report("bare HMGET + script write", bare_cas, None);

    for (name, store) in [
        ("redis", Store::redis(&url, "rt:").await?),
        ("memory", Store::memory()),
    ] {
        for key in keys.iter() {
            store.delete(key).await?;
            store.insert(key, &value, None).await?;
        }
        let (s, k) = (store.clone(), keys.clone());
        let get = measure(tasks, seconds, move |n| {
            let (s, k) = (s.clone(), k.clone());
            async move {
                let _ = s.get(&k[n]).await;
            }
        })
        .await;
        report(&format!("Store::get ({name})"), get, Some(bare_get));
        let (s, k, v) = (store.clone(), keys.clone(), value.clone());
        let cas = measure(tasks, seconds, move |n| {
            let (s, k, v) = (s.clone(), k.clone(), v.clone());
            async move {
                if let Ok(Some(found)) = s.get(&k[n]).await {
                    let _ = s.replace(&k[n], found.version, &v, None).await;
                }
            }
        })
        .await;
        report(
            &format!("Store get + replace ({name})"),
            cas,
            Some(bare_cas),
        );
    }
    Ok(())
}
