//! Feed records to the catalog's messages and back, checking each field:
//! a record either converts whole or names every field at fault.
//! Writing a record back gives what was read (export -> import -> export
//! is the same bytes): defaults are never written.

use std::str::FromStr;

use storefront_domain::catalog::meta_id;
use storefront_domain::currencies::{Currencies, fraction_digits};
use storefront_proto::Timestamp;
use storefront_proto::catalog::v1::{
    Category, CategoryRef, Collection, Media, MediaType, Product, ProductStatus, Variant,
};
use storefront_proto::common::v1::{LocalizedString, Money, ResourceMeta};
use storefront_proto::names::{MAX_ID_CHARS, PRODUCT_STATUSES, product_status};

use super::record::{
    CategoryRecord, CollectionRecord, Localized, MediaRecord, PriceRecord, ProductRecord,
    StockRecord, VariantRecord,
};
use crate::generate::slug;

mod products;
pub use products::{product, product_record, product_to_store};

/// What is wrong with one field of one record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    pub field: String,
    pub message: String,
}

/// The problems of the record being converted.
#[derive(Default)]
pub struct Problems(pub Vec<FieldProblem>);

impl Problems {
    pub fn add(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldProblem {
            field: field.into(),
            message: message.into(),
        });
    }

    /// Converts the element `index` of list `list`, its problems' fields
    /// named relative to it: the element's path is written out only when
    /// it has a problem (a feed of a million products has few).
    pub fn at<T>(
        &mut self,
        list: &str,
        index: usize,
        convert: impl FnOnce(&mut Problems) -> T,
    ) -> T {
        let mut inner = Problems::default();
        let value = convert(&mut inner);
        for mut problem in inner.0 {
            problem.field = format!("{list}[{index}].{}", problem.field);
            self.0.push(problem);
        }
        value
    }

    /// An id, key, sku or code: 1 to `MAX_ID_CHARS` characters of text.
    pub fn id(&mut self, field: &str, value: &str) {
        if value.is_empty() {
            self.add(field, "is required");
        } else if value.len() > MAX_ID_CHARS && value.chars().count() > MAX_ID_CHARS {
            // Counted only when its bytes could be too many characters:
            // ids are checked several times a product.
            self.add(field, format!("is longer than {MAX_ID_CHARS} characters"));
        } else if has_control(value) {
            self.add(field, "contains control characters");
        }
    }

    /// Text per locale: keys `xx-XX`, values without control characters.
    fn localized(&mut self, field: &str, value: &Localized, required: bool) {
        if required && value.is_empty() {
            self.add(
                field,
                "is required (text per locale, e.g. {\"en-AU\": \"...\"})",
            );
        }
        for (locale, text) in value {
            if !is_locale(locale) {
                self.add(
                    format!("{field}.{}", shown(locale)),
                    "is not a locale (xx-XX, e.g. en-AU)",
                );
            } else if has_control(text) {
                self.add(format!("{field}.{locale}"), "contains control characters");
            }
        }
    }

    fn timestamp(&mut self, field: &str, value: Option<&str>, default: Timestamp) -> Timestamp {
        match value.map(Timestamp::from_str) {
            None => default,
            Some(Ok(t)) => t,
            Some(Err(_)) => {
                self.add(field, "is not an RFC 3339 timestamp (2026-01-31T09:30:00Z)");
                default
            }
        }
    }
}

/// Whether `text` holds a control character (`char::is_control`: C0,
/// DEL and C1), by its bytes: descriptions are most of a feed's text, and
/// a byte test the compiler vectorises costs a fraction of decoding chars.
fn has_control(text: &str) -> bool {
    let bytes = text.as_bytes();
    // C1 (U+0080..=U+009F) is 0xC2 then 0x80..=0x9F; in valid UTF-8 0xC2
    // only ever leads a character. One vectorised pass marks C0 or DEL
    // (bit 0) and any 0xC2 (bit 1); pairs are looked at only where there
    // is one, which most text (ASCII, German's umlauts) has not.
    let marks = bytes.iter().fold(0u8, |m, &b| {
        m | u8::from((b < 0x20) | (b == 0x7f)) | (u8::from(b == 0xC2) << 1)
    });
    marks & 1 != 0 || (marks & 2 != 0 && bytes.windows(2).any(|w| w[0] == 0xC2 && w[1] < 0xA0))
}

/// At most 40 characters of what a file holds, for a field name.
fn shown(text: &str) -> String {
    text.chars().take(40).collect()
}

fn is_locale(tag: &str) -> bool {
    let b = tag.as_bytes();
    b.len() == 5
        && b[..2].iter().all(u8::is_ascii_lowercase)
        && b[2] == b'-'
        && b[3..].iter().all(u8::is_ascii_uppercase)
}

fn localized(values: Localized) -> Option<LocalizedString> {
    (!values.is_empty()).then_some(LocalizedString { values })
}

fn values(ls: Option<&LocalizedString>) -> Localized {
    ls.map(|l| l.values.clone()).unwrap_or_default()
}

/// A slug per locale of `name`, with `suffix` when given.
fn slugs(name: &Localized, suffix: &str) -> Localized {
    name.iter()
        .map(|(locale, text)| {
            let slug = slug(text);
            let slug = match (slug.is_empty(), suffix.is_empty()) {
                (_, true) => slug,
                (true, false) => suffix.to_string(),
                (false, false) => format!("{slug}-{suffix}"),
            };
            (locale.clone(), slug)
        })
        .collect()
}

struct Meta<'a> {
    id: &'a str,
    version: Option<i64>,
    created_at: Option<&'a str>,
    last_modified_at: Option<&'a str>,
}

fn meta(p: &mut Problems, m: Meta<'_>, now: Timestamp) -> ResourceMeta {
    p.id("id", m.id);
    let version = m.version.unwrap_or(1);
    if version < 1 {
        p.add("version", "must be 1 or more");
    }
    let created = p.timestamp("createdAt", m.created_at, now);
    let modified = p.timestamp("lastModifiedAt", m.last_modified_at, created);
    ResourceMeta {
        id: m.id.to_string(),
        version,
        created_at: Some(created),
        last_modified_at: Some(modified),
    }
}

/// The meta fields as records write them.
fn meta_fields(m: Option<&ResourceMeta>) -> (String, Option<i64>, Option<String>, Option<String>) {
    let m = m.cloned().unwrap_or_default();
    (
        m.id,
        Some(m.version),
        m.created_at.map(|t| t.to_string()),
        m.last_modified_at.map(|t| t.to_string()),
    )
}

pub fn category(
    r: &CategoryRecord,
    ancestors: &[CategoryRef],
    p: &mut Problems,
    now: Timestamp,
) -> Category {
    let meta = meta(
        p,
        Meta {
            id: &r.id,
            version: r.version,
            created_at: r.created_at.as_deref(),
            last_modified_at: r.last_modified_at.as_deref(),
        },
        now,
    );
    p.id("key", &r.key);
    p.localized("name", &r.name, true);
    p.localized("slug", &r.slug, false);
    let slug = if r.slug.is_empty() {
        slugs(&r.name, "")
    } else {
        r.slug.clone()
    };
    Category {
        meta: Some(meta),
        key: r.key.clone(),
        name: localized(r.name.clone()),
        slug: localized(slug),
        parent_id: r.parent_id.clone(),
        position: r.position,
        ancestors: ancestors.to_vec(),
    }
}

pub fn category_record(c: &Category) -> CategoryRecord {
    let (id, version, created_at, last_modified_at) = meta_fields(c.meta.as_ref());
    CategoryRecord {
        kind: None,
        id,
        version,
        created_at,
        last_modified_at,
        key: c.key.clone(),
        name: values(c.name.as_ref()),
        slug: values(c.slug.as_ref()),
        parent_id: c.parent_id.clone(),
        position: c.position,
    }
}

/// How `category` is referred to by its descendants.
pub fn reference(c: &Category) -> CategoryRef {
    CategoryRef {
        id: meta_id(c.meta.as_ref()).to_string(),
        key: c.key.clone(),
        name: c.name.clone(),
        slug: c.slug.clone(),
    }
}

pub fn collection(r: &CollectionRecord, p: &mut Problems, now: Timestamp) -> Collection {
    let meta = meta(
        p,
        Meta {
            id: &r.id,
            version: r.version,
            created_at: r.created_at.as_deref(),
            last_modified_at: r.last_modified_at.as_deref(),
        },
        now,
    );
    p.id("key", &r.key);
    p.localized("name", &r.name, true);
    p.localized("description", &r.description, false);
    Collection {
        meta: Some(meta),
        key: r.key.clone(),
        name: localized(r.name.clone()),
        description: localized(r.description.clone()),
        product_ids: r.product_ids.clone(),
        position: r.position,
    }
}

pub fn collection_record(c: &Collection) -> CollectionRecord {
    let (id, version, created_at, last_modified_at) = meta_fields(c.meta.as_ref());
    CollectionRecord {
        kind: None,
        id,
        version,
        created_at,
        last_modified_at,
        key: c.key.clone(),
        name: values(c.name.as_ref()),
        description: values(c.description.as_ref()),
        product_ids: c.product_ids.clone(),
        position: c.position,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn has_control_agrees_with_char_is_control_for_every_char() {
        for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
            let text = format!("ab{c}\u{e9}");
            assert_eq!(super::has_control(&text), c.is_control(), "{:#x}", c as u32);
        }
    }

    #[test]
    fn a_problem_inside_a_list_names_its_path() {
        let mut problems = super::Problems::default();
        problems.at("variants", 2, |p| {
            p.at("prices", 0, |p| p.add("currencyCode", "is required"))
        });
        assert_eq!(problems.0[0].field, "variants[2].prices[0].currencyCode");
    }
}
