//! Stock as lines name it: what a cart holds or an order sold, as the
//! catalog's stock operations take it.

use std::collections::BTreeMap;

use storefront_proto::catalog::v1::StockLine;
use storefront_proto::common::v1::LineItem;

/// The units of `items` by SKU, in SKU order (items without a SKU or a
/// quantity name none).
pub fn by_sku(items: &[LineItem]) -> Vec<StockLine> {
    let mut units: BTreeMap<&str, u32> = BTreeMap::new();
    for item in items.iter().filter(|l| !l.sku.is_empty()) {
        let q = units.entry(item.sku.as_str()).or_default();
        *q = q.saturating_add(item.quantity);
    }
    units
        .into_iter()
        .filter(|(_, q)| *q > 0)
        .map(|(sku, quantity)| StockLine {
            sku: sku.to_string(),
            quantity,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_of_one_sku_add_up_in_sku_order() {
        let item = |sku: &str, quantity| LineItem {
            sku: sku.into(),
            quantity,
            ..Default::default()
        };
        let items = [
            item("B", 2),
            item("A", 1),
            item("B", 3),
            item("", 4),
            item("C", 0),
        ];
        let lines: Vec<(String, u32)> = by_sku(&items)
            .into_iter()
            .map(|l| (l.sku, l.quantity))
            .collect();
        assert_eq!(lines, [("A".to_string(), 1), ("B".to_string(), 5)]);
    }
}
