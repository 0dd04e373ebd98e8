//! The `storefront.content.v1.ContentService` gRPC implementation.

use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use storefront_proto::error::codes;

use storefront_platform::error::{ErrorKind, ServiceError};
use storefront_proto::content::v1::content_service_server::ContentService;
use storefront_proto::content::v1::*;
use tonic::{Request, Response, Status};

use crate::files;
use crate::library::Library;

#[derive(Clone)]
pub struct ContentApi {
    pub library: Arc<RwLock<Arc<Library>>>,
    pub dir: Option<PathBuf>,
    pub fallbacks: std::collections::HashMap<String, String>,
}

fn valid_slug(slug: &str) -> bool {
    (1..=64).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

impl ContentApi {
    /// Reads the content (folder or built-in demo) into a new library.
    pub fn load(&self) -> anyhow::Result<Library> {
        let entries = match &self.dir {
            Some(dir) => files::read_dir(dir)?,
            None => files::parse(files::DEMO)?,
        };
        Library::new(entries, self.fallbacks.clone())
    }

    /// Serves `library` from now on.
    pub fn replace(&self, library: Library) {
        *self.library.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(library);
    }

    fn current(&self) -> Arc<Library> {
        self.library
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn found(&self, key: &str, locale: &str, what: &str) -> Result<Document, ServiceError> {
        self.current().document(key, locale).ok_or_else(|| {
            ServiceError::new(
                ErrorKind::NotFound,
                codes::NOT_FOUND,
                format!("no {what} in {locale} or its fallbacks"),
            )
        })
    }
}

#[tonic::async_trait]
impl ContentService for ContentApi {
    async fn get_footer(
        &self,
        request: Request<LocalizedRequest>,
    ) -> Result<Response<Document>, Status> {
        let locale = request.into_inner().locale;
        Ok(Response::new(self.found("footer", &locale, "footer")?))
    }

    async fn get_page(
        &self,
        request: Request<GetPageRequest>,
    ) -> Result<Response<Document>, Status> {
        let req = request.into_inner();
        if !valid_slug(&req.slug) {
            return Err(ServiceError::not_found("page", &req.slug).into());
        }
        Ok(Response::new(self.found(
            &format!("page:{}", req.slug),
            &req.locale,
            "such page",
        )?))
    }

    async fn list_banners(
        &self,
        request: Request<LocalizedRequest>,
    ) -> Result<Response<BannerList>, Status> {
        let locale = request.into_inner().locale;
        let (locale, banners) = self
            .current()
            .banners(&locale, storefront_domain::time::now().seconds);
        Ok(Response::new(BannerList { locale, banners }))
    }

    async fn reload(&self, _: Request<ReloadRequest>) -> Result<Response<ReloadResponse>, Status> {
        let library = self.load().map_err(|e| {
            ServiceError::new(
                ErrorKind::Validation,
                "INVALID_CONTENT",
                format!("content not reloaded: {e}"),
            )
        })?;
        let documents = library.len() as u64;
        self.replace(library);
        tracing::info!(documents, "content reloaded");
        Ok(Response::new(ReloadResponse { documents }))
    }
}
