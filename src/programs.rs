//! The one binary's programs: `storefront` alone runs the whole mesh in one
//! process; `storefront <program>` runs one program of it, configured only
//! by environment variables, as a container or a Kubernetes Deployment does.
//! One binary rather than one per crate: one image layer, one build, and
//! every program at the same version.

use storefront_platform::env::EnvReader;
use storefront_platform::identity::dev_issuer;
use storefront_platform::process;
use storefront_platform::service::{Entry, Main, entry};
use storefront_platform::topology;
use tokio_util::sync::CancellationToken;

use crate::Mesh;

/// `all`: the whole mesh in one process; every other name is a program of
/// the topology.
pub const ALL: &str = "all";

async fn all(env: EnvReader, shutdown: CancellationToken) -> anyhow::Result<()> {
    let mesh = Mesh::start(env, None).await?;
    // Where each service listens, for grpcurl and reflection.
    for (program, url) in &mesh.services {
        tracing::info!(program, %url, "service listening");
    }
    tracing::info!(url = %format!("http://{}", mesh.gateway_addr), "storefront mesh ready");
    mesh.run_until(shutdown).await
}

/// The domain services, each from its one `Service` shape, in the order
/// the all-in-one mesh starts them (the catalog first: its build is the
/// longest).
pub const SERVICES: &[Entry] = &[
    entry::<storefront_catalog::Catalog>(),
    entry::<storefront_customers::Customers>(),
    entry::<storefront_payments::Payments>(),
    entry::<storefront_orders::Orders>(),
    entry::<storefront_cart::Cart>(),
    entry::<storefront_search::Search>(),
    entry::<storefront_content::Content>(),
];

/// How `program` runs on its own: the services from their table; the dev
/// issuer and the gateway (the edge, with its internal port) by their own
/// `run`.
fn main_of(program: &str) -> Option<(&'static str, Main)> {
    if program == topology::DEV_ISSUER.name {
        return Some((topology::DEV_ISSUER.name, |e, s| {
            Box::pin(dev_issuer::run(e, s))
        }));
    }
    if program == topology::GATEWAY.name {
        return Some((topology::GATEWAY.name, |e, s| {
            Box::pin(storefront_gateway::run(e, s))
        }));
    }
    SERVICES
        .iter()
        .find(|s| s.program.name == program)
        .map(|s| (s.program.name, s.run))
}

/// Runs `program` until SIGTERM/SIGINT.
pub async fn run(program: &str) -> anyhow::Result<()> {
    if program == ALL {
        return process::run("storefront", all).await;
    }
    let Some((name, main)) = main_of(program) else {
        let names: Vec<&str> = std::iter::once(ALL)
            .chain(topology::PROGRAMS.iter().map(|p| p.name))
            .collect();
        anyhow::bail!(
            "unknown program {program:?}: usage `storefront [{}]`",
            names.join("|")
        )
    };
    process::run(name, main).await
}

#[cfg(test)]
mod tests {
    use storefront_platform::topology::{DEV_ISSUER, GATEWAY, PROGRAMS};

    /// Every program of the topology can be run by its name, and nothing
    /// else; every service is in the table the mesh starts.
    #[test]
    fn the_registry_is_the_topology() {
        for program in PROGRAMS {
            let (name, _) = super::main_of(program.name).expect(program.name);
            assert_eq!(name, program.name);
        }
        assert!(super::main_of("nothing").is_none());
        let mut services: Vec<&str> = super::SERVICES.iter().map(|s| s.program.name).collect();
        let mut grpc: Vec<&str> = PROGRAMS
            .iter()
            .filter(|p| p.name != DEV_ISSUER.name && p.name != GATEWAY.name)
            .map(|p| p.name)
            .collect();
        services.sort_unstable();
        grpc.sort_unstable();
        assert_eq!(services, grpc);
    }
}

#[cfg(test)]
mod settings_tests {
    use std::collections::BTreeSet;

    use storefront_platform::env::EnvReader;
    use storefront_platform::known_settings::SETTINGS;
    use storefront_platform::process::ProcessConfig;

    /// What every program reads from `pairs`, whatever it then makes of it.
    fn read_by_all(pairs: &[(&str, &str)]) -> BTreeSet<String> {
        let env = EnvReader::from_pairs(pairs.iter().copied());
        let _ = ProcessConfig::from_env("storefront", &env);
        for service in super::SERVICES {
            let _ = (service.configure)(&env);
        }
        let _ = storefront_gateway::GatewayConfig::from_env(&env);
        env.asked()
    }

    /// The list that catches misspelt settings is every name the programs
    /// read, in the embedded defaults, on Redis, and with the optional
    /// verifiers on: a setting added without it would be reported as
    /// unknown, and refused in production.
    #[test]
    fn every_setting_a_program_reads_is_known() {
        let envs: [&[(&str, &str)]; 3] = [
            &[],
            &[("REDIS_URL", "redis://127.0.0.1:6379")],
            &[("CAPTCHA_VERIFIER", "recaptcha"), ("RECAPTCHA_SECRET", "s")],
        ];
        for pairs in envs {
            let unknown: Vec<String> = read_by_all(pairs)
                .into_iter()
                .filter(|name| SETTINGS.binary_search(&name.as_str()).is_err())
                .collect();
            assert!(unknown.is_empty(), "read but not in SETTINGS: {unknown:?}");
        }
    }
}
