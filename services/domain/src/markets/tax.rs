//! Tax from a market's table (docs/markets.md, "Tax"): each line taxed at
//! the most specific rate for its destination (the category's in the
//! region, the region's, the category's in the country, the country's),
//! per line after discounts, rounded half to even in the minor unit, then
//! summed; shipping at the destination's rate without category when the
//! market taxes it. Behind a trait, so that an external tax service can
//! stand in for the table.

use super::{Market, PriceMode, TaxRate};

/// Rates are held in millionths (0.0725 is 72,500).
pub const RATE_SCALE: i64 = 1_000_000;

/// Where the goods go.
#[derive(Debug, Clone, Copy)]
pub struct Destination<'a> {
    pub country: &'a str,
    /// ISO 3166-2 (`US-CA`), where the address has one.
    pub region: Option<&'a str>,
}

/// A line to tax: what it costs after discounts, in minor units, and the
/// category keys it is in (its own and their ancestors').
#[derive(Debug, Clone, Copy)]
pub struct Taxable<'a> {
    pub amount: i64,
    pub categories: &'a [String],
}

/// One line of a receipt's tax: its name, its rate and what it sums to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaxLine {
    pub name: String,
    /// In millionths.
    pub rate: i64,
    pub amount: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taxed {
    /// Each line's tax, in the order given.
    pub per_line: Vec<i64>,
    pub shipping: i64,
    /// By name and rate, in the order first met.
    pub lines: Vec<TaxLine>,
    pub total: i64,
    /// Whether the prices already include it (else it is added).
    pub included: bool,
}

/// What stops a tax from being computed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaxError {
    /// The destination is not one of the market's countries.
    NotSold(String),
}

/// Computes a cart's tax.
pub trait TaxCalculator {
    fn tax(
        &self,
        market: &Market,
        to: Destination<'_>,
        lines: &[Taxable<'_>],
        shipping: i64,
    ) -> Result<Taxed, TaxError>;
}

/// The market's own table.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableTax;

/// `rate` (0..=1, at most 6 decimals) in millionths.
pub fn millionths(rate: f64) -> i64 {
    (rate * RATE_SCALE as f64).round() as i64
}

/// `numerator / denominator` rounded half to even (`denominator` > 0).
pub fn div_half_even(numerator: i128, denominator: i128) -> i64 {
    let quotient = numerator.div_euclid(denominator);
    let twice_rest = 2 * numerator.rem_euclid(denominator);
    let up = twice_rest > denominator || (twice_rest == denominator && quotient % 2 != 0);
    (quotient + i128::from(up)) as i64
}

/// The tax in `amount` at `rate` millionths: the part of it the tax is
/// (`included`), or what is added to it.
pub fn tax_of(amount: i64, rate: i64, included: bool) -> i64 {
    let (amount, rate) = (i128::from(amount), i128::from(rate));
    let scale = i128::from(RATE_SCALE);
    if included {
        div_half_even(amount * rate, scale + rate)
    } else {
        div_half_even(amount * rate, scale)
    }
}

/// The most specific row for `to` and, if any, one of `categories`.
fn rate_for<'m>(
    market: &'m Market,
    to: Destination<'_>,
    categories: &[String],
) -> Option<&'m TaxRate> {
    let rows = || market.tax.rates.iter().filter(|r| r.country == to.country);
    let in_category = |r: &&TaxRate| r.category.as_ref().is_some_and(|c| categories.contains(c));
    let in_region = |r: &&TaxRate| r.region.is_some() && r.region.as_deref() == to.region;
    let plain_region = |r: &&TaxRate| r.region.is_none();
    rows()
        .filter(in_region)
        .find(in_category)
        .or_else(|| rows().filter(in_region).find(|r| r.category.is_none()))
        .or_else(|| rows().filter(plain_region).find(in_category))
        .or_else(|| rows().filter(plain_region).find(|r| r.category.is_none()))
}

impl TaxCalculator for TableTax {
    fn tax(
        &self,
        market: &Market,
        to: Destination<'_>,
        lines: &[Taxable<'_>],
        shipping: i64,
    ) -> Result<Taxed, TaxError> {
        if !market.countries.iter().any(|c| c == to.country) {
            return Err(TaxError::NotSold(to.country.to_string()));
        }
        let included = market.prices == PriceMode::TaxIncluded;
        let mut taxed = Taxed {
            per_line: Vec::with_capacity(lines.len()),
            shipping: 0,
            lines: Vec::new(),
            total: 0,
            included,
        };
        let mut add = |row: Option<&TaxRate>, amount: i64| -> i64 {
            let Some(row) = row else {
                return 0;
            };
            let rate = millionths(row.rate);
            let tax = tax_of(amount, rate, included);
            let name = row.name.as_deref().unwrap_or(&market.tax.name);
            match taxed
                .lines
                .iter_mut()
                .find(|l| l.name == name && l.rate == rate)
            {
                Some(line) => line.amount += tax,
                None => taxed.lines.push(TaxLine {
                    name: name.to_string(),
                    rate,
                    amount: tax,
                }),
            }
            tax
        };
        let mut per_line = Vec::with_capacity(lines.len());
        for line in lines {
            per_line.push(add(rate_for(market, to, line.categories), line.amount));
        }
        let shipping_tax = if market.tax.on_shipping && shipping > 0 {
            add(rate_for(market, to, &[]), shipping)
        } else {
            0
        };
        taxed.total = per_line.iter().sum::<i64>() + shipping_tax;
        taxed.per_line = per_line;
        taxed.shipping = shipping_tax;
        Ok(taxed)
    }
}

#[cfg(test)]
#[path = "tax_tests.rs"]
mod tests;
