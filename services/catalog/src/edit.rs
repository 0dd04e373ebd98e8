//! Changing the catalog product by product: a put (create or replace), a
//! delete, stock levels. A set of changes makes one new version, all of
//! them or none; the version shares everything it did not change with the
//! one before, and the listing's indexes are edited, not rebuilt.

use std::collections::BTreeMap;
use std::sync::Arc;
use storefront_proto::error::codes;

use prost::Message;
use storefront_domain::catalog::{ProductFacts, meta_id};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::catalog::storage::v1::JournalEntry;
use storefront_proto::catalog::v1::Product;

use crate::store::{Catalog, Scratch, sku_key};

/// `JournalEntry.puts`: the field its products are written to.
const JOURNAL_PUTS: u32 = 1;

/// One change of a catalog.
#[derive(Debug, Clone)]
pub enum Change {
    /// Create or replace a product; `expected`: the version it must be at
    /// (None: whatever it is; a product that does not exist yet has none).
    Put {
        product: Box<Product>,
        expected: Option<i64>,
    },
    Delete {
        id: String,
        expected: Option<i64>,
    },
    /// Stock levels by SKU, applied together.
    Stock(Vec<Stock>),
    /// A product whose stock a checkout or an order changed (`stock`): put
    /// as it is, its version and timestamps kept, so that the shop's own
    /// writes, which expect a version, do not race with shoppers.
    Stocked(Box<Product>),
    /// Stock operations (`stock`) this version applies: remembered, so
    /// that a repeat changes nothing.
    Operations(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stock {
    pub sku: String,
    pub level: Level,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Units on hand now.
    Quantity(u32),
    /// Units added (or, negative, taken).
    Delta(i64),
}

/// 409: the version a change expected is not the product's.
fn stale(current: Option<i64>) -> ServiceError {
    let message = match current {
        Some(v) => format!("the product is at version {v}; read it again"),
        None => "the product does not exist, so it has no version yet".to_string(),
    };
    ServiceError::new(ErrorKind::Conflict, codes::CONCURRENT_MODIFICATION, message)
}

fn version_of(p: &Product) -> i64 {
    p.meta.as_ref().map_or(0, |m| m.version)
}

/// Keeps the derived fields of a product in step with its variants.
fn derive(p: &mut Product) {
    p.in_stock = p
        .variants
        .iter()
        .any(|v| v.availability.is_some_and(|a| a.in_stock));
    p.master_variant = p.variants.first().cloned();
}

impl Catalog {
    /// The next version: this one with `changes` applied, or the first
    /// change's refusal (nothing applied). The products each change
    /// touched are in the next version's change log.
    pub fn apply(&self, changes: Vec<Change>) -> Result<Catalog, ServiceError> {
        let mut next = self.clone();
        next.version = self.version + 1;
        let mut touched: Vec<Arc<str>> = Vec::new();
        let mut ops = Vec::new();
        let now = storefront_domain::time::now();
        let scratch = &mut Scratch::default();
        for change in changes {
            match change {
                Change::Put { product, expected } => {
                    let id = next.put(*product, expected, now, scratch)?;
                    touched.push(id);
                }
                Change::Delete { id, expected } => {
                    next.delete(&id, expected)?;
                    touched.push(id.into());
                }
                Change::Stock(levels) => {
                    for (row, product) in next.stocked(&levels, now)? {
                        touched.push(next.restock(row, product, scratch));
                    }
                }
                Change::Stocked(product) => {
                    // A hold or sale changed its variants' stock, and
                    // nothing else, in the product as this version has it.
                    let id = meta_id(product.meta.as_ref());
                    let row = next
                        .product_row(id)
                        .ok_or_else(|| ServiceError::not_found("product", id))?;
                    touched.push(next.put_back(row, *product, scratch));
                }
                Change::Operations(ids) => ops.extend(ids),
            }
        }
        next.changes = Arc::new(self.changes.with(next.version, touched));
        next.remember(ops);
        Ok(next)
    }

    /// Records the stock operations this version applied (none: none).
    fn remember(&mut self, ops: Vec<String>) {
        if !ops.is_empty() || !self.applied_ops.is_empty() {
            self.ops = Arc::new(self.ops.with(&ops));
            self.applied_ops = ops.into();
        }
    }

    /// The next version, `version`, as another replica made it: products
    /// put and deleted exactly as its journal entry says.
    pub fn replay(
        &self,
        puts: Vec<Product>,
        deletes: &[String],
        ops: Vec<String>,
        version: u64,
    ) -> Result<Catalog, ServiceError> {
        let mut next = self.clone();
        next.version = version;
        let mut touched: Vec<Arc<str>> = Vec::with_capacity(puts.len() + deletes.len());
        let scratch = &mut Scratch::default();
        for product in puts {
            let id: Arc<str> = meta_id(product.meta.as_ref()).into();
            match next.product_row(&id) {
                Some(row) => {
                    let current = next.product(row)?;
                    next.replace(row, &current, product, scratch);
                }
                None => next.create(id.clone(), product, scratch),
            }
            touched.push(id);
        }
        for id in deletes {
            if next.product_row(id).is_some() {
                next.delete(id, None)?;
            }
            touched.push(id.as_str().into());
        }
        next.changes = Arc::new(self.changes.with(version, touched));
        next.remember(ops);
        Ok(next)
    }

    /// What this version changed against the one before, as the journal
    /// keeps it (a `JournalEntry`, encoded): each product it touched as it
    /// is now, or its deletion, and the stock operations it applied. A
    /// product goes as it is stored, its bytes copied rather than decoded
    /// and encoded again: a hold or a sale writes one.
    pub fn journal_entry(&self) -> Result<Vec<u8>, ServiceError> {
        let (mut bytes, mut deletes) = (Vec::new(), Vec::new());
        for id in self.changes.last_ids() {
            let Some(row) = self.product_row(&id) else {
                deletes.push(id.to_string());
                continue;
            };
            let product = self.products.encoded(row).map_err(ServiceError::internal)?;
            prost::encoding::bytes::encode(JOURNAL_PUTS, &product, &mut bytes);
        }
        // Fields of one message may come in any order; repeated ones
        // append, so the puts above and these decode as one entry.
        let rest = JournalEntry {
            deletes,
            operations: self.applied_ops.to_vec(),
            ..Default::default()
        };
        rest.encode(&mut bytes)
            .map_err(|e| ServiceError::internal(e.to_string()))?;
        Ok(bytes)
    }

    /// Creates or replaces `product` (its version, timestamps kept or
    /// set); its id.
    fn put(
        &mut self,
        mut product: Product,
        expected: Option<i64>,
        now: prost_types::Timestamp,
        scratch: &mut Scratch,
    ) -> Result<Arc<str>, ServiceError> {
        derive(&mut product);
        let id: Arc<str> = meta_id(product.meta.as_ref()).into();
        let meta = product.meta.get_or_insert_with(Default::default);
        match self.product_row(&id) {
            Some(row) => {
                let current = self.product(row)?;
                let version = version_of(&current);
                if expected.is_some_and(|e| e != version) {
                    return Err(stale(Some(version)));
                }
                meta.version = version + 1;
                meta.created_at = current.meta.as_ref().and_then(|m| m.created_at);
                meta.last_modified_at = Some(now);
                self.replace(row, &current, product, scratch);
            }
            None => {
                if expected.is_some() {
                    return Err(stale(None));
                }
                meta.version = 1;
                self.create(id.clone(), product, scratch);
            }
        }
        Ok(id)
    }

    fn replace(&mut self, row: u32, current: &Product, product: Product, scratch: &mut Scratch) {
        let facts = ProductFacts::of(&product);
        // The index is shared with every reader of the previous version:
        // touching it copies it whole, which a price or stock change (the
        // same SKUs) must not pay.
        let same_skus = current.variants.len() == product.variants.len()
            && current
                .variants
                .iter()
                .zip(&product.variants)
                .all(|(a, b)| a.sku == b.sku);
        if !same_skus {
            let skus = Arc::make_mut(&mut self.skus);
            for v in &current.variants {
                skus.remove(&sku_key(&v.sku));
            }
            for v in &product.variants {
                skus.insert(sku_key(&v.sku), row);
            }
        }
        self.products.replace(row, product, scratch);
        self.listing.replace(row, &facts, self.currencies.codes());
    }

    fn create(&mut self, id: Arc<str>, product: Product, scratch: &mut Scratch) {
        let row = self.products.len() as u32;
        let facts = ProductFacts::of(&product);
        let ids = Arc::make_mut(&mut self.ids);
        let at = ids.partition_point(|(held, _)| *held < id);
        ids.insert(at, (id, row));
        let skus = Arc::make_mut(&mut self.skus);
        for v in &product.variants {
            skus.insert(sku_key(&v.sku), row);
        }
        self.products.push(product, scratch);
        self.listing
            .push(&facts, self.currencies.codes(), at as u32);
    }

    fn delete(&mut self, id: &str, expected: Option<i64>) -> Result<(), ServiceError> {
        let row = self
            .product_row(id)
            .ok_or_else(|| ServiceError::not_found("product", id))?;
        let current = self.product(row)?;
        let version = version_of(&current);
        if expected.is_some_and(|e| e != version) {
            return Err(stale(Some(version)));
        }
        let last = self.products.len() as u32 - 1;
        let skus = Arc::make_mut(&mut self.skus);
        for v in &current.variants {
            skus.remove(&sku_key(&v.sku));
        }
        let ids = Arc::make_mut(&mut self.ids);
        if row != last {
            // The last product takes the row: its index entries follow.
            let moved = self.products.decode(last).map_err(ServiceError::internal)?;
            for v in &moved.variants {
                skus.insert(sku_key(&v.sku), row);
            }
            let moved_id = meta_id(moved.meta.as_ref());
            if let Ok(at) = ids.binary_search_by(|(held, _)| (**held).cmp(moved_id)) {
                ids[at].1 = row;
            }
        }
        if let Ok(at) = ids.binary_search_by(|(held, _)| (**held).cmp(id)) {
            ids.remove(at);
        }
        self.products.swap_remove(row);
        self.listing.swap_remove(row);
        Ok(())
    }

    /// A product `stocked` changed put back at its `row`: its version
    /// moves on as a put's does.
    fn restock(&mut self, row: u32, mut product: Product, scratch: &mut Scratch) -> Arc<str> {
        let meta = product.meta.get_or_insert_with(Default::default);
        meta.version += 1;
        self.put_back(row, product, scratch)
    }

    /// `product` put back at its `row`, where only its stock (and its
    /// version or modification time) differ from the product stored: so
    /// the one it replaces is not decoded and the SKU index stays (a put
    /// decodes the product it replaces: a third of a stock change's
    /// decoding). What the listings and the inStock filter read follows.
    fn put_back(&mut self, row: u32, mut product: Product, scratch: &mut Scratch) -> Arc<str> {
        derive(&mut product);
        let id: Arc<str> = meta_id(product.meta.as_ref()).into();
        let facts = ProductFacts::of(&product);
        self.products.replace(row, product, scratch);
        self.listing.replace(row, &facts, self.currencies.codes());
        id
    }

    /// The products `levels` change, by row, with their new stock; a
    /// refusal naming each SKU that is unknown or would go below zero.
    fn stocked(
        &self,
        levels: &[Stock],
        now: prost_types::Timestamp,
    ) -> Result<Vec<(u32, Product)>, ServiceError> {
        let mut changed: BTreeMap<u32, Product> = BTreeMap::new();
        let mut problems = Vec::new();
        for (i, level) in levels.iter().enumerate() {
            let field = format!("changes[{i}]");
            let row = self.skus.get(&sku_key(&level.sku)).copied();
            let Some(row) = row else {
                problems.push(FieldViolation::new(
                    format!("{field}.sku"),
                    codes::INVALID_VALUE,
                    "no variant has this SKU",
                ));
                continue;
            };
            let product = match changed.entry(row) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => e.insert(self.product(row)?),
            };
            let Some(variant) = product.variants.iter_mut().find(|v| v.sku == level.sku) else {
                problems.push(FieldViolation::new(
                    format!("{field}.sku"),
                    codes::INVALID_VALUE,
                    "no variant has this SKU",
                ));
                continue;
            };
            let now = variant.availability.unwrap_or_default();
            let on_hand = i64::from(now.quantity) + i64::from(now.held);
            let quantity = match level.level {
                Level::Quantity(q) => i64::from(q),
                Level::Delta(d) => on_hand.saturating_add(d),
            };
            if !(0..=i64::from(u32::MAX)).contains(&quantity) {
                problems.push(FieldViolation::new(
                    format!("{field}.delta"),
                    codes::OUT_OF_RANGE,
                    format!("stock would be {quantity}; it cannot go below 0"),
                ));
                continue;
            }
            variant.availability = Some(crate::units::counted(quantity as u32, now.held));
        }
        if !problems.is_empty() {
            let mut e = ServiceError::new(
                ErrorKind::Validation,
                codes::VALIDATION_ERROR,
                "stock changes refused; none applied",
            );
            e.violations = problems;
            return Err(e);
        }
        Ok(changed
            .into_iter()
            .map(|(row, mut p)| {
                if let Some(meta) = p.meta.as_mut() {
                    meta.last_modified_at = Some(now);
                }
                (row, p)
            })
            .collect())
    }
}

#[cfg(test)]
#[path = "edit_tests.rs"]
mod tests;
