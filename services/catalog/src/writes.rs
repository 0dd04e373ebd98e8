//! The shop's changes to the catalog (behind the gateway's internal port):
//! a product put from its feed record, a delete, stock levels, the catalog
//! exported as a feed, and what changed since a version for indexers (a
//! whole feed imported is `imports`). Each write is one new
//! version, whole or not at all (stock levels set at once share one:
//! `levels`); writers take turns, readers never wait.

use std::sync::Arc;
use storefront_proto::error::codes;

use bytes::Bytes;
use storefront_domain::catalog::{meta_id, money};
use storefront_domain::currencies::Currencies;
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::catalog::v1::{
    ChangeReply, ChangesReply, DeleteProductRequest, FeedChunk, PriceUpdate, Product,
    PutProductRequest, SetStockRequest, stock_level,
};
use tokio::sync::mpsc;

use crate::changes::Since;
use crate::edit::{Change, Level, Stock};
use crate::feed::batch::CategoryPaths;
use crate::feed::convert::{self, Problems};
use crate::feed::record::{ProductRecord, Record};
use crate::feed::{self};
pub use crate::imports::import;
use crate::live::Live;
use crate::store::Catalog;

fn invalid(violations: Vec<FieldViolation>) -> ServiceError {
    let fields: Vec<&str> = violations.iter().map(|v| v.field.as_str()).collect();
    let message = format!("invalid fields: {}", fields.join(", "));
    let mut e = ServiceError::new(ErrorKind::Validation, codes::VALIDATION_ERROR, message);
    e.violations = violations;
    e
}

fn violation(field: String, message: String) -> FieldViolation {
    let code = if message == "is required" {
        codes::REQUIRED
    } else {
        codes::INVALID_VALUE
    };
    FieldViolation::new(field, code, message)
}

/// Every category as products name it: its id, and the ids of its
/// ancestors and itself.
fn category_paths(catalog: &Catalog) -> CategoryPaths {
    catalog
        .categories
        .iter()
        .map(|c| {
            let mut path = c.ancestors.clone();
            path.push(convert::reference(c));
            (meta_id(c.meta.as_ref()).to_string(), path)
        })
        .collect()
}

/// The product a put's record describes, and the version it expects.
fn product_of(
    catalog: &Catalog,
    id: &str,
    record: &[u8],
) -> Result<(storefront_proto::catalog::v1::Product, Option<i64>), ServiceError> {
    let mut fields: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(record)
        .map_err(|_| {
            invalid(vec![violation(
                "body".into(),
                "is not a JSON object".into(),
            )])
        })?;
    match fields.get("id") {
        None => {
            fields.insert("id".into(), serde_json::Value::String(id.to_string()));
        }
        Some(serde_json::Value::String(given)) if given == id => {}
        Some(_) => {
            let message = "must be the product id of the path (or left out)".to_string();
            return Err(invalid(vec![violation("id".into(), message)]));
        }
    }
    let record: ProductRecord = serde_path_to_error::deserialize(serde_json::Value::Object(fields))
        .map_err(|e| {
            let path = e.path().to_string();
            let (field, message) =
                crate::feed::load::problem_of(&path, &e.into_inner().to_string());
            invalid(vec![violation(field, message)])
        })?;
    let expected = record.version;
    let mut problems = Problems::default();
    let category_ids =
        crate::feed::batch::ancestors(&category_paths(catalog), &record.category_id, &mut problems);
    let product = convert::product(
        record,
        category_ids,
        &mut problems,
        storefront_domain::time::now(),
        &catalog.currencies,
    );
    if !problems.0.is_empty() {
        let violations = problems
            .0
            .into_iter()
            .map(|p| violation(p.field, p.message));
        return Err(invalid(violations.collect()));
    }
    let skus = &catalog.skus;
    // A SKU of the product's own row is not another product's: that row
    // is not decoded (once a variant, it was most of a put's decoding).
    let own = catalog.product_row(id);
    let mut taken = Vec::new();
    for (i, v) in product.variants.iter().enumerate() {
        let elsewhere = skus
            .get(&crate::store::sku_key(&v.sku))
            .filter(|&&row| Some(row) != own)
            .and_then(|&row| catalog.product(row).ok())
            .filter(|p| {
                meta_id(p.meta.as_ref()) != id && p.variants.iter().any(|o| o.sku == v.sku)
            });
        if elsewhere.is_some() {
            taken.push(violation(
                format!("variants[{i}].sku"),
                "another product has a variant with this SKU".into(),
            ));
        }
    }
    if !taken.is_empty() {
        return Err(invalid(taken));
    }
    Ok((product, expected))
}

/// The reply to a change: the new version, and each product named as its
/// feed record.
fn reply(catalog: &Catalog, ids: &[&str]) -> ChangeReply {
    let products = ids
        .iter()
        .filter_map(|id| catalog.product_row(id))
        .filter_map(|row| catalog.product(row).ok());
    reply_of(catalog, products)
}

/// As `reply`, for products already decoded.
fn reply_of(catalog: &Catalog, products: impl Iterator<Item = Product>) -> ChangeReply {
    let records = products
        .filter_map(|p| {
            let record = Record::Product(convert::product_record(&p));
            serde_json::to_vec(&record).ok()
        })
        .collect();
    ChangeReply {
        catalog_version: catalog.version,
        records,
    }
}

pub async fn put_product(api: &Live, req: PutProductRequest) -> Result<ChangeReply, ServiceError> {
    let id = req.product_id;
    let target = id.clone();
    let next = api
        .change(move |current| {
            let (mut product, expected) = product_of(current, &target, &req.record)?;
            let replaced = current
                .product_row(&target)
                .and_then(|row| current.product(row).ok());
            crate::units::keep_holds(replaced.as_ref(), &mut product);
            Ok(vec![Change::Put {
                product: Box::new(product),
                expected,
            }])
        })
        .await?;
    Ok(reply(&next, &[&id]))
}

pub async fn delete_product(
    api: &Live,
    req: DeleteProductRequest,
) -> Result<ChangeReply, ServiceError> {
    let next = api
        .change(move |_| {
            Ok(vec![Change::Delete {
                id: req.product_id.clone(),
                expected: req.expected_version,
            }])
        })
        .await?;
    Ok(reply(&next, &[]))
}

pub async fn set_stock(api: &Live, req: SetStockRequest) -> Result<ChangeReply, ServiceError> {
    let mut levels = Vec::with_capacity(req.changes.len());
    let mut problems = Vec::new();
    for (i, change) in req.changes.into_iter().enumerate() {
        let level = match change.level {
            Some(stock_level::Level::Quantity(q)) => Level::Quantity(q),
            Some(stock_level::Level::Delta(d)) => Level::Delta(d),
            None => {
                let message = "give quantity or delta".to_string();
                problems.push(violation(format!("changes[{i}]"), message));
                continue;
            }
        };
        levels.push(Stock {
            sku: change.sku,
            level,
        });
    }
    if levels.is_empty() && problems.is_empty() {
        problems.push(violation("changes".into(), "is required".into()));
    }
    if !problems.is_empty() {
        return Err(invalid(problems));
    }
    let skus: Vec<String> = levels.iter().map(|l| l.sku.clone()).collect();
    let next = crate::levels::set(api, levels).await?;
    // Each product once (two of its SKUs may change), decoded once for the
    // reply, in id order.
    let mut rows: Vec<u32> = skus
        .iter()
        .filter_map(|sku| next.skus.get(&crate::store::sku_key(sku)).copied())
        .collect();
    rows.sort_unstable();
    rows.dedup();
    let mut products: Vec<Product> = rows
        .into_iter()
        .filter_map(|row| next.product(row).ok())
        .collect();
    products.sort_unstable_by(|a, b| meta_id(a.meta.as_ref()).cmp(meta_id(b.meta.as_ref())));
    Ok(reply_of(&next, products.into_iter()))
}

/// The products changed since `version`, for an indexer.
pub fn changes_since(catalog: &Catalog, version: u64) -> ChangesReply {
    let (currencies, minor_units) = catalog
        .currencies
        .pairs()
        .map(|(code, units)| (code.to_string(), units))
        .unzip();
    let mut reply = ChangesReply {
        catalog_version: catalog.version,
        currencies,
        minor_units,
        ..Default::default()
    };
    match catalog.changes.since(version) {
        Since::Rebuild => reply.rebuild = true,
        Since::Changed(ids) => reply.product_ids = ids.iter().map(|id| id.to_string()).collect(),
    }
    reply
}

/// Writes `catalog` as a feed (or, with `acp`, one market's product feed
/// for agents) into 256 KB chunks on `send`, on the calling (blocking)
/// thread.
pub fn export(
    catalog: Arc<Catalog>,
    acp: Option<feed::acp::Target>,
    send: mpsc::Sender<Result<FeedChunk, tonic::Status>>,
) {
    struct Sink {
        buf: Vec<u8>,
        send: mpsc::Sender<Result<FeedChunk, tonic::Status>>,
    }
    impl std::io::Write for Sink {
        fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
            self.buf.extend_from_slice(data);
            if self.buf.len() >= 256 << 10 {
                self.flush()?;
            }
            Ok(data.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            if self.buf.is_empty() {
                return Ok(());
            }
            let data = Bytes::from(std::mem::take(&mut self.buf));
            self.send
                .blocking_send(Ok(FeedChunk {
                    data,
                    dry_run: false,
                }))
                .map_err(|_| std::io::Error::from(std::io::ErrorKind::BrokenPipe))
        }
    }
    let mut sink = Sink {
        buf: Vec::with_capacity(256 << 10),
        send,
    };
    let written = match acp {
        Some(target) => {
            feed::acp::write(&catalog.categories, &catalog.products, &target, &mut sink)
                .and_then(|_| std::io::Write::flush(&mut sink))
        }
        None => feed::write(
            &catalog.categories,
            &catalog.products,
            &catalog.collections,
            &mut sink,
        ),
    };
    if let Err(e) = written
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        let _ = sink
            .send
            .blocking_send(Err(tonic::Status::internal(e.to_string())));
    }
}

/// Sets one variant's price in one currency (master variant included).
pub(crate) fn set_price(
    product: &mut Product,
    update: &PriceUpdate,
    currencies: &Currencies,
) -> Result<(), ServiceError> {
    let price = update
        .price
        .as_ref()
        .filter(|p| currencies.contains(&p.currency_code) && p.cent_amount >= 0)
        .map(|p| money(&p.currency_code, p.cent_amount))
        .ok_or_else(|| {
            let allowed = currencies.listed();
            ServiceError::new(
                ErrorKind::BadRequest,
                "INVALID_PRICE",
                format!("a price needs one of the shop's currencies ({allowed}) and cents >= 0"),
            )
        })?;
    let mut found = false;
    let variants = product
        .variants
        .iter_mut()
        .chain(product.master_variant.as_mut());
    for variant in variants.filter(|v| v.id == update.variant_id) {
        found = true;
        variant
            .prices
            .retain(|p| p.currency_code != price.currency_code);
        variant.prices.push(price.clone());
    }
    if !found {
        return Err(ServiceError::not_found(
            "variant",
            &update.variant_id.to_string(),
        ));
    }
    Ok(())
}
