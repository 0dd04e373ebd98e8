//! The variant attribute facet: counts by set of attributes (a product's
//! every variant's, as the `attributes` column ranks them), spread to
//! each attribute of the set and grouped by its name.

use std::collections::HashMap;

use storefront_domain::catalog::split_attribute;
use storefront_domain::listing::{Column, Key};
use storefront_proto::search::v1::{AttributeFacet, FacetValue};

/// Attribute names reported at most (those with the most hits).
pub const MAX_NAMES: usize = 20;
/// Values reported per name at most (the most frequent).
pub const MAX_VALUES: usize = 50;

/// Per attribute name, the hits with each of its values in some variant,
/// from `counts` by distinct set of `column`.
pub fn counted(column: &Column, counts: &[u64]) -> Vec<AttributeFacet> {
    let mut by_name: HashMap<&str, HashMap<&str, u64>> = HashMap::new();
    let sets = column.distinct.iter().zip(counts).filter(|(_, c)| **c > 0);
    for (set, &count) in sets {
        let Key::TextSet(members) = set else {
            continue;
        };
        for (name, value) in members.iter().filter_map(|m| split_attribute(m)) {
            *by_name.entry(name).or_default().entry(value).or_default() += count;
        }
    }
    let mut names: Vec<(u64, AttributeFacet)> = by_name
        .into_iter()
        .map(|(name, values)| {
            let mut values: Vec<FacetValue> = values
                .into_iter()
                .map(|(value, count)| FacetValue {
                    value: value.to_string(),
                    count,
                    label: String::new(),
                })
                .collect();
            values.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
            // Ordered by the hits of its most frequent value: every hit
            // counts once there (a sum would count a product per value).
            let most = values.first().map_or(0, |v| v.count);
            values.truncate(MAX_VALUES);
            let name = name.to_string();
            (most, AttributeFacet { name, values })
        })
        .collect();
    names.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    names.truncate(MAX_NAMES);
    names.into_iter().map(|(_, facet)| facet).collect()
}
