//! CMS content as JSON: documents of typed sections, and banners.

use serde::Serialize;
use storefront_proto::content::v1 as pb;
use utoipa::ToSchema;

use super::common::timestamp;

#[derive(Debug, Serialize, ToSchema)]
pub struct Link {
    pub label: String,
    pub url: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Image {
    pub url: String,
    /// Alternative text.
    pub alt: String,
    pub width: u32,
    pub height: u32,
}

/// A typed block of a document.
#[derive(Debug, Serialize, ToSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Section {
    Links {
        title: String,
        links: Vec<Link>,
    },
    /// CommonMark.
    Text {
        title: String,
        markdown: String,
    },
    Image(Image),
}

fn image(i: pb::ImageSection) -> Image {
    Image {
        url: i.url,
        alt: i.alt,
        width: i.width,
        height: i.height,
    }
}

fn section(s: pb::Section) -> Option<Section> {
    Some(match s.kind? {
        pb::section::Kind::Links(l) => Section::Links {
            title: l.title,
            links: l
                .links
                .into_iter()
                .map(|l| Link {
                    label: l.label,
                    url: l.url,
                })
                .collect(),
        },
        pb::section::Kind::Text(t) => Section::Text {
            title: t.title,
            markdown: t.markdown,
        },
        pb::section::Kind::Image(i) => Section::Image(image(i)),
    })
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Document {
    /// `footer`, or the page's slug.
    pub key: String,
    /// The locale served, after fallback (also in Content-Language).
    pub locale: String,
    pub title: String,
    pub sections: Vec<Section>,
}

impl From<pb::Document> for Document {
    fn from(d: pb::Document) -> Self {
        Self {
            key: d.key,
            locale: d.locale,
            title: d.title,
            sections: d.sections.into_iter().filter_map(section).collect(),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Banner {
    pub key: String,
    pub title: String,
    pub body: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<Image>,
    pub link_url: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub starts_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ends_at: Option<String>,
    pub position: u32,
}

/// The banners running now.
#[derive(Debug, Serialize, ToSchema)]
pub struct Banners {
    /// The locale served, after fallback.
    pub locale: String,
    pub results: Vec<Banner>,
}

impl From<pb::BannerList> for Banners {
    fn from(b: pb::BannerList) -> Self {
        let results = b
            .banners
            .into_iter()
            .map(|b| Banner {
                key: b.key,
                title: b.title,
                body: b.body,
                image: b.image.map(image),
                link_url: b.link_url,
                starts_at: b.starts_at.map(|t| timestamp(Some(t))),
                ends_at: b.ends_at.map(|t| timestamp(Some(t))),
                position: b.position,
            })
            .collect();
        Self {
            locale: b.locale,
            results,
        }
    }
}
