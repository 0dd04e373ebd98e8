//! The one shape of a domain service: configured from the environment,
//! then served on a listener with the shared store until shutdown. Run
//! alone (`storefront <name>`, or its crate's binary) it opens its own
//! store and binds its own address; in the all-in-one mesh it gets a
//! loopback listener and the store shared with the others. Both are
//! written here once, for every service, from the one trait.

use std::future::Future;
use std::pin::Pin;

use anyhow::Context;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::env::EnvReader;
use crate::process;
use crate::settings::ServiceSettings;
use crate::store::{RedisTarget, Store};
use crate::topology::Program;

/// What a service is handed to run.
pub struct Serving {
    pub listener: TcpListener,
    /// Redis (`REDIS_URL`) or, without it, memory: shared by every program
    /// of an all-in-one mesh.
    pub store: Store,
    pub shutdown: CancellationToken,
}

/// A domain service of the topology.
pub trait Service: 'static {
    /// Its entry in the topology.
    const PROGRAM: &'static Program;
    type Config: Send + 'static;

    /// Its typed configuration, validated.
    fn config(env: &EnvReader) -> anyhow::Result<Self::Config>;
    /// The settings every service has (its address among them).
    fn settings(config: &Self::Config) -> &ServiceSettings;
    /// The Redis it keeps its state in, when it has state.
    fn redis(_config: &Self::Config) -> Option<&RedisTarget> {
        None
    }
    /// Serves until `serving.shutdown`, draining in-flight calls.
    fn serve(
        config: Self::Config,
        serving: Serving,
    ) -> impl Future<Output = anyhow::Result<()>> + Send + 'static;
}

/// A program's run until it stops, boxed to be held in a table.
pub type Running = Pin<Box<dyn Future<Output = anyhow::Result<()>> + Send>>;

/// A program run on its own, configured by the environment, until the
/// token is cancelled.
pub type Main = fn(EnvReader, CancellationToken) -> Running;

/// `S` as its own program: its store and address from its configuration.
pub async fn run<S: Service>(env: EnvReader, shutdown: CancellationToken) -> anyhow::Result<()> {
    let config = S::config(&env)?;
    let store = Store::open(S::redis(&config), "sf:").await?;
    let addr = S::settings(&config).program.listen_addr;
    let listener = crate::listen::bind(addr)
        .with_context(|| format!("binding {} to {addr}", S::PROGRAM.name))?;
    let serving = Serving {
        listener,
        store,
        shutdown,
    };
    S::serve(config, serving).await
}

/// `main` of `S`'s own binary.
pub async fn main<S: Service>() -> anyhow::Result<()> {
    process::run(S::PROGRAM.name, run::<S>).await
}

/// A service as a table of programs holds it.
#[derive(Clone, Copy)]
pub struct Entry {
    pub program: &'static Program,
    /// As its own program.
    pub run: Main,
    /// Configured from the environment given (an error stops the caller
    /// before anything runs), then served as handed.
    pub start: fn(&EnvReader, Serving) -> anyhow::Result<Running>,
    /// Reads its configuration from the environment given, and drops it.
    pub configure: fn(&EnvReader) -> anyhow::Result<()>,
}

fn run_boxed<S: Service>(env: EnvReader, shutdown: CancellationToken) -> Running {
    Box::pin(run::<S>(env, shutdown))
}

fn start_boxed<S: Service>(env: &EnvReader, serving: Serving) -> anyhow::Result<Running> {
    let config = S::config(env)?;
    Ok(Box::pin(S::serve(config, serving)))
}

/// `S`'s entry for a table of programs.
pub const fn entry<S: Service>() -> Entry {
    Entry {
        program: S::PROGRAM,
        run: run_boxed::<S>,
        start: start_boxed::<S>,
        configure: |env| S::config(env).map(drop),
    }
}

/// Declares `$name`, a [`Service`]: its topology entry, its configuration
/// (`from_env`, a `service` field of [`ServiceSettings`], and for a
/// stateful service the field naming its Redis) and the crate's `serve`.
#[macro_export]
macro_rules! service {
    ($(#[$doc:meta])* $name:ident: $program:path, $config:ty, $serve:path $(, state in $redis:ident)?) => {
        $(#[$doc])*
        pub struct $name;

        impl $crate::service::Service for $name {
            const PROGRAM: &'static $crate::topology::Program = &$program;
            type Config = $config;

            fn config(env: &$crate::env::EnvReader) -> ::anyhow::Result<$config> {
                Ok(<$config>::from_env(env)?)
            }

            fn settings(config: &$config) -> &$crate::settings::ServiceSettings {
                &config.service
            }

            $(fn redis(config: &$config) -> Option<&$crate::store::RedisTarget> {
                config.$redis.as_ref()
            })?

            fn serve(
                config: $config,
                serving: $crate::service::Serving,
            ) -> impl ::std::future::Future<Output = ::anyhow::Result<()>> + Send + 'static {
                $serve(config, serving)
            }
        }
    };
}
