//! The content service's configuration.

use std::collections::HashMap;
use std::path::PathBuf;

use storefront_platform::env::{ConfigError, EnvReader};
use storefront_platform::settings::ServiceSettings;
use storefront_platform::topology;

pub use storefront_proto::names::DEFAULT_LOCALE;

#[derive(Debug, Clone)]
pub struct ContentConfig {
    pub service: ServiceSettings,
    /// `CONTENT_DIR`: a folder of `*.json` content files; unset, the built-in demo set.
    pub dir: Option<PathBuf>,
    /// `CONTENT_FALLBACKS`: `locale:fallback` pairs; every chain ends at en-AU.
    pub fallbacks: HashMap<String, String>,
    /// `CONTENT_WATCH_SECS` (10; 0: off): how often the folder is checked
    /// for changes, each replica reloading by itself.
    pub watch: Option<std::time::Duration>,
}

impl ContentConfig {
    pub fn from_env(env: &EnvReader) -> Result<Self, ConfigError> {
        let service = ServiceSettings::from_env(&topology::CONTENT, env)?;
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
        // The built-in set is demo data: production serves its own content.
        if dir.is_none() && service.program.environment.refuses_dev_shortcuts() {
            return Err(ConfigError::new(
                "CONTENT_DIR",
                "production and staging require a content folder (the built-in demo set is refused)",
            ));
        }
        if let Some(d) = &dir
            && !d.is_dir()
        {
            return Err(ConfigError::new(
                "CONTENT_DIR",
                format!("{} is not a folder", d.display()),
            ));
        }
        let watch_secs: u64 = env.parse("CONTENT_WATCH_SECS", 10)?;
        if watch_secs > 3600 {
            return Err(ConfigError::new("CONTENT_WATCH_SECS", "0 (off) to 3600"));
        }
        Ok(Self {
            service,
            dir,
            fallbacks,
            watch: (watch_secs > 0).then(|| std::time::Duration::from_secs(watch_secs)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_refuses_the_demo_content() {
        let env = EnvReader::from_pairs([
            ("APP_ENV", "production"),
            ("IDENTITY_ISSUER", "https://accounts.google.com"),
            (
                "IDENTITY_JWKS_URL",
                "https://www.googleapis.com/oauth2/v3/certs",
            ),
        ]);
        let err = ContentConfig::from_env(&env).unwrap_err();
        assert_eq!(err.var, "CONTENT_DIR");
        let mut env = env;
        env.set("CONTENT_DIR", std::env::temp_dir().display().to_string());
        assert!(ContentConfig::from_env(&env).is_ok());
    }
}
