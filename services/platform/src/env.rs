//! Typed configuration from environment variables.
//!
//! Every program reads its settings through a [`EnvReader`] built from a map,
//! so tests pass their own environment instead of mutating the process one.
//! A bad value stops the program with a message naming the variable.

use std::collections::{BTreeSet, HashMap};
use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::identity::token_source::TokenOrigin;

mod redis;
pub use redis::redis_text;

/// A configuration problem, always naming the variable at fault.
#[derive(Debug, thiserror::Error)]
#[error("invalid configuration: {var}: {message}")]
pub struct ConfigError {
    pub var: String,
    pub message: String,
}

impl ConfigError {
    pub fn new(var: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            var: var.into(),
            message: message.into(),
        }
    }
}

/// The deployment environments a program runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AppEnvironment {
    Production,
    Staging,
    Development,
    Local,
}

impl AppEnvironment {
    /// Production and staging (production's shape, reachable from outside)
    /// refuse development shortcuts: the dev identity issuer, the dev
    /// captcha, demo data, state kept in process.
    pub fn refuses_dev_shortcuts(self) -> bool {
        matches!(self, AppEnvironment::Production | AppEnvironment::Staging)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            AppEnvironment::Production => "production",
            AppEnvironment::Staging => "staging",
            AppEnvironment::Development => "development",
            AppEnvironment::Local => "local",
        }
    }
}

impl FromStr for AppEnvironment {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "production" => Ok(Self::Production),
            "staging" => Ok(Self::Staging),
            "development" => Ok(Self::Development),
            "local" => Ok(Self::Local),
            _ => Err("expected one of production, staging, development, local".into()),
        }
    }
}

impl fmt::Display for AppEnvironment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A secret value that never appears in `Debug` or `Display` output: the
/// variable's value, or the text of the file `<NAME>_FILE` names (a
/// mounted Secret's key), which `secret_files::watch` re-reads.
#[derive(Clone, Default)]
pub struct Secret {
    value: String,
    file: Option<std::path::PathBuf>,
}

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self {
            value: value.into(),
            file: None,
        }
    }
    pub fn expose(&self) -> &str {
        &self.value
    }
    /// The file it was read from, which may change while the program runs.
    pub fn file(&self) -> Option<&std::path::Path> {
        self.file.as_deref()
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

/// Reads typed values out of an environment map, and remembers which
/// names were asked for (shared by its clones), so that a test can hold
/// the list of settings (`known_settings`) to what the programs read.
#[derive(Debug, Clone, Default)]
pub struct EnvReader {
    vars: HashMap<String, String>,
    asked: Arc<Mutex<BTreeSet<String>>>,
}

impl EnvReader {
    /// The process environment.
    pub fn from_process() -> Self {
        Self {
            vars: std::env::vars().collect(),
            asked: Arc::default(),
        }
    }

    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        Self {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            asked: Arc::default(),
        }
    }

    /// Sets a value unless the environment already has one.
    pub fn set_default(&mut self, var: &str, value: impl Into<String>) {
        self.vars
            .entry(var.to_string())
            .or_insert_with(|| value.into());
    }

    pub fn set(&mut self, var: &str, value: impl Into<String>) {
        self.vars.insert(var.to_string(), value.into());
    }

    /// The names set, whatever their value.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.vars.keys().map(String::as_str)
    }

    /// Every name asked for so far, by this reader and its clones.
    pub fn asked(&self) -> BTreeSet<String> {
        self.asked.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The raw value, with blank values treated as absent.
    pub fn raw(&self, var: &str) -> Option<&str> {
        let mut asked = self.asked.lock().unwrap_or_else(|p| p.into_inner());
        if !asked.contains(var) {
            asked.insert(var.to_string());
        }
        drop(asked);
        self.vars
            .get(var)
            .map(|v| v.trim())
            .filter(|v| !v.is_empty())
    }

    /// `var`'s value, or the text of the file `<var>_FILE` names (trimmed;
    /// both set is refused, as is an unreadable or empty file).
    pub fn secret(&self, var: &str) -> Result<Option<Secret>, ConfigError> {
        let file_var = format!("{var}_FILE");
        match (self.raw(var), self.raw(&file_var)) {
            (Some(_), Some(_)) => Err(ConfigError::new(
                var,
                format!("set either {var} or {file_var}, not both"),
            )),
            (Some(value), None) => Ok(Some(Secret::new(value))),
            (None, Some(path)) => {
                let value = read_secret_file(std::path::Path::new(path))
                    .map_err(|m| ConfigError::new(&file_var, m))?;
                Ok(Some(Secret {
                    value,
                    file: Some(path.into()),
                }))
            }
            (None, None) => Ok(None),
        }
    }

    /// As `secret`, for a key a Secret may lack (mounted `optional`): a
    /// file that does not exist is no value. One added later is read at
    /// the next start.
    pub fn optional_secret(&self, var: &str) -> Result<Option<Secret>, ConfigError> {
        let file = self.raw(&format!("{var}_FILE")).map(std::path::Path::new);
        if file.is_some_and(|f| !f.exists()) && self.raw(var).is_none() {
            return Ok(None);
        }
        self.secret(var)
    }

    /// `SECRETS_WATCH_SECS`: how often secret files are checked (10; 0:
    /// never, None).
    pub fn secrets_watch(&self) -> Result<Option<Duration>, ConfigError> {
        let secs: u64 = self.parse("SECRETS_WATCH_SECS", 10)?;
        if secs > 3600 {
            return Err(ConfigError::new("SECRETS_WATCH_SECS", "0 (never) to 3600"));
        }
        Ok((secs > 0).then(|| Duration::from_secs(secs)))
    }

    /// As `secret`, required.
    pub fn required_secret(&self, var: &str) -> Result<Secret, ConfigError> {
        self.secret(var)?
            .ok_or_else(|| ConfigError::new(var, format!("is required (or {var}_FILE)")))
    }

    pub fn string(&self, var: &str, default: &str) -> String {
        self.raw(var).unwrap_or(default).to_string()
    }

    pub fn required(&self, var: &str) -> Result<String, ConfigError> {
        self.raw(var)
            .map(str::to_string)
            .ok_or_else(|| ConfigError::new(var, "is required"))
    }

    pub fn parse<T: FromStr>(&self, var: &str, default: T) -> Result<T, ConfigError>
    where
        T::Err: fmt::Display,
    {
        match self.raw(var) {
            None => Ok(default),
            Some(raw) => raw.parse().map_err(|e| {
                let expected = expected_form::<T>();
                ConfigError::new(var, format!("{raw:?} is not {expected} ({e})"))
            }),
        }
    }

    pub fn addr(&self, var: &str, default: &str) -> Result<SocketAddr, ConfigError> {
        let raw = self.raw(var).unwrap_or(default);
        raw.parse()
            .map_err(|e| ConfigError::new(var, format!("{raw:?} is not a socket address: {e}")))
    }

    /// A duration in milliseconds.
    pub fn millis(&self, var: &str, default_ms: u64) -> Result<Duration, ConfigError> {
        self.parse(var, default_ms).map(Duration::from_millis)
    }

    /// A comma-separated list; empty entries are dropped.
    pub fn list(&self, var: &str, default: &str) -> Vec<String> {
        self.raw(var)
            .unwrap_or(default)
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    }

    pub fn environment(&self) -> Result<AppEnvironment, ConfigError> {
        self.parse("APP_ENV", AppEnvironment::Local)
    }

    /// Where this program gets its identity tokens: `IDENTITY_TOKEN_DIR`
    /// (projected service-account token files, one per audience, on any
    /// Kubernetes cluster) or `IDENTITY_TOKEN_URL` (a metadata server;
    /// `dev_default`: the dev issuer's, on loopback), not both. Where
    /// `environment` refuses dev shortcuts the URL must not be on loopback.
    pub fn identity_tokens(
        &self,
        environment: AppEnvironment,
        dev_default: &str,
    ) -> Result<TokenOrigin, ConfigError> {
        if let Some(dir) = self.raw("IDENTITY_TOKEN_DIR") {
            if self.raw("IDENTITY_TOKEN_URL").is_some() {
                return Err(ConfigError::new(
                    "IDENTITY_TOKEN_DIR",
                    "set IDENTITY_TOKEN_DIR or IDENTITY_TOKEN_URL, not both",
                ));
            }
            if !std::path::Path::new(dir).is_dir() {
                return Err(ConfigError::new(
                    "IDENTITY_TOKEN_DIR",
                    format!("{dir} is not a directory (the projected token volume's mount)"),
                ));
            }
            return Ok(TokenOrigin::Files(dir.into()));
        }
        let url = self.url("IDENTITY_TOKEN_URL", dev_default)?;
        if environment.refuses_dev_shortcuts() && is_loopback_url(&url) {
            return Err(ConfigError::new(
                "IDENTITY_TOKEN_URL",
                "the dev issuer is refused in production and staging",
            ));
        }
        Ok(TokenOrigin::Metadata(url))
    }

    /// An `http(s)://` URL; production requires https unless `allow_http`.
    pub fn url(&self, var: &str, default: &str) -> Result<String, ConfigError> {
        let raw = self.raw(var).unwrap_or(default);
        if !(raw.starts_with("http://") || raw.starts_with("https://")) {
            return Err(ConfigError::new(
                var,
                format!("{raw:?} is not an http(s) URL"),
            ));
        }
        Ok(raw.trim_end_matches('/').to_string())
    }
}

/// The form a value of `T` takes, in words, for an error message.
fn expected_form<T>() -> &'static str {
    match std::any::type_name::<T>() {
        "u8" | "u16" | "u32" | "u64" | "usize" => "a whole number (0 or more)",
        "i32" | "i64" => "a whole number",
        "f32" | "f64" => "a number",
        "bool" => "true or false",
        _ => "a valid value",
    }
}

/// True when `url` points at this machine (a development component).
pub fn is_loopback_url(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let host = rest.split(['/', '?']).next().unwrap_or_default();
    let host = match host.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => host,
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// Largest secret file read: a key or a URL, never a megabyte.
const MAX_BYTES: u64 = 64 * 1024;

/// A secret file's text, trimmed; refused unreadable, empty or too large.
pub fn read_secret_file(path: &std::path::Path) -> Result<String, String> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| format!("{shown} cannot be read: {e}"))?
        .len();
    if size > MAX_BYTES {
        return Err(format!(
            "{shown} is {size} bytes; a secret is at most {MAX_BYTES}"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{shown} cannot be read: {e}"))?;
    let text = text.trim();
    if text.is_empty() {
        return Err(format!("{shown} is empty"));
    }
    Ok(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every error names the variable and the form expected, and never
    /// shows a Redis URL (it may hold a password).
    #[test]
    fn a_bad_value_names_its_variable_and_the_form_expected() {
        let env = EnvReader::from_pairs([
            ("CATALOG_SIZE", "ten"),
            ("GRPC_REFLECTION", "yes"),
            ("REDIS_URL", "http://:hunter2@r1"),
        ]);
        let size = env
            .parse::<usize>("CATALOG_SIZE", 0)
            .unwrap_err()
            .to_string();
        assert!(
            size.starts_with("invalid configuration: CATALOG_SIZE: \"ten\" is not a whole number"),
            "{size}"
        );
        let flag = env.parse("GRPC_REFLECTION", false).unwrap_err().to_string();
        assert!(
            flag.contains("GRPC_REFLECTION: \"yes\" is not true or false"),
            "{flag}"
        );
        let redis = env.redis(AppEnvironment::Local, "carts").unwrap_err();
        assert_eq!(redis.var, "REDIS_URL");
        assert!(redis.message.contains("expected redis://"), "{redis}");
        assert!(!redis.to_string().contains("hunter2"), "{redis}");
    }

    #[test]
    fn bad_values_name_their_variable() {
        let env = EnvReader::from_pairs([("CATALOG_SIZE", "lots"), ("APP_ENV", "prod")]);
        let err = env.parse::<usize>("CATALOG_SIZE", 10).unwrap_err();
        assert_eq!(err.var, "CATALOG_SIZE");
        assert!(err.to_string().contains("CATALOG_SIZE"));
        assert_eq!(env.environment().unwrap_err().var, "APP_ENV");
    }

    #[test]
    fn blank_is_absent_and_lists_split() {
        let env = EnvReader::from_pairs([("A", "  "), ("L", "x, y,,z")]);
        assert_eq!(env.parse::<u32>("A", 7).unwrap(), 7);
        assert_eq!(env.list("L", ""), vec!["x", "y", "z"]);
    }

    #[test]
    fn loopback_urls_are_recognised() {
        assert!(is_loopback_url("http://127.0.0.1:9000/x"));
        assert!(is_loopback_url("http://localhost/x"));
        assert!(is_loopback_url("http://[::1]:80"));
        assert!(!is_loopback_url(
            "http://metadata.google.internal/computeMetadata"
        ));
        assert!(!is_loopback_url(
            "https://www.googleapis.com/oauth2/v3/certs"
        ));
    }

    #[test]
    fn secrets_do_not_print() {
        let s = Secret::new("hunter2");
        assert!(!format!("{s:?}").contains("hunter2"));
    }
}
