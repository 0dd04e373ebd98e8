//! The feed's records other than products, each checked as it is read:
//! the header (first, if any), categories (parents before children,
//! bounded in depth and in the navigation tree's size) and collections
//! (after their products).

use storefront_proto::catalog::v1::{Category, CategoryRef};

use super::super::batch::{COLLECTION, PRODUCT, hashed};
use super::super::convert::{self, Problems};
use super::super::limits::{MAX_TREE_BYTES, tree_bytes};
use super::super::record::{CategoryRecord, CollectionRecord, FORMAT_VERSION, Header};
use super::{Loader, Stage};

impl Loader<'_> {
    pub(super) fn header(&mut self, bytes: &[u8]) {
        let Some(header) = self.parse::<Header>(bytes) else {
            return;
        };
        if self.records != 1 {
            self.fail("type", "a header may only be the first record");
            return;
        }
        self.header_line = true;
        self.declared = header.records;
        if header.version != FORMAT_VERSION {
            self.fail(
                "version",
                format!("this catalog reads format version {FORMAT_VERSION}"),
            );
        }
    }

    pub(super) fn category(&mut self, bytes: &[u8]) {
        let Some(record) = self.parse::<CategoryRecord>(bytes) else {
            return;
        };
        if !self.in_order(Stage::Categories) {
            return;
        }
        let mut problems = Problems::default();
        let ancestors = self.ancestors(&record.parent_id, &mut problems);
        if ancestors.len() >= self.limits.max_depth {
            // Its descendants are then refused as unknown parents.
            let max = self.limits.max_depth;
            problems.add(
                "parentId",
                format!("nests deeper than {max} levels (CATALOG_MAX_CATEGORY_DEPTH)"),
            );
            return self.report_problems(problems);
        }
        let category = convert::category(&record, &ancestors, &mut problems, self.now);
        if let Some(&first) = self.category_index.get(&record.id) {
            problems.add(
                "id",
                format!("a second category with this id (first on line {first})"),
            );
        }
        let before = self.tree_bytes;
        self.tree_bytes += tree_bytes(&category);
        if self.tree_bytes > MAX_TREE_BYTES && before <= MAX_TREE_BYTES {
            problems.add(
                "record",
                format!(
                    "the categories make a navigation tree over {MAX_TREE_BYTES} bytes \
                     (GET /categories/tree): fewer categories, or shorter names and slugs"
                ),
            );
        }
        if self.failed(problems.0) || self.tree_bytes > MAX_TREE_BYTES {
            return;
        }
        self.counts.categories += 1;
        self.category_index.insert(record.id, self.categories.len());
        self.categories.push(category);
    }

    /// The ancestors of a child of category `id` (its own and itself),
    /// root first; a problem when `id` is not a category seen before.
    fn ancestors(&self, id: &str, problems: &mut Problems) -> Vec<CategoryRef> {
        if id.is_empty() {
            return Vec::new();
        }
        match self.category_index.get(id) {
            Some(&i) => path(&self.categories[i]),
            None => {
                problems.add(
                    "parentId",
                    "is not a category on an earlier line (categories come first, parents before children)",
                );
                Vec::new()
            }
        }
    }

    pub(super) fn collection(&mut self, bytes: &[u8]) {
        let Some(record) = self.parse::<CollectionRecord>(bytes) else {
            return;
        };
        if !self.in_order(Stage::Collections) {
            return;
        }
        let mut problems = Problems::default();
        let collection = convert::collection(&record, &mut problems, self.now);
        for (i, id) in record.product_ids.iter().enumerate() {
            if !self.first_seen.contains_key(&hashed(PRODUCT, id)) {
                problems.add(
                    format!("productIds[{i}]"),
                    "is not a product on an earlier line (collections come after their products)",
                );
            }
        }
        let line = self.line;
        let first = *self
            .first_seen
            .entry(hashed(COLLECTION, &record.id))
            .or_insert(line);
        if first != line {
            problems.add(
                "id",
                format!("a second collection with this value (first on line {first})"),
            );
        }
        if self.failed(problems.0) {
            return;
        }
        self.counts.collections += 1;
        self.collections.push(collection);
    }
}

/// The ancestors of `category`'s children: its own and itself, root first.
pub(super) fn path(category: &Category) -> Vec<CategoryRef> {
    let mut chain = category.ancestors.clone();
    chain.push(convert::reference(category));
    chain
}
