//! Where the state is kept (`REDIS_URL`, `REDIS_CLUSTER_NODES`, either from
//! a file, and `REDIS_CA_FILE`), read and checked as every stateful
//! program reads it.

use super::{AppEnvironment, ConfigError, EnvReader, Secret};
use crate::store::RedisTarget;

impl EnvReader {
    /// Where the state is kept: `REDIS_URL` (one server) or
    /// `REDIS_CLUSTER_NODES` (`host:port,host:port,...`, a Redis Cluster's
    /// nodes, any of which leads to the rest), with `REDIS_CA_FILE` (PEM)
    /// for `rediss://` servers whose certificates a private authority
    /// signs. Where `environment` refuses dev shortcuts one is required, as
    /// the state in `holds` must be shared by every replica.
    pub fn redis(
        &self,
        environment: AppEnvironment,
        holds: &str,
    ) -> Result<Option<RedisTarget>, ConfigError> {
        let (one, cluster) = (
            self.secret("REDIS_URL")?,
            self.secret("REDIS_CLUSTER_NODES")?,
        );
        let (var, secret) = match (one, cluster) {
            (Some(_), Some(_)) => {
                return Err(ConfigError::new(
                    "REDIS_CLUSTER_NODES",
                    "set REDIS_URL (one server) or REDIS_CLUSTER_NODES (a cluster), not both",
                ));
            }
            (Some(url), None) => ("REDIS_URL", Some(url)),
            (None, Some(nodes)) => ("REDIS_CLUSTER_NODES", Some(nodes)),
            (None, None) => ("REDIS_URL", None),
        };
        let url = secret
            .as_ref()
            .map(|s| redis_text(var, s.expose()))
            .transpose()?;
        let Some(url) = url else {
            if environment.refuses_dev_shortcuts() {
                return Err(ConfigError::new(
                    "REDIS_URL",
                    format!("production and staging keep {holds} in Redis"),
                ));
            }
            return Ok(None);
        };
        let mut target = RedisTarget::new(url);
        let every = self.secrets_watch()?;
        if let (Some(file), Some(every)) = (secret.as_ref().and_then(Secret::file), every) {
            target.source = Some((var, file.to_path_buf(), every));
        }
        if let Some(path) = self.raw("REDIS_CA_FILE") {
            target.ca_pem = Some(ca_bundle(path, &target)?);
        }
        Ok(Some(target))
    }
}

/// `REDIS_CA_FILE`'s certificates, for a TLS target.
fn ca_bundle(path: &str, target: &RedisTarget) -> Result<Vec<u8>, ConfigError> {
    let invalid = |message: String| ConfigError::new("REDIS_CA_FILE", message);
    if !target.is_tls() {
        return Err(invalid(
            "CA certificates are for rediss:// (TLS) URLs only".into(),
        ));
    }
    let pem = std::fs::read(path).map_err(|e| invalid(format!("cannot read {path}: {e}")))?;
    if !pem.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
        return Err(invalid(format!("{path} holds no PEM certificate")));
    }
    Ok(pem)
}

/// `REDIS_URL`'s or `REDIS_CLUSTER_NODES`' text as the URL (or node URLs)
/// connected to: what a followed file's new text is read as.
pub fn redis_text(var: &str, text: &str) -> Result<String, ConfigError> {
    if var == "REDIS_CLUSTER_NODES" {
        cluster_urls(text)
    } else {
        redis_url(text)
    }
}

/// `REDIS_CLUSTER_NODES` as the store's comma-separated node URLs: each
/// `host:port` (or a `redis://`/`rediss://` URL, kept as given).
/// `REDIS_URL` as the Redis client reads it; the value is never shown, as
/// it may carry a password.
fn redis_url(url: &str) -> Result<String, ConfigError> {
    use redis::IntoConnectionInfo;
    if url.into_connection_info().is_err() {
        return Err(ConfigError::new(
            "REDIS_URL",
            "is not a Redis URL: expected redis://[[user]:password@]host[:port][/db], or rediss:// \
             for TLS (the value is not shown: it may hold a password)",
        ));
    }
    Ok(url.to_string())
}

fn cluster_urls(nodes: &str) -> Result<String, ConfigError> {
    let invalid = |message: String| ConfigError::new("REDIS_CLUSTER_NODES", message);
    let mut urls = Vec::new();
    for node in nodes.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if node.starts_with("redis://") || node.starts_with("rediss://") {
            urls.push(node.to_string());
            continue;
        }
        let port = node
            .rsplit_once(':')
            .map(|(host, port)| (host, port.parse::<u16>()));
        match port {
            Some((host, Ok(_))) if !host.is_empty() => urls.push(format!("redis://{node}")),
            _ => {
                let shown: String = node.chars().take(64).collect();
                return Err(invalid(format!("expected host:port, got {shown:?}")));
            }
        }
    }
    if urls.is_empty() {
        return Err(invalid(
            "names no node: expected host:port,host:port,...".into(),
        ));
    }
    Ok(urls.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_is_one_server_or_a_cluster_never_both() {
        let local = AppEnvironment::Local;
        let env = EnvReader::from_pairs([("REDIS_CLUSTER_NODES", "10.0.0.1:6379, r2:7000,")]);
        assert_eq!(
            env.redis(local, "carts").unwrap().unwrap().url,
            "redis://10.0.0.1:6379,redis://r2:7000"
        );
        let tls = EnvReader::from_pairs([("REDIS_CLUSTER_NODES", "rediss://r1:6380")]);
        assert_eq!(
            tls.redis(local, "carts").unwrap().unwrap().url,
            "rediss://r1:6380"
        );
        for bad in ["r1", "r1:port", ":6379", " , "] {
            let env = EnvReader::from_pairs([("REDIS_CLUSTER_NODES", bad)]);
            assert_eq!(
                env.redis(local, "carts").unwrap_err().var,
                "REDIS_CLUSTER_NODES",
                "{bad}"
            );
        }
        let both = EnvReader::from_pairs([
            ("REDIS_URL", "redis://r1:6379"),
            ("REDIS_CLUSTER_NODES", "r1:6379"),
        ]);
        assert!(both.redis(local, "carts").is_err());
        let production = EnvReader::from_pairs([("REDIS_CLUSTER_NODES", "r1:6379")]);
        assert!(
            production
                .redis(AppEnvironment::Production, "carts")
                .unwrap()
                .is_some()
        );
    }
}
