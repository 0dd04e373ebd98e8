//! The all-in-one mesh: the dev identity issuer, every domain service and
//! the gateway in one process, each on its own loopback port, talking real
//! gRPC. `cargo run --release` runs it; the end-to-end tests start it too.

pub mod allocator;
pub mod probe;
pub mod programs;
pub mod token;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use storefront_gateway::GatewayConfig;
use storefront_platform::env::EnvReader;
use storefront_platform::identity::dev_issuer::{DevIssuer, JWKS_PATH};
use storefront_platform::listen;
use storefront_platform::service::{Running, Serving};
use storefront_platform::store::Store;
use storefront_platform::topology::{self, Program};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// How long dev identity tokens live.
const DEV_TOKEN_TTL: Duration = Duration::from_secs(3600);
/// How long a stopped component may take to finish.
const STOP_TIMEOUT: Duration = Duration::from_secs(15);

struct Component {
    name: &'static str,
    stop: CancellationToken,
    handle: JoinHandle<anyhow::Result<()>>,
}

/// A running mesh.
pub struct Mesh {
    pub gateway_addr: SocketAddr,
    pub catalog_addr: SocketAddr,
    pub customers_addr: SocketAddr,
    /// The gateway's internal (fulfilment) port.
    pub internal_addr: SocketAddr,
    /// The state shared by the services and the gateway (memory or Redis).
    pub store: Store,
    /// The dev issuer, so tests can mint identity tokens of their own.
    pub issuer: DevIssuer,
    pub issuer_url: String,
    /// Where each service (or its stand-in) listens, by program name.
    pub services: BTreeMap<&'static str, String>,
    components: Vec<Component>,
}

async fn loopback() -> anyhow::Result<TcpListener> {
    Ok(listen::bind(SocketAddr::from(([127, 0, 0, 1], 0)))?)
}

/// `addr`, or a free port when another process holds it (a second mesh on
/// the machine: its issuer is then not where `storefront token` looks, nor
/// its services where `grpcurl` is pointed).
async fn fixed_or_free(addr: &str) -> anyhow::Result<TcpListener> {
    match addr
        .parse::<SocketAddr>()
        .map_err(std::io::Error::other)
        .and_then(listen::bind)
    {
        Ok(listener) => Ok(listener),
        Err(e) => {
            tracing::warn!(addr, error = %e, "the dev issuer takes a free port: `storefront token` will not reach it");
            loopback().await
        }
    }
}

/// How to start a mesh: its environment, the gateway's listener (without
/// one the gateway binds its configured `LISTEN_ADDR`, 127.0.0.1:8080), and
/// services replaced by stand-ins at a URL (a test's silent, slow or broken
/// server), which the mesh then calls instead.
#[derive(Default)]
pub struct MeshOptions {
    pub env: EnvReader,
    pub gateway: Option<TcpListener>,
    pub stand_ins: Vec<(&'static Program, String)>,
}

/// The environment the mesh's programs are configured from, and where the
/// ones started so far (or their stand-ins) listen.
struct Wiring {
    env: EnvReader,
    /// Run for real: each service on its own port of the topology (as it
    /// runs alone), so that `grpcurl 127.0.0.1:50051` finds the catalog.
    fixed: bool,
    issuer_url: String,
    urls: BTreeMap<&'static str, String>,
    stand_ins: Vec<(&'static Program, String)>,
}

impl Wiring {
    /// `program`'s environment and its own loopback listener; none when a
    /// stand-in takes its place.
    async fn program(
        &mut self,
        program: &'static Program,
    ) -> anyhow::Result<Option<(EnvReader, TcpListener)>> {
        if let Some((_, url)) = self.stand_ins.iter().find(|(p, _)| p.name == program.name) {
            self.urls.insert(program.name, url.clone());
            return Ok(None);
        }
        let listener = if self.fixed {
            fixed_or_free(&program.local_addr()).await?
        } else {
            loopback().await?
        };
        let addr = listener.local_addr()?;
        self.urls.insert(program.name, format!("http://{addr}"));
        let mut env = self.env_for(program);
        env.set("LISTEN_ADDR", addr.to_string());
        Ok(Some((env, listener)))
    }

    /// The environment with where `program`'s callees listen and where it
    /// gets identity tokens for them.
    fn env_for(&self, program: &Program) -> EnvReader {
        let mut env = self.env.clone();
        for callee in program.downstreams() {
            env.set(&callee.url_var(), self.urls[callee.name].clone());
        }
        if !program.calls.is_empty() {
            env.set(
                "IDENTITY_TOKEN_URL",
                program.dev_token_url(&self.issuer_url),
            );
        }
        env
    }

    /// Where `program` (or its stand-in) listens.
    fn addr(&self, program: &Program) -> anyhow::Result<SocketAddr> {
        let url = &self.urls[program.name];
        url.trim_start_matches("http://")
            .parse()
            .with_context(|| format!("{} at {url}", program.name))
    }
}

#[derive(Default)]
struct Components(Vec<Component>);

/// The dev issuer's key being generated, and its listener.
type PendingIssuer = (JoinHandle<anyhow::Result<DevIssuer>>, TcpListener);

impl Components {
    fn push(&mut self, name: &'static str, stop: CancellationToken, running: Running) {
        let handle = tokio::spawn(running);
        self.0.push(Component { name, stop, handle });
    }

    /// Starts the issuer once its key is ready.
    async fn start_issuer(&mut self, (key, listener): PendingIssuer) -> anyhow::Result<DevIssuer> {
        let issuer = key.await??;
        let stop = CancellationToken::new();
        let serve = issuer.clone().serve(listener, stop.clone());
        self.push("issuer", stop, Box::pin(async move { Ok(serve.await?) }));
        Ok(issuer)
    }
}

impl Mesh {
    /// Starts everything. `gateway` is the gateway's listener; without one
    /// the gateway binds its configured `LISTEN_ADDR` (127.0.0.1:8080).
    pub async fn start(env: EnvReader, gateway: Option<TcpListener>) -> anyhow::Result<Self> {
        Self::start_with(MeshOptions {
            env,
            gateway,
            stand_ins: Vec::new(),
        })
        .await
    }

    /// Starts everything but the stand-ins of `options`.
    pub async fn start_with(options: MeshOptions) -> anyhow::Result<Self> {
        let MeshOptions {
            mut env,
            gateway,
            stand_ins,
        } = options;
        if env.environment()?.refuses_dev_shortcuts() {
            anyhow::bail!(
                "APP_ENV=production or staging: the all-in-one binary runs the dev identity issuer; \
                 run each program on its own with a real issuer"
            );
        }
        let mut mesh = Components::default();
        // The issuer's RSA key takes a while to generate: beside the
        // catalog's build, which needs only the issuer's address to start.
        let issuer = tokio::task::spawn_blocking(|| DevIssuer::generate(DEV_TOKEN_TTL));
        // Run for real (no gateway listener given), the issuer and the
        // internal port are where the README says (`storefront token`
        // reaches that issuer); a test's mesh takes free ports.
        let fixed = gateway.is_none();
        let issuer_listener = if fixed {
            fixed_or_free(&topology::DEV_ISSUER.local_addr()).await?
        } else {
            loopback().await?
        };
        let issuer_url = format!("http://{}", issuer_listener.local_addr()?);
        env.set("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}"));
        // The test provider posts its signed webhooks to this mesh's own
        // gateway, as Stripe posts to a shop's.
        let gateway_addr = match &gateway {
            Some(listener) => listener.local_addr()?.to_string(),
            None => env.string("LISTEN_ADDR", &topology::GATEWAY.local_addr()),
        };
        env.set_default(
            "PAYMENTS_WEBHOOK_URL",
            format!("http://{gateway_addr}/webhooks/payments/test"),
        );
        // The demo catalog's pictures, drawn by this mesh's own gateway.
        env.set_default(
            "DEMO_MEDIA_BASE",
            format!("http://{gateway_addr}/media/demo"),
        );
        let redis = env.redis(env.environment()?, "the mesh's state")?;
        let store = Store::open(redis.as_ref(), "sf:").await?;
        // Who may call whom, and which methods, is each service's default
        // (`topology`); here each program learns where its callees listen.
        let mut wiring = Wiring {
            env,
            fixed,
            issuer_url,
            urls: BTreeMap::new(),
            stand_ins,
        };

        let mut pending = Some((issuer, issuer_listener));
        let mut issuer = None;
        for service in programs::SERVICES {
            // The issuer's key is generated beside the first builds; it
            // serves before any program that asks it for tokens starts.
            if !service.program.calls.is_empty()
                && let Some(key) = pending.take()
            {
                issuer = Some(mesh.start_issuer(key).await?);
            }
            let Some((env, listener)) = wiring.program(service.program).await? else {
                continue;
            };
            let stop = CancellationToken::new();
            let serving = Serving {
                listener,
                store: store.clone(),
                shutdown: stop.clone(),
            };
            let running = (service.start)(&env, serving)?;
            mesh.push(service.program.name, stop, running);
        }
        let issuer = match (issuer, pending) {
            (Some(issuer), _) => issuer,
            (None, Some(key)) => mesh.start_issuer(key).await?,
            (None, None) => anyhow::bail!("the dev issuer was taken but not started"),
        };

        let catalog_addr = wiring.addr(&topology::CATALOG)?;
        let customers_addr = wiring.addr(&topology::CUSTOMERS)?;
        let env = wiring.env_for(&topology::GATEWAY);
        let issuer_url = wiring.issuer_url;
        let services = wiring.urls;
        let gateway_config = GatewayConfig::from_env(&env)?;
        let gateway = match gateway {
            Some(listener) => listener,
            None => listen::bind(gateway_config.program.listen_addr).with_context(|| {
                format!(
                    "binding the gateway to {}",
                    gateway_config.program.listen_addr
                )
            })?,
        };
        let internal = if fixed || env.raw("INTERNAL_LISTEN_ADDR").is_some() {
            listen::bind(gateway_config.internal_addr).with_context(|| {
                format!(
                    "binding the internal port to {}",
                    gateway_config.internal_addr
                )
            })?
        } else {
            loopback().await?
        };
        let gateway_addr = gateway.local_addr()?;
        let internal_addr = internal.local_addr()?;
        let stop = CancellationToken::new();
        let serve = storefront_gateway::serve(
            gateway_config,
            store.clone(),
            gateway,
            internal,
            stop.clone(),
        );
        mesh.push("gateway", stop, Box::pin(serve));

        Ok(Self {
            gateway_addr,
            internal_addr,
            catalog_addr,
            customers_addr,
            store,
            issuer,
            issuer_url,
            services,
            components: mesh.0,
        })
    }

    /// Stops one component (`issuer`, `catalog`, `customers`, `orders`,
    /// `cart`, `gateway`) and waits for it.
    pub async fn stop(&mut self, name: &str) -> anyhow::Result<()> {
        let index = self
            .components
            .iter()
            .position(|c| c.name == name)
            .context("no such component")?;
        let component = self.components.remove(index);
        component.stop.cancel();
        tokio::time::timeout(STOP_TIMEOUT, component.handle)
            .await
            .context("component did not stop")???;
        Ok(())
    }

    /// Runs until `shutdown` is cancelled or a component fails, then stops
    /// the gateway first (so it drains) and the rest after it.
    pub async fn run_until(mut self, shutdown: CancellationToken) -> anyhow::Result<()> {
        let failed = {
            let watched = self
                .components
                .iter_mut()
                .map(|c| Box::pin(async { (c.name, (&mut c.handle).await) }));
            tokio::select! {
                () = shutdown.cancelled() => None,
                ((name, result), _, _) = futures::future::select_all(watched) => Some((name, result)),
            }
        };
        if let Some((name, result)) = failed {
            self.components.retain(|c| c.name != name);
            self.shutdown().await;
            return match result {
                Ok(Ok(())) => Err(anyhow::anyhow!("{name} stopped unexpectedly")),
                Ok(Err(e)) => Err(e.context(format!("{name} failed"))),
                Err(e) => Err(anyhow::anyhow!("{name} panicked: {e}")),
            };
        }
        self.shutdown().await;
        Ok(())
    }

    /// Stops everything, gateway first.
    pub async fn shutdown(mut self) {
        while let Some(component) = self.components.pop() {
            let name = component.name;
            if let Err(e) = self.stop_component(component).await {
                tracing::warn!(component = name, error = %e, "component stopped with an error");
            }
        }
    }

    async fn stop_component(&mut self, component: Component) -> anyhow::Result<()> {
        component.stop.cancel();
        tokio::time::timeout(STOP_TIMEOUT, component.handle)
            .await
            .context("component did not stop")???;
        Ok(())
    }
}
