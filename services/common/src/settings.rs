//! The settings every gRPC service shares, read from its environment.

use std::net::SocketAddr;
use std::time::Duration;

use crate::env::{AppEnvironment, ConfigError, EnvReader};
use crate::identity::DEV_ISSUER;
use crate::identity::verifier::VerifierConfig;
use crate::topology::{self, Program};

/// The gateway's service account in local and development environments.
pub const DEV_GATEWAY_ACCOUNT: &str = topology::GATEWAY.dev_account;

#[derive(Debug, Clone)]
pub struct ServiceSettings {
    /// The service's name: its identity-token audience by default.
    pub name: &'static str,
    pub environment: AppEnvironment,
    pub listen_addr: SocketAddr,
    pub identity: VerifierConfig,
    /// How long in-flight calls may run on after the listener closes.
    pub drain_timeout: Duration,
    /// How long the service keeps accepting calls after a shutdown signal
    /// while its health reports NOT_SERVING, so that callers and Kubernetes
    /// take it out of rotation before it stops listening.
    pub shutdown_delay: Duration,
}

impl ServiceSettings {
    /// Reads `LISTEN_ADDR`, `APP_ENV`, `IDENTITY_ISSUER`, `IDENTITY_JWKS_URL`,
    /// `IDENTITY_AUDIENCE`, `ALLOWED_CALLERS`, `DRAIN_TIMEOUT_MS`,
    /// `SHUTDOWN_DELAY_MS` for `program`; the defaults are the topology's
    /// (its local port, its callers' dev accounts, the dev issuer).
    pub fn from_env(program: &'static Program, env: &EnvReader) -> Result<Self, ConfigError> {
        let environment = env.environment()?;
        let identity = VerifierConfig {
            issuer: env.string("IDENTITY_ISSUER", DEV_ISSUER),
            audience: env.string("IDENTITY_AUDIENCE", program.name),
            jwks_url: env.url("IDENTITY_JWKS_URL", &topology::dev_jwks_url())?,
            allowed_callers: env.list("ALLOWED_CALLERS", &program.dev_allowed_callers()),
        };
        let settings = Self {
            name: program.name,
            environment,
            listen_addr: env.addr("LISTEN_ADDR", &program.local_addr())?,
            identity,
            drain_timeout: env.millis("DRAIN_TIMEOUT_MS", 10_000)?,
            shutdown_delay: env.millis("SHUTDOWN_DELAY_MS", 0)?,
        };
        settings.validate()?;
        Ok(settings)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        if self.identity.allowed_callers.is_empty() {
            return Err(ConfigError::new(
                "ALLOWED_CALLERS",
                "must name at least one service account",
            ));
        }
        crate::identity::verifier::Allowed::parse(&self.identity.allowed_callers)
            .map_err(|e| ConfigError::new("ALLOWED_CALLERS", e))?;
        if self.environment.refuses_dev_shortcuts() {
            if self.identity.issuer == DEV_ISSUER {
                return Err(ConfigError::new(
                    "IDENTITY_ISSUER",
                    "the dev issuer is refused in production and staging",
                ));
            }
            if !self.identity.jwks_url.starts_with("https://") {
                return Err(ConfigError::new(
                    "IDENTITY_JWKS_URL",
                    "production and staging require an https JWKS URL",
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_defaults_are_valid() {
        let s = ServiceSettings::from_env(&topology::CATALOG, &EnvReader::default()).unwrap();
        assert_eq!(s.identity.audience, "catalog");
        assert_eq!(s.identity.issuer, DEV_ISSUER);
        assert_eq!(s.listen_addr.to_string(), "127.0.0.1:50051");
        assert_eq!(
            s.identity.allowed_callers.join(","),
            topology::CATALOG.dev_allowed_callers()
        );
    }

    #[test]
    fn production_refuses_the_dev_issuer() {
        let env = EnvReader::from_pairs([("APP_ENV", "production")]);
        let err = ServiceSettings::from_env(&topology::CATALOG, &env).unwrap_err();
        assert_eq!(err.var, "IDENTITY_ISSUER");
        let env = EnvReader::from_pairs([
            ("APP_ENV", "production"),
            ("IDENTITY_ISSUER", "https://accounts.google.com"),
        ]);
        let err = ServiceSettings::from_env(&topology::CATALOG, &env).unwrap_err();
        assert_eq!(err.var, "IDENTITY_JWKS_URL");
        let env = EnvReader::from_pairs([
            ("APP_ENV", "production"),
            ("IDENTITY_ISSUER", "https://accounts.google.com"),
            (
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            ),
        ]);
        assert!(ServiceSettings::from_env(&topology::CATALOG, &env).is_ok());
    }
}
