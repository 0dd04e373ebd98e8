use proptest::prelude::*;

use super::*;
use crate::markets::{DEMO, MarketSet, parse};

fn demo() -> MarketSet {
    parse(DEMO.as_bytes()).expect("the demo")
}

fn market<'a>(set: &'a MarketSet, id: &str) -> &'a Market {
    set.markets
        .iter()
        .find(|m| m.id == id)
        .expect("a demo market")
}

const NONE: &[String] = &[];

#[test]
fn half_to_even_in_the_minor_unit() {
    assert_eq!(div_half_even(5, 2), 2);
    assert_eq!(div_half_even(7, 2), 4);
    assert_eq!(div_half_even(11, 4), 3);
    assert_eq!(div_half_even(9, 4), 2);
    assert_eq!(div_half_even(0, 3), 0);
    // GST in an AUD price: 1/11 of it; in an NZD price: 3/23.
    assert_eq!(tax_of(1100, 100_000, true), 100);
    assert_eq!(tax_of(2300, 150_000, true), 300);
    // US sales tax, added: 7.25% of 19.99 is 1.449275.
    assert_eq!(tax_of(1999, 72_500, false), 145);
}

#[test]
fn the_most_specific_rate_wins() {
    let set = demo();
    let us = market(&set, "us");
    let ca = Destination {
        country: "US",
        region: Some("US-CA"),
    };
    let taxed = TableTax
        .tax(
            us,
            ca,
            &[Taxable {
                amount: 10_000,
                categories: NONE,
            }],
            0,
        )
        .unwrap();
    assert_eq!((taxed.total, taxed.included), (725, false));
    assert_eq!(taxed.lines[0].name, "California sales tax");
    let oregon = Destination {
        country: "US",
        region: Some("US-OR"),
    };
    let none = TableTax
        .tax(
            us,
            oregon,
            &[Taxable {
                amount: 10_000,
                categories: NONE,
            }],
            599,
        )
        .unwrap();
    assert_eq!((none.total, none.lines[0].rate), (0, 0));

    let de = market(&set, "de");
    let toys = ["kids".to_string(), "kids-toys".to_string()];
    let to = Destination {
        country: "DE",
        region: None,
    };
    let lines = [
        Taxable {
            amount: 1_190,
            categories: NONE,
        },
        Taxable {
            amount: 1_070,
            categories: &toys,
        },
    ];
    let taxed = TableTax.tax(de, to, &lines, 495).unwrap();
    assert_eq!(taxed.per_line, [190, 70]);
    let names: Vec<(&str, i64)> = taxed
        .lines
        .iter()
        .map(|l| (l.name.as_str(), l.amount))
        .collect();
    assert_eq!(names, [("MwSt.", 190 + 79), ("MwSt. (ermäßigt)", 70)]);
    assert_eq!(taxed.shipping, 79);
    assert_eq!(taxed.total, 190 + 70 + 79);

    let elsewhere = Destination {
        country: "FR",
        region: None,
    };
    assert_eq!(
        TableTax.tax(de, elsewhere, &lines, 0),
        Err(TaxError::NotSold("FR".into()))
    );
}

proptest! {
    /// Line taxes (and shipping's) add up to the total and the tax lines
    /// do too; included, a line's tax is never more than its price;
    /// excluded, each is its rate of the line within half a minor unit.
    #[test]
    fn taxes_add_up(
        amounts in proptest::collection::vec(0i64..10_000_000, 0..20),
        shipping in 0i64..100_000,
        market_id in prop::sample::select(vec!["au", "nz", "us", "de"]),
        toy in any::<bool>(),
    ) {
        let set = demo();
        let m = market(&set, market_id);
        let to = Destination { country: &m.countries[0], region: Some("US-CA") };
        let toys = vec!["kids-toys".to_string()];
        let lines: Vec<Taxable<'_>> = amounts
            .iter()
            .map(|&amount| Taxable { amount, categories: if toy { &toys } else { NONE } })
            .collect();
        let taxed = TableTax.tax(m, to, &lines, shipping).unwrap();
        prop_assert_eq!(taxed.per_line.iter().sum::<i64>() + taxed.shipping, taxed.total);
        prop_assert_eq!(taxed.lines.iter().map(|l| l.amount).sum::<i64>(), taxed.total);
        for (line, tax) in lines.iter().zip(&taxed.per_line) {
            prop_assert!(*tax >= 0 && *tax <= line.amount);
            if !taxed.included {
                let rate = taxed.lines[0].rate;
                let exact = line.amount as f64 * rate as f64 / RATE_SCALE as f64;
                prop_assert!((*tax as f64 - exact).abs() <= 0.5 + 1e-9);
            }
        }
    }
}
