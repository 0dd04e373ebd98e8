//! The all-in-one mesh: the dev identity issuer, every domain service and
//! the gateway in one process, each on its own loopback port, talking real
//! gRPC. `cargo run --release` runs it; the end-to-end tests start it too.

pub mod probe;
pub mod programs;

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use storefront_cart::CartConfig;
use storefront_cart::config::DEV_CART_ACCOUNT;
use storefront_catalog::CatalogConfig;
use storefront_common::env::{AppEnvironment, EnvReader};
use storefront_common::identity::dev_issuer::{
    DevIssuer, JWKS_PATH, account_url as dev_account_url,
};
use storefront_common::settings::DEV_GATEWAY_ACCOUNT;
use storefront_common::store::Store;
use storefront_content::ContentConfig;
use storefront_customers::CustomersConfig;
use storefront_gateway::GatewayConfig;
use storefront_gateway::config::dev_identity_url;
use storefront_orders::OrdersConfig;
use storefront_search::SearchConfig;
use storefront_search::config::DEV_SEARCH_ACCOUNT;
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
    components: Vec<Component>,
}

async fn loopback() -> anyhow::Result<TcpListener> {
    Ok(TcpListener::bind("127.0.0.1:0").await?)
}

/// A service's environment (its own loopback port, its callers unless the
/// environment names them) and its listener.
async fn service_env(env: &EnvReader, callers: &str) -> anyhow::Result<(EnvReader, TcpListener)> {
    let listener = loopback().await?;
    let mut service = env.clone();
    service.set("LISTEN_ADDR", listener.local_addr()?.to_string());
    service.set_default("ALLOWED_CALLERS", callers);
    Ok((service, listener))
}

#[derive(Default)]
struct Components(Vec<Component>);

impl Components {
    fn spawn<F, Fut>(&mut self, name: &'static str, run: F)
    where
        F: FnOnce(CancellationToken) -> Fut,
        Fut: std::future::Future<Output = anyhow::Result<()>> + Send + 'static,
    {
        let stop = CancellationToken::new();
        let handle = tokio::spawn(run(stop.clone()));
        self.0.push(Component { name, stop, handle });
    }
}

impl Mesh {
    /// Starts everything. `gateway` is the gateway's listener; without one
    /// the gateway binds its configured `LISTEN_ADDR` (127.0.0.1:8080).
    pub async fn start(mut env: EnvReader, gateway: Option<TcpListener>) -> anyhow::Result<Self> {
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
        let issuer_listener = loopback().await?;
        let issuer_url = format!("http://{}", issuer_listener.local_addr()?);
        env.set("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}"));
        env.set("IDENTITY_TOKEN_URL", dev_identity_url(&issuer_url));
        let store = Store::open(env.raw("REDIS_URL"), "sf:").await?;

        // Who may call whom: the gateway everything; the cart service prices
        // lines at the catalog and creates orders; search exports the
        // catalog. Each only the methods it uses.
        let catalog_callers = format!(
            "{DEV_GATEWAY_ACCOUNT},{DEV_CART_ACCOUNT}={},{DEV_SEARCH_ACCOUNT}={}",
            storefront_cart::config::CALLS_ON_CATALOG,
            storefront_search::config::CALLS_ON_CATALOG,
        );
        let orders_callers = format!(
            "{DEV_GATEWAY_ACCOUNT},{DEV_CART_ACCOUNT}={}",
            storefront_cart::config::CALLS_ON_ORDERS
        );
        let (catalog_env, catalog) = service_env(&env, &catalog_callers).await?;
        let config = CatalogConfig::from_env(&catalog_env)?;
        let catalog_addr = catalog.local_addr()?;
        mesh.spawn("catalog", |stop| {
            storefront_catalog::serve(config, catalog, stop)
        });
        let issuer = issuer.await??;
        mesh.spawn("issuer", |stop| {
            let serve = issuer.clone().serve(issuer_listener, stop);
            async move { Ok(serve.await?) }
        });

        let (customers_env, customers) = service_env(&env, DEV_GATEWAY_ACCOUNT).await?;
        let config = CustomersConfig::from_env(&customers_env)?;
        let customers_addr = customers.local_addr()?;
        // Demo customers exist only where the README promises them: locally.
        let seed = env.environment()? == AppEnvironment::Local;
        let s = store.clone();
        mesh.spawn("customers", |stop| {
            storefront_customers::serve(config, s, seed, customers, stop)
        });

        let (orders_env, orders) = service_env(&env, &orders_callers).await?;
        let config = OrdersConfig::from_env(&orders_env)?;
        let orders_addr = orders.local_addr()?;
        let s = store.clone();
        mesh.spawn("orders", |stop| {
            storefront_orders::serve(config, s, orders, stop)
        });

        let (mut cart_env, cart) = service_env(&env, DEV_GATEWAY_ACCOUNT).await?;
        cart_env.set("CATALOG_URL", format!("http://{catalog_addr}"));
        cart_env.set("ORDERS_URL", format!("http://{orders_addr}"));
        cart_env.set(
            "IDENTITY_TOKEN_URL",
            dev_account_url(&issuer_url, DEV_CART_ACCOUNT),
        );
        let config = CartConfig::from_env(&cart_env)?;
        let cart_addr = cart.local_addr()?;
        let s = store.clone();
        mesh.spawn("cart", |stop| storefront_cart::serve(config, s, cart, stop));

        let (mut search_env, search) = service_env(&env, DEV_GATEWAY_ACCOUNT).await?;
        search_env.set("CATALOG_URL", format!("http://{catalog_addr}"));
        search_env.set(
            "IDENTITY_TOKEN_URL",
            dev_account_url(&issuer_url, DEV_SEARCH_ACCOUNT),
        );
        let config = SearchConfig::from_env(&search_env)?;
        let search_addr = search.local_addr()?;
        mesh.spawn("search", |stop| {
            storefront_search::serve(config, search, stop)
        });

        let (content_env, content) = service_env(&env, DEV_GATEWAY_ACCOUNT).await?;
        let config = ContentConfig::from_env(&content_env)?;
        let content_addr = content.local_addr()?;
        mesh.spawn("content", |stop| {
            storefront_content::serve(config, content, stop)
        });

        env.set("CATALOG_URL", format!("http://{catalog_addr}"));
        env.set("CONTENT_URL", format!("http://{content_addr}"));
        env.set("SEARCH_URL", format!("http://{search_addr}"));
        env.set("CUSTOMERS_URL", format!("http://{customers_addr}"));
        env.set("CART_URL", format!("http://{cart_addr}"));
        env.set("ORDERS_URL", format!("http://{orders_addr}"));
        let gateway_config = GatewayConfig::from_env(&env)?;
        let gateway = match gateway {
            Some(listener) => listener,
            None => TcpListener::bind(gateway_config.listen_addr)
                .await
                .with_context(|| {
                    format!("binding the gateway to {}", gateway_config.listen_addr)
                })?,
        };
        let internal = match env.raw("INTERNAL_LISTEN_ADDR") {
            Some(_) => TcpListener::bind(gateway_config.internal_addr).await?,
            None => loopback().await?,
        };
        let gateway_addr = gateway.local_addr()?;
        let internal_addr = internal.local_addr()?;
        let s = store.clone();
        mesh.spawn("gateway", |stop| {
            storefront_gateway::serve(gateway_config, s, gateway, internal, stop)
        });

        Ok(Self {
            gateway_addr,
            internal_addr,
            catalog_addr,
            customers_addr,
            store,
            issuer,
            issuer_url,
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
