//! What the document says of whoever runs it: its servers, contact and
//! license come from the shop's configuration, never from a library's
//! defaults (utoipa fills in its own author and license otherwise).

use storefront_platform::env::{AppEnvironment, ConfigError, EnvReader};
use utoipa::openapi::OpenApi;
use utoipa::openapi::info::{ContactBuilder, LicenseBuilder};
use utoipa::openapi::server::Server;

/// `OPENAPI_SERVERS` (comma-separated base URLs; default: SPEC's local
/// address locally, none elsewhere, which makes clients use the address
/// they fetched the document from), `OPENAPI_CONTACT_NAME`,
/// `OPENAPI_CONTACT_URL`, `OPENAPI_CONTACT_EMAIL`, `OPENAPI_LICENSE_NAME`,
/// `OPENAPI_LICENSE_URL` (each left out of the document when unset).
#[derive(Debug, Clone, Default)]
pub struct DocumentSettings {
    pub servers: Vec<String>,
    pub contact_name: Option<String>,
    pub contact_url: Option<String>,
    pub contact_email: Option<String>,
    pub license_name: Option<String>,
    pub license_url: Option<String>,
}

impl DocumentSettings {
    pub fn from_env(env: &EnvReader, environment: AppEnvironment) -> Result<Self, ConfigError> {
        let local = matches!(
            environment,
            AppEnvironment::Local | AppEnvironment::Development
        );
        let servers = env.list(
            "OPENAPI_SERVERS",
            if local { "http://127.0.0.1:8080" } else { "" },
        );
        for server in &servers {
            if !(server.starts_with("https://") || server.starts_with("http://")) {
                return Err(ConfigError::new(
                    "OPENAPI_SERVERS",
                    format!("{server:?} is not an http(s) URL"),
                ));
            }
        }
        let optional = |var: &str| {
            env.raw(var)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        let settings = Self {
            servers,
            contact_name: optional("OPENAPI_CONTACT_NAME"),
            contact_url: optional("OPENAPI_CONTACT_URL"),
            contact_email: optional("OPENAPI_CONTACT_EMAIL"),
            license_name: optional("OPENAPI_LICENSE_NAME"),
            license_url: optional("OPENAPI_LICENSE_URL"),
        };
        if settings.license_url.is_some() && settings.license_name.is_none() {
            return Err(ConfigError::new(
                "OPENAPI_LICENSE_NAME",
                "is required with OPENAPI_LICENSE_URL",
            ));
        }
        Ok(settings)
    }

    /// Writes the servers, contact and license into `doc`, replacing
    /// whatever was there.
    pub fn apply(&self, doc: &mut OpenApi) {
        doc.servers =
            (!self.servers.is_empty()).then(|| self.servers.iter().map(Server::new).collect());
        let has_contact = self.contact_name.is_some()
            || self.contact_url.is_some()
            || self.contact_email.is_some();
        doc.info.contact = has_contact.then(|| {
            ContactBuilder::new()
                .name(self.contact_name.clone())
                .url(self.contact_url.clone())
                .email(self.contact_email.clone())
                .build()
        });
        doc.info.license = self.license_name.as_ref().map(|name| {
            LicenseBuilder::new()
                .name(name.clone())
                .url(self.license_url.clone())
                .build()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn document(pairs: &[(&str, &str)], environment: AppEnvironment) -> serde_json::Value {
        let env = EnvReader::from_pairs(pairs.iter().copied());
        let mut doc = OpenApi::default();
        DocumentSettings::from_env(&env, environment)
            .unwrap()
            .apply(&mut doc);
        serde_json::to_value(&doc).unwrap()
    }

    #[test]
    fn the_document_speaks_for_the_shop() {
        let local = document(&[], AppEnvironment::Local);
        assert_eq!(local["servers"][0]["url"], "http://127.0.0.1:8080");
        assert!(local["info"].get("contact").is_none() && local["info"].get("license").is_none());
        let production = document(&[], AppEnvironment::Production);
        assert!(
            production.get("servers").is_none(),
            "relative to where it is served"
        );
        let shop = document(
            &[
                ("OPENAPI_SERVERS", "https://api.shop.example.com"),
                ("OPENAPI_CONTACT_NAME", "Shop API team"),
                ("OPENAPI_CONTACT_EMAIL", "api@shop.example.com"),
                ("OPENAPI_LICENSE_NAME", "Proprietary"),
            ],
            AppEnvironment::Production,
        );
        assert_eq!(shop["servers"][0]["url"], "https://api.shop.example.com");
        assert_eq!(shop["info"]["contact"]["email"], "api@shop.example.com");
        assert_eq!(shop["info"]["license"]["name"], "Proprietary");
    }
}
