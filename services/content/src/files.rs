//! The content file format a merchandiser edits: JSON arrays (or single
//! objects) of documents, each `{kind, locale, ...}`:
//!
//! - `footer`: `title`, `sections`
//! - `page`: `slug`, `title`, `sections`
//! - `banner`: `key`, `title`, `body`, `image`, `linkUrl`, `position`,
//!   optional `startsAt` / `endsAt` (RFC 3339)
//!
//! Sections are `{"type": "links", "title", "links": [{label, url}]}`,
//! `{"type": "text", "title", "markdown"}` or
//! `{"type": "image", "url", "alt", "width", "height"}`.

use std::path::Path;
use std::str::FromStr;

use serde::Deserialize;
use storefront_proto::Timestamp;
use storefront_proto::content::v1::{
    Banner, Document, ImageSection, Link, LinksSection, Section, TextSection, section,
};

pub const DEMO: &str = include_str!("../demo/content.json");

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkFile {
    label: String,
    url: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageFile {
    url: String,
    alt: String,
    #[serde(default)]
    width: u32,
    #[serde(default)]
    height: u32,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum SectionFile {
    Links {
        #[serde(default)]
        title: String,
        links: Vec<LinkFile>,
    },
    Text {
        #[serde(default)]
        title: String,
        markdown: String,
    },
    Image(ImageFile),
}

#[derive(Debug, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum Entry {
    Footer {
        locale: String,
        title: String,
        #[serde(default)]
        sections: Vec<SectionFile>,
    },
    Page {
        locale: String,
        slug: String,
        title: String,
        #[serde(default)]
        sections: Vec<SectionFile>,
    },
    #[serde(rename_all = "camelCase")]
    Banner {
        locale: String,
        key: String,
        title: String,
        #[serde(default)]
        body: String,
        image: ImageFile,
        link_url: String,
        #[serde(default)]
        position: u32,
        starts_at: Option<String>,
        ends_at: Option<String>,
    },
}

fn image(i: ImageFile) -> ImageSection {
    ImageSection {
        url: i.url,
        alt: i.alt,
        width: i.width,
        height: i.height,
    }
}

fn section(s: SectionFile) -> Section {
    let kind = match s {
        SectionFile::Links { title, links } => section::Kind::Links(LinksSection {
            title,
            links: links
                .into_iter()
                .map(|l| Link {
                    label: l.label,
                    url: l.url,
                })
                .collect(),
        }),
        SectionFile::Text { title, markdown } => {
            section::Kind::Text(TextSection { title, markdown })
        }
        SectionFile::Image(i) => section::Kind::Image(image(i)),
    };
    Section { kind: Some(kind) }
}

fn timestamp(field: &str, value: Option<String>) -> anyhow::Result<Option<Timestamp>> {
    value
        .map(|v| {
            Timestamp::from_str(&v)
                .map_err(|_| anyhow::anyhow!("{field}: {v:?} is not an RFC 3339 timestamp"))
        })
        .transpose()
}

/// One loaded item: its kind with its key, locale, and the message.
pub enum Item {
    Document {
        key: String,
        locale: String,
        document: Document,
    },
    Banner {
        locale: String,
        banner: Banner,
    },
}

pub fn item(entry: Entry) -> anyhow::Result<Item> {
    Ok(match entry {
        Entry::Footer {
            locale,
            title,
            sections,
        } => {
            let document = Document {
                key: "footer".into(),
                locale: locale.clone(),
                title,
                sections: sections.into_iter().map(section).collect(),
            };
            Item::Document {
                key: "footer".into(),
                locale,
                document,
            }
        }
        Entry::Page {
            locale,
            slug,
            title,
            sections,
        } => {
            let key = format!("page:{slug}");
            let document = Document {
                key: slug,
                locale: locale.clone(),
                title,
                sections: sections.into_iter().map(section).collect(),
            };
            Item::Document {
                key,
                locale,
                document,
            }
        }
        Entry::Banner {
            locale,
            key,
            title,
            body,
            image: img,
            link_url,
            position,
            starts_at,
            ends_at,
        } => {
            let banner = Banner {
                key,
                title,
                body,
                image: Some(image(img)),
                link_url,
                starts_at: timestamp("startsAt", starts_at)?,
                ends_at: timestamp("endsAt", ends_at)?,
                position,
            };
            Item::Banner { locale, banner }
        }
    })
}

/// Parses one file's text: an array of entries or a single entry.
pub fn parse(text: &str) -> anyhow::Result<Vec<Entry>> {
    let value: serde_json::Value = serde_json::from_str(text)?;
    Ok(match value {
        serde_json::Value::Array(_) => serde_json::from_value(value)?,
        _ => vec![serde_json::from_value(value)?],
    })
}

/// Every `*.json` file of `dir`, in name order.
pub fn read_dir(dir: &Path) -> anyhow::Result<Vec<Entry>> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    let mut entries = Vec::new();
    for path in paths {
        let text = std::fs::read_to_string(&path)?;
        entries.extend(parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?);
    }
    Ok(entries)
}
