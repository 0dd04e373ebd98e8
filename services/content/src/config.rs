//! The content service's configuration.

use std::collections::HashMap;
use std::path::PathBuf;

use storefront_common::config::{ConfigError, EnvReader};
use storefront_common::settings::ServiceSettings;

pub const SERVICE_NAME: &str = "content";
pub const DEFAULT_ADDR: &str = "127.0.0.1:50056";
pub const DEFAULT_LOCALE: &str = "en-AU";

#[derive(Debug, Clone)]
pub struct ContentConfig {
    pub service: ServiceSettings,
    /// `CONTENT_DIR`: a folder of `*.json` content files; unset, the built-in demo set.
    pub dir: Option<PathBuf>,
    /// `CONTENT_FALLBACKS`: `locale:fallback` pairs; every chain ends at en-AU.
    pub fallbacks: HashMap<String, String>,
}

impl ContentConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(SERVICE_NAME, env, DEFAULT_ADDR)?;
        let mut fallbacks = HashMap::new();
        for pair in env.list(
            "CONTENT_FALLBACKS",
            "en-NZ:en-AU,en-GB:en-AU,en-US:en-AU,de-AT:de-DE,de-CH:de-DE",
        ) {
            let (from, to) = pair.split_once(':').ok_or_else(|| {
                ConfigError::new(
                    "CONTENT_FALLBACKS",
                    format!("{pair:?} is not locale:fallback"),
                )
            })?;
            fallbacks.insert(from.to_string(), to.to_string());
        }
        let dir = env.raw("CONTENT_DIR").map(PathBuf::from);
        if let Some(d) = &dir
            && !d.is_dir()
        {
            return Err(ConfigError::new(
                "CONTENT_DIR",
                format!("{} is not a folder", d.display()),
            ));
        }
        Ok(Self {
            service,
            dir,
            fallbacks,
        })
    }
}
