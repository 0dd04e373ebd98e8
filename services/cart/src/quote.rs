//! What a checkout of a cart comes to in its market (docs/markets.md): the
//! market that sells the cart's currency to the address's country, the
//! shipping methods it offers there (cheapest first), the one chosen, and
//! the tax of the lines and of the shipping as its table says.

use std::collections::HashMap;
use std::sync::OnceLock;

use storefront_domain::markets::shipping::{Offer, offers};
use storefront_domain::markets::tax::{Destination, TableTax, TaxCalculator, Taxable, Taxed};
use storefront_domain::markets::{self, DEMO, Market, MarketSet};
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::cart::storage::v1::CheckoutRecord;
use storefront_proto::cart::v1::{Cart, CheckoutSession};
use storefront_proto::common::v1::{
    LocalizedString, Money, PostalAddress, ShippingOption, TaxLine, Totals,
};
use storefront_proto::error::codes;

use crate::market_set::Loaded;
use crate::pricing::money;

/// A checkout's price in its market.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    /// The methods that ship to the address, cheapest first.
    pub options: Vec<ShippingOption>,
    /// The one chosen (none when the market ships nowhere in the currency).
    pub chosen: Option<ShippingOption>,
    pub taxed: Option<Taxed>,
}

/// Which shipping method a quote takes.
#[derive(Debug, Clone, Copy)]
enum Pick<'a> {
    Cheapest,
    Id(&'a str),
    /// None: a cart's estimate, before checkout.
    Nothing,
}

/// The demo markets, for a currency no configured market sells (their
/// table is the GST the shop priced with before markets: AUD and NZD).
fn fallback() -> &'static MarketSet {
    static DEMO_SET: OnceLock<MarketSet> = OnceLock::new();
    DEMO_SET.get_or_init(|| {
        markets::parse(DEMO.as_bytes()).unwrap_or(MarketSet {
            markets: Vec::new(),
        })
    })
}

/// A region (ISO 3166-2) from an address's `state`: `CA` in the US is
/// `US-CA`; one already in that form is taken as it is.
fn region_of(country: &str, state: &str) -> Option<String> {
    let state = state.trim().to_ascii_uppercase();
    if state.starts_with(&format!("{country}-")) {
        return Some(state);
    }
    let code = (1..=3).contains(&state.len()) && state.bytes().all(|b| b.is_ascii_alphanumeric());
    code.then(|| format!("{country}-{state}"))
}

fn invalid(field: &str, message: String) -> ServiceError {
    ServiceError::new(
        ErrorKind::Validation,
        codes::VALIDATION_ERROR,
        message.clone(),
    )
    .with_violation(FieldViolation::new(field, codes::INVALID_VALUE, message))
}

/// At most ten of `items`, joined: what a refusal lists of the valid ones.
fn some_of<'a>(items: impl Iterator<Item = &'a str>) -> String {
    items.take(10).collect::<Vec<_>>().join(", ")
}

fn option_of(offer: &Offer<'_>, currency: &str) -> ShippingOption {
    ShippingOption {
        id: offer.id.to_string(),
        name: Some(LocalizedString {
            values: offer.name.clone().into_iter().collect(),
        }),
        price: Some(money(currency, offer.price)),
        min_days: offer.min_days,
        max_days: offer.max_days,
    }
}

impl Loaded {
    /// The market that sells `currency` to `country` (the first that sells
    /// it when no country is known); a 422 on `shippingAddress.country`
    /// when markets sell the currency but none to that country. None when
    /// no market (nor the demo table) sells the currency.
    fn market_for(&self, currency: &str, country: &str) -> Result<Option<&Market>, ServiceError> {
        let sells = |m: &&Market| m.currencies.iter().any(|c| c.code == currency);
        let configured = self.set.markets.iter().any(|m| sells(&m));
        let set = if configured { &self.set } else { fallback() };
        let mut selling = set.markets.iter().filter(sells).peekable();
        let Some(first) = selling.peek().copied() else {
            return Ok(None);
        };
        if country.is_empty() {
            return Ok(Some(first));
        }
        if let Some(m) = selling.find(|m| m.countries.iter().any(|c| c == country)) {
            return Ok(Some(m));
        }
        let to = set.markets.iter().filter(sells).flat_map(|m| &m.countries);
        Err(invalid(
            "shippingAddress.country",
            format!(
                "no market sells in {currency} to {country}; a {currency} cart ships to {}",
                some_of(to.map(String::as_str))
            ),
        ))
    }

    /// The quote for checking out `cart` to `address` with the shipping
    /// method `method` (the cheapest when none): a 422 on `shippingMethodId`
    /// for a method not offered there, on `shippingAddress.country` for a
    /// country the cart's market does not sell to.
    pub fn quote(
        &self,
        cart: &Cart,
        address: Option<&PostalAddress>,
        method: Option<&str>,
        keys: &HashMap<String, String>,
    ) -> Result<Quote, ServiceError> {
        let pick = match method.filter(|m| !m.is_empty()) {
            None => Pick::Cheapest,
            Some(id) => Pick::Id(id),
        };
        self.priced(cart, address, pick, keys)
    }

    /// A cart's totals before checkout: its tax at its market's first
    /// country (no region), and no shipping yet (the checkout offers it).
    pub fn estimate(&self, cart: &Cart, keys: &HashMap<String, String>) -> (Totals, Vec<TaxLine>) {
        let quote = self.priced(cart, None, Pick::Nothing, keys);
        quote.unwrap_or_else(|_| Quote::empty()).totals(cart)
    }

    fn priced(
        &self,
        cart: &Cart,
        address: Option<&PostalAddress>,
        pick: Pick<'_>,
        keys: &HashMap<String, String>,
    ) -> Result<Quote, ServiceError> {
        let currency = cart.currency_code.as_str();
        let country = address.map_or("", |a| a.country.as_str());
        let Some(market) = self.market_for(currency, country)? else {
            return Ok(Quote::empty());
        };
        let country = match country {
            "" => market.countries.first().map_or("", String::as_str),
            c => c,
        };
        let goods = cart.total_price.as_ref().map_or(0, |m| m.cent_amount);
        let offered = match pick {
            Pick::Nothing => Vec::new(),
            _ => offers(market, country, currency, goods),
        };
        let chosen = match pick {
            Pick::Nothing => None,
            Pick::Cheapest => offered.first(),
            Pick::Id(id) => Some(offered.iter().find(|o| o.id == id).ok_or_else(|| {
                let ids = some_of(offered.iter().map(|o| o.id));
                invalid(
                    "shippingMethodId",
                    format!("not a shipping method offered to this address; one of: {ids}"),
                )
            })?),
        };
        let region = address.and_then(|a| match a.region.as_str() {
            "" => region_of(country, &a.state),
            region => Some(region.to_string()),
        });
        let to = Destination {
            country,
            region: region.as_deref(),
        };
        // Each line's categories by key: its product's and their ancestors'.
        let categories: Vec<Vec<String>> = cart
            .line_items
            .iter()
            .map(|l| {
                let key = |id: &String| keys.get(id).cloned();
                l.category_ids.iter().filter_map(key).collect()
            })
            .collect();
        let lines: Vec<Taxable<'_>> = cart
            .line_items
            .iter()
            .zip(&categories)
            .map(|(l, categories)| Taxable {
                amount: l.total_price.as_ref().map_or(0, |m| m.cent_amount),
                categories,
            })
            .collect();
        let shipping = chosen.map_or(0, |o| o.price);
        Ok(Quote {
            options: offered.iter().map(|o| option_of(o, currency)).collect(),
            chosen: chosen.map(|o| option_of(o, currency)),
            taxed: TableTax.tax(market, to, &lines, shipping).ok(),
        })
    }

    /// What a session's order comes to: at its address with its method;
    /// with the cheapest should its own be gone since (a confirm that
    /// stopped and finishes later), and untaxed and unshipped should no
    /// market take it any more.
    pub fn quote_of(
        &self,
        record: &CheckoutRecord,
        cart: &Cart,
        keys: &HashMap<String, String>,
    ) -> Quote {
        let session = record.session.as_ref();
        let address = session.and_then(|s| s.shipping_address.as_ref());
        let method = session.map(|s| s.shipping_method_id.as_str());
        self.quote(cart, address, method, keys)
            .or_else(|_| self.quote(cart, address, None, keys))
            .unwrap_or_else(|_| Quote::empty())
    }

    /// Whether a market has a rate by category (a quote then needs the
    /// catalog's category keys).
    pub fn taxes_by_category(&self) -> bool {
        let by_category = |m: &Market| m.tax.rates.iter().any(|r| r.category.is_some());
        self.set.markets.iter().any(by_category)
    }

    /// The minor units of `currency` (2 when no market names it).
    pub fn minor_units(&self, currency: &str) -> u32 {
        self.set
            .minor_units(currency)
            .or_else(|| fallback().minor_units(currency))
            .unwrap_or(2)
    }
}

fn cents(m: Option<&Money>) -> i64 {
    m.map_or(0, |m| m.cent_amount)
}

impl Quote {
    /// Nothing shipped, nothing taxed: a currency no market sells.
    fn empty() -> Self {
        Self {
            options: Vec::new(),
            chosen: None,
            taxed: None,
        }
    }

    /// The chosen method's price (0 without one).
    pub fn shipping(&self) -> i64 {
        cents(self.chosen.as_ref().and_then(|o| o.price.as_ref()))
    }

    /// The tax on the shipping.
    pub fn shipping_tax(&self) -> i64 {
        self.taxed.as_ref().map_or(0, |t| t.shipping)
    }

    /// What `cart` comes to (tax excluded: added to its total), and the tax
    /// lines, in the cart's currency.
    pub fn totals(&self, cart: &Cart) -> (Totals, Vec<TaxLine>) {
        let currency = cart.currency_code.as_str();
        let taxed = self.taxed.as_ref();
        let tax = taxed.map_or(0, |t| t.total);
        let added = taxed.filter(|t| !t.included).map_or(0, |t| t.total);
        let total = cents(cart.total_price.as_ref())
            .saturating_add(self.shipping())
            .saturating_add(added);
        let totals = Totals {
            subtotal: cart.subtotal.clone(),
            discount: cart.discount_total.clone(),
            shipping: Some(money(currency, self.shipping())),
            tax: Some(money(currency, tax)),
            total: Some(money(currency, total)),
        };
        let lines = taxed.map_or_else(Vec::new, |t| {
            t.lines
                .iter()
                .map(|l| TaxLine {
                    name: l.name.clone(),
                    rate_millionths: l.rate,
                    amount: Some(money(currency, l.amount)),
                })
                .collect()
        });
        (totals, lines)
    }

    /// Sets the session's price fields to this quote's for `cart`.
    pub fn price(&self, session: &mut CheckoutSession, cart: &Cart) {
        let (totals, tax_lines) = self.totals(cart);
        session.total_price = totals.total.clone();
        session.totals = Some(totals);
        session.tax_lines = tax_lines;
        session.shipping_options = self.options.clone();
        session.shipping_method_id = self
            .chosen
            .as_ref()
            .map(|o| o.id.clone())
            .unwrap_or_default();
    }
}

/// Whether two sessions are priced the same (what a confirm checks: never
/// an order at a price the shopper was not shown).
pub fn same_price(a: &CheckoutSession, b: &CheckoutSession) -> bool {
    a.totals == b.totals
        && a.tax_lines == b.tax_lines
        && a.shipping_options == b.shipping_options
        && a.shipping_method_id == b.shipping_method_id
}

/// `amount` minor units written with `minor_units` decimals (`12.50`).
pub fn decimal(amount: i64, minor_units: u32) -> String {
    if minor_units == 0 {
        return amount.to_string();
    }
    let scale = 10_i64.pow(minor_units.min(6));
    let sign = if amount < 0 { "-" } else { "" };
    let amount = amount.unsigned_abs();
    let scale = scale as u64;
    format!(
        "{sign}{}.{:0width$}",
        amount / scale,
        amount % scale,
        width = minor_units as usize
    )
}
