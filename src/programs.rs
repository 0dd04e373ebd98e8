//! The one binary's programs: `storefront` alone runs the whole mesh in one
//! process; `storefront <program>` runs one program of it, configured only
//! by environment variables, as a container or a Kubernetes Deployment does.
//! One binary rather than one per crate: one image layer, one build, and
//! every program at the same version.

use storefront_platform::env::EnvReader;
use storefront_platform::identity::dev_issuer;
use storefront_platform::process;
use storefront_platform::topology;
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

/// Runs `program` until SIGTERM/SIGINT.
pub async fn run(program: &str) -> anyhow::Result<()> {
    match program {
        ALL => process::run("storefront", all).await,
        "gateway" => process::run("gateway", storefront_gateway::run).await,
        "catalog" => process::run("catalog", storefront_catalog::run).await,
        "search" => process::run("search", storefront_search::run).await,
        "cart" => process::run("cart", storefront_cart::run).await,
        "orders" => process::run("orders", storefront_orders::run).await,
        "customers" => process::run("customers", storefront_customers::run).await,
        "content" => process::run("content", storefront_content::run).await,
        "dev-issuer" => process::run("dev-issuer", dev_issuer::run).await,
        other => {
            let names: Vec<&str> = std::iter::once(ALL)
                .chain(topology::PROGRAMS.iter().map(|p| p.name))
                .collect();
            anyhow::bail!(
                "unknown program {other:?}: usage `storefront [{}]`",
                names.join("|")
            )
        }
    }
}
