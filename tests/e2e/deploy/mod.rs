//! The deployment files, checked as a cluster or Docker would read them:
//! the Helm chart rendered for every environment and validated against the
//! Kubernetes schemas, production's manifests checked for their security
//! properties, the compose file and the Dockerfile read for what they
//! promise. Needs `helm` and `kubernetes-validate` (`scripts/test` installs both).

mod chart;
mod chart_extras;
mod chart_network;
mod chart_secrets;
mod chart_values;
mod compose;
mod roll;

use std::path::{Path, PathBuf};

use serde_json::Value;
use storefront_platform::env::EnvReader;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every YAML document of `text` (empty ones dropped), merge keys applied.
fn documents(text: &str) -> Vec<Value> {
    serde_yaml_ng::Deserializer::from_str(text)
        .map(|doc| {
            let mut value = serde_yaml_ng::Value::deserialize(doc).expect("valid YAML");
            value.apply_merge().expect("merge keys");
            serde_json::to_value(value).expect("YAML as JSON")
        })
        .filter(|v| !v.is_null())
        .collect()
}

use serde::Deserialize;

/// Whether `program`'s own configuration accepts `env`, as it would at start.
fn config_accepts(program: &str, env: &EnvReader) -> Result<(), String> {
    let result = match program {
        "gateway" => storefront_gateway::GatewayConfig::from_env(env).map(drop),
        "catalog" => storefront_catalog::CatalogConfig::from_env(env).map(drop),
        "search" => storefront_search::SearchConfig::from_env(env).map(drop),
        "cart" => storefront_cart::CartConfig::from_env(env).map(drop),
        "orders" => storefront_orders::OrdersConfig::from_env(env).map(drop),
        "customers" => storefront_customers::CustomersConfig::from_env(env).map(drop),
        "content" => storefront_content::ContentConfig::from_env(env).map(drop),
        "payments" => storefront_payments::PaymentsConfig::from_env(env).map(drop),
        other => panic!("no such program {other}"),
    };
    result.map_err(|e| format!("{program}: {e}"))
}

/// A tool `scripts/test` installs; the test fails with how to get it.
fn tool(name: &str) -> PathBuf {
    let found = std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file());
    found.unwrap_or_else(|| panic!("{name} is not on PATH: run scripts/test, which installs it"))
}
