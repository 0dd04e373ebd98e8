//! The variant attribute facet: counts by set of attributes (a product's
//! every variant's, as the `attributes` column ranks them), spread to
//! each attribute of the set and grouped by its name.

use storefront_proto::search::v1::{AttributeFacet, FacetValue};

use super::layout::Attributes;

/// Attribute names reported at most (those with the most hits).
pub const MAX_NAMES: usize = 20;
/// Values reported per name at most (the most frequent).
pub const MAX_VALUES: usize = 50;

/// Per attribute name, the hits with each of its values in some variant,
/// from `counts` by distinct set of the attribute column.
pub(super) fn counted(attributes: &Attributes, counts: &[u64]) -> Vec<AttributeFacet> {
    let by_member = attributes.spread.spread(counts);
    let mut by_name: Vec<Vec<FacetValue>> = vec![Vec::new(); attributes.names.len()];
    for (id, &count) in by_member.iter().enumerate().filter(|(_, c)| **c > 0) {
        if let Some((name, value)) = attributes.split(id) {
            by_name[name].push(FacetValue {
                value: value.to_string(),
                count,
                label: String::new(),
            });
        }
    }
    let mut names: Vec<(u64, AttributeFacet)> = (by_name.into_iter().zip(&attributes.names))
        .filter(|(values, _)| !values.is_empty())
        .map(|(mut values, name)| {
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
