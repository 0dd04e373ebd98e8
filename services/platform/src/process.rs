//! What every program's `main` shares: its process settings, telemetry,
//! the metrics port, signals, and flushing spans on the way out.

use std::future::Future;
use std::net::SocketAddr;

use anyhow::Context;
use tokio_util::sync::CancellationToken;

use crate::env::{ConfigError, EnvReader};
use crate::{shutdown, telemetry};

/// Process-wide memory settings, first thing in `main`: no transparent
/// huge pages. mimalloc asks for them, and then every first touch of its
/// memory zeroes 2 MiB: at start-up (100,000 products) that was a fifth of
/// the CPU until ready, and idle RSS was 311 MB against 276 MB without,
/// 359 MB against 294 MB under load, with no request faster for them.
pub fn tune_memory() {
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::thread::disable_transparent_huge_pages(true) {
        eprintln!("could not disable transparent huge pages: {e}");
    }
}

/// `main` of a binary: [`tune_memory`], then `program` on a multi-thread
/// tokio runtime.
pub fn block_on_tuned<F: std::future::Future>(program: F) -> std::io::Result<F::Output> {
    tune_memory();
    Ok(tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(program))
}

/// The settings of the process around a program.
#[derive(Debug, Clone)]
pub struct ProcessConfig {
    /// `OTEL_SERVICE_NAME`, defaulting to the program's name.
    pub service_name: String,
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`: OTLP/gRPC collector; no export without.
    pub otlp_endpoint: Option<String>,
    /// `METRICS_LISTEN_ADDR`: where `GET /metrics` is served; off without.
    pub metrics_addr: Option<SocketAddr>,
    /// `OTEL_SDK_DISABLED=true`: no spans, trace ids or propagation at all.
    pub traces: bool,
}

impl ProcessConfig {
    pub fn from_env(program: &str, env: &EnvReader) -> Result<Self, ConfigError> {
        let otlp_endpoint = match env.raw("OTEL_EXPORTER_OTLP_ENDPOINT") {
            Some(_) => Some(env.url("OTEL_EXPORTER_OTLP_ENDPOINT", "")?),
            None => None,
        };
        let metrics_addr = match env.raw("METRICS_LISTEN_ADDR") {
            Some(_) => Some(env.addr("METRICS_LISTEN_ADDR", "")?),
            None => None,
        };
        Ok(Self {
            service_name: env.string("OTEL_SERVICE_NAME", program),
            otlp_endpoint,
            metrics_addr,
            traces: !env.parse("OTEL_SDK_DISABLED", false)?,
        })
    }
}

/// Runs `program` as this process: reads the environment, sets up telemetry
/// and metrics, hands the program a token cancelled on SIGTERM/SIGINT, and
/// flushes spans after it returns. The program owns its graceful shutdown.
pub async fn run<F, Fut>(program: &'static str, run: F) -> anyhow::Result<()>
where
    F: FnOnce(EnvReader, CancellationToken) -> Fut,
    Fut: Future<Output = anyhow::Result<()>>,
{
    let env = EnvReader::from_process();
    let config = ProcessConfig::from_env(program, &env)?;
    let telemetry = telemetry::init(
        &config.service_name,
        config.otlp_endpoint.as_deref(),
        config.traces,
    )?;
    // A misspelt setting would otherwise be left at its default unseen.
    crate::known_settings::check(&env, env.environment()?)?;
    let metrics_stop = CancellationToken::new();
    if let Some(addr) = config.metrics_addr {
        let listener = crate::listen::bind(addr)
            .with_context(|| format!("binding METRICS_LISTEN_ADDR {addr}"))?;
        tokio::spawn(telemetry::metrics::serve(listener, metrics_stop.clone()));
    }
    let result = run(env, shutdown::on_signal()).await;
    match &result {
        Ok(()) => tracing::info!(program, "stopped"),
        Err(e) => tracing::error!(program, error = format!("{e:#}"), "failed"),
    }
    metrics_stop.cancel();
    // The flush blocks on the exporter, which needs this runtime running.
    let _ = tokio::task::spawn_blocking(move || telemetry.shutdown()).await;
    result
}
