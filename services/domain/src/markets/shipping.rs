//! The shipping a market offers a cart (docs/markets.md, "Shipping"): its
//! methods that ship to the address's country, each at its price in the
//! cart's currency, free once the subtotal after discounts reaches the
//! method's `freeAbove`, cheapest first.

use std::collections::BTreeMap;

use super::{Amount, Market};

/// One way a cart can be shipped, priced for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer<'m> {
    pub id: &'m str,
    pub name: &'m BTreeMap<String, String>,
    /// In the currency's minor units; 0 when free.
    pub price: i64,
    pub min_days: u32,
    pub max_days: u32,
}

fn in_currency(amounts: &[Amount], currency: &str) -> Option<i64> {
    amounts
        .iter()
        .find(|a| a.currency == currency)
        .map(|a| a.amount)
}

/// The methods of `market` that ship to `country` in `currency`, priced
/// for a cart whose subtotal after discounts is `goods`: cheapest first
/// (then by id, so the order never wobbles). A method without a price in
/// the currency is not offered.
pub fn offers<'m>(market: &'m Market, country: &str, currency: &str, goods: i64) -> Vec<Offer<'m>> {
    let mut out: Vec<Offer<'m>> = market
        .shipping
        .iter()
        .filter(|m| m.countries.is_empty() || m.countries.iter().any(|c| c == country))
        .filter_map(|m| {
            let price = in_currency(&m.prices, currency)?;
            let free = in_currency(&m.free_above, currency).is_some_and(|above| goods >= above);
            Some(Offer {
                id: &m.id,
                name: &m.name,
                price: if free { 0 } else { price },
                min_days: m.min_days,
                max_days: m.max_days,
            })
        })
        .collect();
    out.sort_by(|a, b| a.price.cmp(&b.price).then_with(|| a.id.cmp(b.id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::markets::{DEMO, parse};

    fn market(id: &str) -> Market {
        let set = parse(DEMO.as_bytes()).expect("demo");
        set.markets
            .into_iter()
            .find(|m| m.id == id)
            .expect("market")
    }

    #[test]
    fn cheapest_first_and_free_from_the_threshold_up() {
        let au = market("au");
        let below = offers(&au, "AU", "AUD", 9_999);
        let ids: Vec<(&str, i64)> = below.iter().map(|o| (o.id, o.price)).collect();
        assert_eq!(ids, vec![("standard", 995), ("express", 1995)]);
        let at = offers(&au, "AU", "AUD", 10_000);
        let ids: Vec<(&str, i64)> = at.iter().map(|o| (o.id, o.price)).collect();
        assert_eq!(ids, vec![("standard", 0), ("express", 1995)]);
    }

    #[test]
    fn nothing_in_a_currency_or_to_a_country_the_methods_do_not_name() {
        let au = market("au");
        assert!(offers(&au, "AU", "USD", 100).is_empty());
        let mut only_nz = au.clone();
        only_nz.shipping[1].countries = vec!["NZ".into()];
        let ids: Vec<&str> = offers(&only_nz, "AU", "AUD", 0)
            .iter()
            .map(|o| o.id)
            .collect();
        assert_eq!(ids, vec!["standard"]);
    }
}
