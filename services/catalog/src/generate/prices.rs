//! The demo's shelf prices, in every currency the shop starts with.

use storefront_domain::currencies::{Currencies, fraction_digits};
use storefront_proto::common::v1::Money;

/// NZD prices are AUD prices times this, in per mille.
const NZD_PER_MILLE_OF_AUD: i64 = 1_090;

/// Rough rates to price the demo in other currencies: units of the
/// currency per thousand AUD (none: 1,000).
const PER_MILLE_OF_AUD: &[(&str, i64)] = &[
    ("USD", 650),
    ("EUR", 600),
    ("GBP", 520),
    ("CAD", 900),
    ("JPY", 100_000),
    ("KWD", 200),
];

/// A shelf price in every one of `currencies`: whole dollars ending in .95
/// in AUD, .99 in NZD, and in others a whole unit less one minor unit.
pub(super) fn prices(aud_dollars: i64, currencies: &Currencies) -> Vec<Money> {
    let aud = aud_dollars * 100 + 95;
    currencies
        .codes()
        .iter()
        .map(|code| {
            let code = code.as_str();
            let cents = match code {
                "AUD" => aud,
                "NZD" => (aud * NZD_PER_MILLE_OF_AUD / 1000) / 100 * 100 + 99,
                other => {
                    let rate = PER_MILLE_OF_AUD
                        .iter()
                        .find(|(c, _)| *c == other)
                        .map_or(1_000, |(_, r)| *r);
                    let scale = 10_i64.pow(fraction_digits(other));
                    let whole = (aud_dollars * rate / 1000).max(1);
                    whole * scale + (scale - 1).min(99 * scale / 100)
                }
            };
            storefront_domain::catalog::money(code, cents)
        })
        .collect()
}
