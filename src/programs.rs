//! The one binary's programs: `storefront` alone runs the whole mesh in one
//! process; `storefront <program>` runs one program of it, configured only
//! by environment variables, as a container or a Kubernetes Deployment does.
//! One binary rather than one per crate: one image layer, one build, and
//! every program at the same version.

use futures::future::BoxFuture;
use storefront_platform::env::EnvReader;
use storefront_platform::identity::dev_issuer;
use storefront_platform::process;
use storefront_platform::topology::{self, Program};
use tokio_util::sync::CancellationToken;

use crate::Mesh;

/// `all`: the whole mesh in one process; every other name is a program of
/// the topology.
pub const ALL: &str = "all";

async fn all(env: EnvReader, shutdown: CancellationToken) -> anyhow::Result<()> {
    let mesh = Mesh::start(env, None).await?;
    tracing::info!(url = %format!("http://{}", mesh.gateway_addr), "storefront mesh ready");
    mesh.run_until(shutdown).await
}

/// How a program runs, configured by `env`, until `shutdown`.
type Main = fn(EnvReader, CancellationToken) -> BoxFuture<'static, anyhow::Result<()>>;

/// Every program of the topology with how it runs: the one table
/// `storefront <program>` reads (a test holds it to the topology).
const REGISTRY: &[(&Program, Main)] = &[
    (&topology::DEV_ISSUER, |e, s| {
        Box::pin(dev_issuer::run(e, s))
    }),
    (&topology::CATALOG, |e, s| {
        Box::pin(storefront_catalog::run(e, s))
    }),
    (&topology::CUSTOMERS, |e, s| {
        Box::pin(storefront_customers::run(e, s))
    }),
    (&topology::ORDERS, |e, s| {
        Box::pin(storefront_orders::run(e, s))
    }),
    (&topology::CART, |e, s| Box::pin(storefront_cart::run(e, s))),
    (&topology::SEARCH, |e, s| {
        Box::pin(storefront_search::run(e, s))
    }),
    (&topology::CONTENT, |e, s| {
        Box::pin(storefront_content::run(e, s))
    }),
    (&topology::GATEWAY, |e, s| {
        Box::pin(storefront_gateway::run(e, s))
    }),
];

/// Runs `program` until SIGTERM/SIGINT.
pub async fn run(program: &str) -> anyhow::Result<()> {
    if program == ALL {
        return process::run("storefront", all).await;
    }
    let Some((known, main)) = REGISTRY.iter().find(|(p, _)| p.name == program) else {
        let names: Vec<&str> = std::iter::once(ALL)
            .chain(topology::PROGRAMS.iter().map(|p| p.name))
            .collect();
        anyhow::bail!(
            "unknown program {program:?}: usage `storefront [{}]`",
            names.join("|")
        )
    };
    process::run(known.name, main).await
}

#[cfg(test)]
mod tests {
    use storefront_platform::topology::PROGRAMS;

    /// Every program of the topology can be run by its name, and nothing else.
    #[test]
    fn the_registry_is_the_topology() {
        let registry: Vec<&str> = super::REGISTRY.iter().map(|(p, _)| p.name).collect();
        let topology: Vec<&str> = PROGRAMS.iter().map(|p| p.name).collect();
        assert_eq!(registry, topology);
    }
}
