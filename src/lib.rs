//! The all-in-one mesh: the dev identity issuer, every domain service and
//! the gateway in one process, each on its own loopback port, talking real
//! gRPC. `cargo run --release` runs it; the end-to-end tests start it too.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use storefront_catalog::CatalogConfig;
use storefront_common::config::{AppEnvironment, EnvReader};
use storefront_common::identity::dev_issuer::{DevIssuer, JWKS_PATH};
use storefront_common::store::Store;
use storefront_customers::CustomersConfig;
use storefront_gateway::GatewayConfig;
use storefront_gateway::config::dev_identity_url;
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
    /// The state shared by the services and the gateway (memory or Redis).
    pub store: Store,
    /// The dev issuer, so tests can mint identity tokens of their own.
    pub issuer: DevIssuer,
    pub issuer_url: String,
    components: Vec<Component>,
}

async fn loopback() -> anyhow::Result<TcpListener> {
    Ok(TcpListener::bind("127.0.0.1:0").await?)
}

impl Mesh {
    /// Starts everything. `gateway` is the gateway's listener; without one
    /// the gateway binds its configured `LISTEN_ADDR` (127.0.0.1:8080).
    pub async fn start(mut env: EnvReader, gateway: Option<TcpListener>) -> anyhow::Result<Self> {
        if env.environment()?.is_production() {
            anyhow::bail!(
                "APP_ENV=production: the all-in-one binary runs the dev identity issuer; \
                 run each program on its own with a real issuer"
            );
        }
        let mut components = Vec::new();
        let issuer = DevIssuer::generate(DEV_TOKEN_TTL)?;
        let issuer_listener = loopback().await?;
        let issuer_url = format!("http://{}", issuer_listener.local_addr()?);
        let stop = CancellationToken::new();
        let handle = tokio::spawn(issuer.clone().serve(issuer_listener, stop.clone()));
        let handle = tokio::spawn(async move { Ok(handle.await??) });
        components.push(Component {
            name: "issuer",
            stop,
            handle,
        });

        env.set("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}"));
        env.set("IDENTITY_TOKEN_URL", dev_identity_url(&issuer_url));

        let catalog_listener = loopback().await?;
        let catalog_addr = catalog_listener.local_addr()?;
        let mut catalog_env = env.clone();
        catalog_env.set("LISTEN_ADDR", catalog_addr.to_string());
        let catalog_config = CatalogConfig::from_env(&catalog_env)?;
        let stop = CancellationToken::new();
        let handle = tokio::spawn(storefront_catalog::serve(
            catalog_config,
            catalog_listener,
            stop.clone(),
        ));
        components.push(Component {
            name: "catalog",
            stop,
            handle,
        });

        let store = Store::open(env.raw("REDIS_URL"), "sf:").await?;
        let customers_listener = loopback().await?;
        let customers_addr = customers_listener.local_addr()?;
        let mut customers_env = env.clone();
        customers_env.set("LISTEN_ADDR", customers_addr.to_string());
        let customers_config = CustomersConfig::from_env(&customers_env)?;
        // Demo customers exist only where the README promises them: locally.
        let seed = env.environment()? == AppEnvironment::Local;
        let stop = CancellationToken::new();
        let handle = tokio::spawn(storefront_customers::serve(
            customers_config,
            store.clone(),
            seed,
            customers_listener,
            stop.clone(),
        ));
        components.push(Component {
            name: "customers",
            stop,
            handle,
        });

        env.set("CATALOG_URL", format!("http://{catalog_addr}"));
        env.set("CUSTOMERS_URL", format!("http://{customers_addr}"));
        let gateway_config = GatewayConfig::from_env(&env)?;
        let gateway = match gateway {
            Some(listener) => listener,
            None => TcpListener::bind(gateway_config.listen_addr)
                .await
                .with_context(|| {
                    format!("binding the gateway to {}", gateway_config.listen_addr)
                })?,
        };
        let gateway_addr = gateway.local_addr()?;
        let stop = CancellationToken::new();
        let handle = tokio::spawn(storefront_gateway::serve(
            gateway_config,
            store.clone(),
            gateway,
            stop.clone(),
        ));
        components.push(Component {
            name: "gateway",
            stop,
            handle,
        });

        Ok(Self {
            gateway_addr,
            catalog_addr,
            customers_addr,
            store,
            issuer,
            issuer_url,
            components,
        })
    }

    /// Stops one component (`issuer`, `catalog`, `gateway`) and waits for it.
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
