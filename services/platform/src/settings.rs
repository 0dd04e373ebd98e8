//! The settings every program shares (`ProgramSettings`), and a gRPC
//! service's (`ServiceSettings`), read from its environment.

use std::net::SocketAddr;
use std::time::Duration;

use crate::env::{AppEnvironment, ConfigError, EnvReader};
use crate::identity::DEV_ISSUER;
use crate::identity::verifier::VerifierConfig;
use crate::topology::{self, Program};

/// The gateway's service account in local and development environments.
pub const DEV_GATEWAY_ACCOUNT: &str = topology::GATEWAY.dev_account;

/// What every program reads alike, services and gateway: its environment,
/// where it listens, the issuer whose identity tokens it verifies and that
/// issuer's JWKS, and how it stops. Production and staging refuse the dev
/// issuer and a JWKS not fetched over https.
#[derive(Debug, Clone)]
pub struct ProgramSettings {
    pub environment: AppEnvironment,
    pub listen_addr: SocketAddr,
    /// `IDENTITY_ISSUER`.
    pub identity_issuer: String,
    /// `IDENTITY_JWKS_URL`.
    pub identity_jwks_url: String,
    /// `IDENTITY_JWKS_CA_FILE`: PEM certificates of the only CAs the JWKS
    /// is fetched under (a cluster's own API server, e.g. the
    /// `kube-root-ca.crt` every namespace holds); unset: the system's roots.
    pub identity_jwks_ca: Option<Vec<u8>>,
    /// How long in-flight calls may run on after the listener closes.
    pub drain_timeout: Duration,
    /// How long the program keeps accepting calls after a shutdown signal
    /// while its health reports not serving, so that callers and
    /// Kubernetes take it out of rotation before it stops listening.
    pub shutdown_delay: Duration,
    /// `SECRETS_WATCH_SECS` (10; 0: never): how often secrets read from
    /// files (`<NAME>_FILE`) are checked for a change (`secret_files`).
    pub secrets_watch: Option<Duration>,
}

impl ProgramSettings {
    /// Reads `APP_ENV`, `LISTEN_ADDR`, `IDENTITY_ISSUER`,
    /// `IDENTITY_JWKS_URL`, `DRAIN_TIMEOUT_MS` and `SHUTDOWN_DELAY_MS` for
    /// `program`: by default its local port and the dev issuer.
    pub fn from_env(program: &Program, env: &EnvReader) -> Result<Self, ConfigError> {
        let settings = Self {
            environment: env.environment()?,
            listen_addr: env.addr("LISTEN_ADDR", &program.local_addr())?,
            identity_issuer: env.string("IDENTITY_ISSUER", DEV_ISSUER),
            identity_jwks_url: env.url("IDENTITY_JWKS_URL", &topology::dev_jwks_url())?,
            identity_jwks_ca: env.raw("IDENTITY_JWKS_CA_FILE").map(jwks_ca).transpose()?,
            drain_timeout: env.millis("DRAIN_TIMEOUT_MS", 10_000)?,
            secrets_watch: env.secrets_watch()?,
            shutdown_delay: env.millis("SHUTDOWN_DELAY_MS", 0)?,
        };
        if settings.environment.refuses_dev_shortcuts() {
            if settings.identity_issuer == DEV_ISSUER {
                return Err(ConfigError::new(
                    "IDENTITY_ISSUER",
                    "the dev issuer is refused in production and staging",
                ));
            }
            if !settings.identity_jwks_url.starts_with("https://") {
                return Err(ConfigError::new(
                    "IDENTITY_JWKS_URL",
                    "production and staging require an https JWKS URL",
                ));
            }
        }
        Ok(settings)
    }

    /// How tokens for `audience` from the `allowed_callers` accounts
    /// (`account` or `account=Method|Method`) are verified; `var` names
    /// the variable the list came from, for its error.
    pub fn verifier(
        &self,
        audience: String,
        allowed_callers: Vec<String>,
        var: &'static str,
    ) -> Result<VerifierConfig, ConfigError> {
        if allowed_callers.is_empty() {
            return Err(ConfigError::new(
                var,
                "must name at least one service account",
            ));
        }
        crate::identity::verifier::Allowed::parse(&allowed_callers)
            .map_err(|e| ConfigError::new(var, e))?;
        Ok(VerifierConfig {
            issuer: self.identity_issuer.clone(),
            audience,
            jwks_url: self.identity_jwks_url.clone(),
            jwks_ca: self.identity_jwks_ca.clone(),
            allowed_callers,
        })
    }
}

/// The PEM certificates in `path`, checked to hold at least one.
fn jwks_ca(path: &str) -> Result<Vec<u8>, ConfigError> {
    let invalid = |message: String| ConfigError::new("IDENTITY_JWKS_CA_FILE", message);
    let pem = std::fs::read(path).map_err(|e| invalid(format!("cannot read {path}: {e}")))?;
    match reqwest::Certificate::from_pem_bundle(&pem) {
        Ok(certs) if !certs.is_empty() => Ok(pem),
        _ => Err(invalid(format!("{path} holds no PEM certificate"))),
    }
}

/// A gRPC service's settings: the shared ones, and who may call it.
#[derive(Debug, Clone)]
pub struct ServiceSettings {
    /// The service's name: its identity-token audience by default.
    pub name: &'static str,
    pub program: ProgramSettings,
    pub identity: VerifierConfig,
    /// `GRPC_REFLECTION` (on outside production): gRPC server reflection,
    /// so that `grpcurl list` needs no proto files. Open without a token
    /// where it is on by default; in production, when turned on, behind
    /// the identity check like any other call.
    pub reflection: Reflection,
    /// `GRPC_MAX_CONNECTION_AGE_SECS` (600): how long a client's
    /// connection lives before the server asks it to reconnect (GOAWAY);
    /// calls in flight then finish on it.
    pub max_connection_age: std::time::Duration,
}

/// Whether and how the service answers gRPC server reflection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reflection {
    Off,
    /// Without an identity token (outside production).
    Open,
    /// With an identity token, as every other call (production).
    Verified,
}

impl ServiceSettings {
    /// The shared settings of `program`, then `IDENTITY_AUDIENCE` and
    /// `ALLOWED_CALLERS`; by default its name and the dev accounts of the
    /// programs that call it (the topology's).
    pub fn from_env(program: &'static Program, env: &EnvReader) -> Result<Self, ConfigError> {
        let settings = ProgramSettings::from_env(program, env)?;
        let identity = settings.verifier(
            env.string("IDENTITY_AUDIENCE", program.name),
            env.list("ALLOWED_CALLERS", &program.dev_allowed_callers()),
            "ALLOWED_CALLERS",
        )?;
        let production = settings.environment == crate::env::AppEnvironment::Production;
        let reflection = match (env.parse("GRPC_REFLECTION", !production)?, production) {
            (false, _) => Reflection::Off,
            (true, false) => Reflection::Open,
            (true, true) => Reflection::Verified,
        };
        let age: u64 = env.parse("GRPC_MAX_CONNECTION_AGE_SECS", 600)?;
        if age == 0 {
            return Err(ConfigError::new(
                "GRPC_MAX_CONNECTION_AGE_SECS",
                "must be greater than 0",
            ));
        }
        Ok(Self {
            name: program.name,
            program: settings,
            identity,
            reflection,
            max_connection_age: std::time::Duration::from_secs(age),
        })
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
        assert_eq!(s.program.listen_addr.to_string(), "127.0.0.1:50051");
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

    /// Reflection: open locally, off in production unless turned on, and
    /// then behind the identity check.
    #[test]
    fn reflection_is_open_locally_and_verified_in_production() {
        let of = |pairs: &[(&str, &str)]| {
            let mut env = EnvReader::from_pairs(pairs.iter().copied());
            if env.raw("APP_ENV").is_some() {
                env.set("IDENTITY_ISSUER", "https://accounts.google.com");
                env.set(
                    "IDENTITY_JWKS_URL",
                    "https://www.googleapis.com/oauth2/v3/certs",
                );
            }
            ServiceSettings::from_env(&topology::CATALOG, &env)
                .unwrap()
                .reflection
        };
        assert_eq!(of(&[]), Reflection::Open);
        assert_eq!(of(&[("GRPC_REFLECTION", "false")]), Reflection::Off);
        assert_eq!(of(&[("APP_ENV", "staging")]), Reflection::Open);
        assert_eq!(of(&[("APP_ENV", "production")]), Reflection::Off);
        let on = [("APP_ENV", "production"), ("GRPC_REFLECTION", "true")];
        assert_eq!(of(&on), Reflection::Verified);
    }
}
