//! Product lines, parsed and checked on every core in batches (`batch`)
//! and taken back in line order, so that problems are reported as the
//! feed has them and the first of two records with one id wins.

use super::*;

impl Loader<'_> {
    pub(super) fn product(&mut self, bytes: &[u8], pipe: &mut Pipeline<'_>) {
        if self.stage > Stage::Products {
            self.flush(pipe);
            self.fail(
                "type",
                "out of order: categories come first, then products, then collections",
            );
            return;
        }
        self.stage = Stage::Products;
        if self.context.is_none() {
            self.context = Some(Arc::new(self.context_from(bytes)));
        }
        self.batch.push(self.line, bytes);
        if self.batch.len() >= batch::LINES {
            self.send(pipe);
        }
    }

    /// The context of every product batch, with the first product line's
    /// product as what products are compressed against.
    fn context_from(&self, first: &[u8]) -> Context {
        let categories: CategoryPaths = self
            .categories
            .iter()
            .map(|c| (meta_id(c.meta.as_ref()).to_string(), path(c)))
            .collect();
        let typical = parse_record::<ProductRecord>(first)
            .map(|r| {
                let mut ignored = Problems::default();
                convert::product(r, Vec::new(), &mut ignored, self.now, &self.currencies)
            })
            .unwrap_or_default();
        Context {
            categories: Arc::new(categories),
            empty: StoredProducts::new(&typical),
            now: self.now,
            currencies: self.currencies.clone(),
        }
    }

    fn send(&mut self, pipe: &mut Pipeline<'_>) {
        let next = self.spare.pop().unwrap_or_default();
        let batch = std::mem::replace(&mut self.batch, next);
        let Some(cx) = self.context.clone() else {
            return;
        };
        if pipe.jobs.send((pipe.sent, batch, cx)).is_ok() {
            pipe.sent += 1;
        }
        // Take what is done, so that memory stays bounded.
        while let Ok((seq, done, spare)) = pipe.results.try_recv() {
            self.pending.insert(seq, done);
            self.spare.push(spare);
        }
        self.take_in_order();
    }

    /// Sends the last batch and takes every batch sent.
    pub(super) fn flush(&mut self, pipe: &mut Pipeline<'_>) {
        if self.batch.len() > 0 {
            self.send(pipe);
        }
        while self.taken < pipe.sent {
            match pipe.results.recv() {
                Ok((seq, done, spare)) => {
                    self.pending.insert(seq, done);
                    self.spare.push(spare);
                    self.take_in_order();
                }
                Err(_) => return,
            }
        }
    }

    fn take_in_order(&mut self) {
        while let Some(done) = self.pending.remove(&self.taken) {
            self.taken += 1;
            self.take(done);
        }
    }

    /// A batch in its place: its keys checked unique against every line
    /// before, its problems reported, its products kept.
    fn take(&mut self, done: Done) {
        let Done {
            products,
            facts,
            keys,
            mut errors,
        } = done;
        for key in &keys {
            let first = *self.first_seen.entry(key.id).or_insert(key.line);
            if first != key.line {
                errors.push(duplicate(key.line, "id", "product", first));
            }
            for &(variant, sku) in &key.skus {
                let first = *self.first_seen.entry(sku).or_insert(key.line);
                if first != key.line {
                    let field = format!("variants[{variant}].sku");
                    errors.push(duplicate(key.line, &field, "variant", first));
                }
            }
        }
        errors.sort_by_key(|e| e.line);
        for e in errors {
            self.report_error(e);
        }
        self.counts.products += keys.len();
        if self.errors > 0 {
            // Once the feed has an error it is no catalog: only checked on.
            return;
        }
        self.counts.variants += keys.iter().map(|k| k.skus.len()).sum::<usize>();
        let first_row = self.facts.len() as u32;
        for (i, key) in keys.iter().enumerate() {
            let row = first_row + i as u32;
            self.skus.extend(key.sku_keys.iter().map(|&k| (k, row)));
        }
        self.facts.extend(facts);
        self.chunks.push(products);
    }
}

fn duplicate(line: usize, field: &str, what: &str, first: usize) -> FeedError {
    FeedError {
        line,
        field: field.to_string(),
        message: format!("a second {what} with this value (first on line {first})"),
    }
}
