//! A follow step that moves only stock and prices patches what a search
//! reads of the documents it changed, and one that writes documents keeps
//! the segments it had: the same as made again for every row.

use storefront_proto::catalog::v1::Product;

use crate::facets::SegmentDocs;
use crate::index::Indexed;
use crate::search::tests::{index, product, reread};

/// Products in stock and out, priced across buckets, one losing its
/// second currency's price: changed in one step.
fn restocked(i: u32) -> Product {
    let mut p = product(i);
    p.in_stock = !p.in_stock;
    let prices = &mut p.master_variant.as_mut().unwrap().prices;
    prices[0].cent_amount += 7_000 + i64::from(i);
    if i.is_multiple_of(2) {
        prices.truncate(1);
    }
    p
}

#[test]
fn a_stock_and_price_step_patches_only_the_values_it_moved() {
    let indexed = index();
    let changed = [3, 11, 12, 200, 250, 399];
    let ids: Vec<String> = changed.map(|i| product(i).meta.unwrap().id).to_vec();
    let batches = changed
        .iter()
        .map(|&i| reread(&indexed, &restocked(i)))
        .collect();
    let next = super::apply(&indexed, &ids, batches, 2).unwrap();
    // Patched: each segment's rows and tie places are the ones held.
    assert_eq!(next.segments.len(), indexed.segments.len());
    for (now, before) in next.segments.iter().zip(indexed.segments.iter()) {
        assert!(now.shares_rows_with(before));
    }
    assert!(std::sync::Arc::ptr_eq(&next.tie_order, &indexed.tie_order));
    assert_ne!(next.segments[..], indexed.segments[..], "values moved");
    // As a build of every row from the same listing and segments reads.
    let whole = super::rebuilt_facets(next.clone()).unwrap();
    assert_eq!(next.segments[..], whole.segments[..]);
    assert_eq!(next.tie_order, whole.tie_order);
}

/// A change of what facets count by other than stock and price (a brand)
/// makes every document's values again.
#[test]
fn a_brand_change_makes_the_values_again() {
    let indexed = index();
    let mut changed = restocked(11);
    changed.brand = "Another".into();
    let id = changed.meta.clone().unwrap().id;
    let next = super::apply(&indexed, &[id], vec![reread(&indexed, &changed)], 2).unwrap();
    let whole = super::rebuilt_facets(next.clone()).unwrap();
    assert_eq!(next.segments[..], whole.segments[..]);
}

/// A step that writes documents (renamed products, two of them with new
/// stock and prices) but moves nothing else facets count by keeps the
/// segments it had, their rewritten documents unset, and reads only the
/// new segment's documents: what a search reads is what a build of every
/// row from the same listing and segments makes.
#[test]
fn a_rename_step_keeps_the_segments_it_had() {
    let indexed = index();
    let renamed = [5, 11, 300];
    let changed = [5, 11, 12, 250, 300];
    let ids: Vec<String> = changed.map(|i| product(i).meta.unwrap().id).to_vec();
    let batches = changed
        .iter()
        .map(|&i| {
            let mut p = if i == 5 { product(i) } else { restocked(i) };
            if renamed.contains(&i) {
                let names = p.name.iter_mut().flat_map(|n| n.values.values_mut());
                names.for_each(|name| name.push_str(" zebra"));
            }
            reread(&indexed, &p)
        })
        .collect();
    let next = super::apply(&indexed, &ids, batches, 2).unwrap();
    assert!(
        next.segments.len() > indexed.segments.len(),
        "a new segment"
    );
    assert!(std::sync::Arc::ptr_eq(&next.tie_order, &indexed.tie_order));
    assert!(std::sync::Arc::ptr_eq(
        &next.facet_layout,
        &indexed.facet_layout
    ));
    // Each segment held before beside itself now: by id, since the new
    // segment may come anywhere among them.
    fn by_segment(
        at: &Indexed,
    ) -> std::collections::HashMap<tantivy::index::SegmentId, &SegmentDocs> {
        (at.searcher.segment_readers().iter())
            .map(|reader| reader.segment_id())
            .zip(at.segments.iter())
            .collect()
    }
    let now = by_segment(&next);
    let held: Vec<_> = (by_segment(&indexed).into_iter())
        .filter_map(|(id, before)| Some((*now.get(&id)?, before)))
        .collect();
    assert_eq!(held.len(), indexed.segments.len(), "every segment kept");
    let held = held.into_iter();
    assert!(
        held.clone()
            .all(|(now, before)| now.shares_ties_with(before))
    );
    assert!(
        held.clone().any(|(now, before)| now != before),
        "documents unset"
    );
    let whole = super::rebuilt_facets(next.clone()).unwrap();
    let normalized = |at: &Indexed| {
        at.segments
            .iter()
            .map(|s| s.normalized())
            .collect::<Vec<_>>()
    };
    assert_eq!(normalized(&next), normalized(&whole));
}
