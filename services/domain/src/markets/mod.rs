//! The shop's markets: where it sells, in which currencies (ISO 4217, with
//! their minor units), to which countries (ISO 3166-1 alpha-2), in which
//! locales, with prices that include tax or not, the tax rates that apply
//! (by country, by region where a market says so, with reduced rates by
//! category) and the shipping methods offered. Read from a document (JSON
//! or YAML: `MARKETS_FILE`, `PUT /internal/markets`, docs/markets.md),
//! checked whole: every problem is named by its path
//! (`markets[2].tax.rates[0].rate: must be between 0 and 1`), and a
//! document with any is not a set of markets.

pub mod shipping;
pub mod tax;
mod validate;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use storefront_proto::error::{ErrorKind, FieldViolation, ServiceError, codes};

/// The demo's markets: AU and NZ (tax included, as the shop has always
/// priced), US (tax excluded, rates by state) and DE (VAT included, a
/// reduced rate for one category).
pub const DEMO: &str = include_str!("demo.json");

/// The demo's file: a `MARKETS_FILE` for tests of deployed settings.
pub const DEMO_FILE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src/markets/demo.json");

/// Markets a document may hold, and what one market may list.
pub const MAX_MARKETS: usize = 100;
pub const MAX_ENTRIES: usize = 250;

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MarketSet {
    pub markets: Vec<Market>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Market {
    /// Lowercase letters, digits, `-` and `_`: `au`, `eu-west`.
    pub id: String,
    /// The market's name by locale.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub name: BTreeMap<String, String>,
    pub currencies: Vec<Currency>,
    pub countries: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locales: Vec<String>,
    /// Whether the prices a shopper sees include tax.
    pub prices: PriceMode,
    pub tax: Tax,
    #[serde(default)]
    pub shipping: Vec<ShippingMethod>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = MarketCurrency))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Currency {
    /// ISO 4217: `AUD`, `JPY`, `KWD`.
    pub code: String,
    /// Digits after the decimal point (JPY 0, EUR 2, KWD 3): amounts are
    /// integers of that unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minor_units: Option<u32>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PriceMode {
    /// Prices include tax: the tax is the part of the price it is (VAT, GST).
    TaxIncluded,
    /// Tax is added to the prices (US sales tax).
    TaxExcluded,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Tax {
    /// What the tax is called on a receipt: `GST`, `VAT`, `Sales tax`.
    pub name: String,
    pub rates: Vec<TaxRate>,
    /// Whether shipping is taxed (at the address's rate without category).
    #[serde(default)]
    pub on_shipping: bool,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TaxRate {
    pub country: String,
    /// ISO 3166-2 (`US-CA`): the rate of that region of `country`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// A category key: the rate of lines in that category (reduced rates).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// Between 0 and 1, at most 6 decimals: 0.1 is 10%.
    pub rate: f64,
    /// The tax line's name, when not the market's tax name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShippingMethod {
    /// Unique in its market: `standard`, `express`.
    pub id: String,
    /// By locale.
    pub name: BTreeMap<String, String>,
    /// Where it ships; empty: every country of the market.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub countries: Vec<String>,
    /// Its price in each of the market's currencies.
    pub prices: Vec<Amount>,
    /// Free when the cart's subtotal (after discounts) is at least this.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub free_above: Vec<Amount>,
    pub min_days: u32,
    pub max_days: u32,
}

#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(as = ShippingAmount))]
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Amount {
    pub currency: String,
    /// In the currency's minor units.
    pub amount: i64,
}

impl MarketSet {
    /// The minor units of `code` in these markets, if one sells in it.
    pub fn minor_units(&self, code: &str) -> Option<u32> {
        self.markets
            .iter()
            .flat_map(|m| &m.currencies)
            .find(|c| c.code == code)
            .and_then(|c| c.minor_units)
    }

    /// Every currency some market sells in, each once, in the order the
    /// markets name them.
    pub fn currencies(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for c in self.markets.iter().flat_map(|m| &m.currencies) {
            if !out.contains(&c.code.as_str()) {
                out.push(&c.code);
            }
        }
        out
    }
}

impl MarketSet {
    /// Market `id`; else the ids there are, comma-separated, for a
    /// refusal that names them.
    pub fn market(&self, id: &str) -> Result<&Market, String> {
        self.markets.iter().find(|m| m.id == id).ok_or_else(|| {
            let ids: Vec<&str> = self.markets.iter().map(|m| m.id.as_str()).collect();
            ids.join(", ")
        })
    }
}

impl Market {
    /// What one market's product feed for agents shows: prices in its
    /// first currency, strings in its first locale (`en` without one).
    pub fn feed_view(&self) -> (String, String) {
        let currency = self
            .currencies
            .first()
            .map(|c| c.code.clone())
            .unwrap_or_default();
        let locale = self.locales.first().cloned().unwrap_or_else(|| "en".into());
        (currency, locale)
    }
}

/// Reads and checks a document (JSON, or YAML when it does not start with
/// `{`): the markets, or a 422 naming each problem by its path.
pub fn parse(document: &[u8]) -> Result<MarketSet, ServiceError> {
    let set = read(document).map_err(|(field, message)| refused(vec![(field, message)]))?;
    let problems = validate::problems(&set);
    if problems.is_empty() {
        Ok(set)
    } else {
        Err(refused(problems))
    }
}

fn read(document: &[u8]) -> Result<MarketSet, (String, String)> {
    let json = document
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == b'{');
    let (path, message) = if json {
        let mut de = serde_json::Deserializer::from_slice(document);
        match serde_path_to_error::deserialize(&mut de) {
            Ok(set) => return Ok(set),
            Err(e) => (e.path().to_string(), e.into_inner().to_string()),
        }
    } else {
        let de = serde_yaml_ng::Deserializer::from_slice(document);
        match serde_path_to_error::deserialize(de) {
            Ok(set) => return Ok(set),
            Err(e) => (e.path().to_string(), e.into_inner().to_string()),
        }
    };
    let field = match path.as_str() {
        "." | "?" | "" => "document".to_string(),
        _ => path,
    };
    // serde's words, without where in the text (the path says where).
    let message = message.split(" at line ").next().unwrap_or(&message);
    Err((field, crate::markets::cut(message)))
}

/// A message of at most 200 characters.
fn cut(message: &str) -> String {
    message.chars().take(200).collect()
}

fn refused(problems: Vec<(String, String)>) -> ServiceError {
    let first = problems
        .first()
        .map(|(f, m)| format!("{f}: {m}"))
        .unwrap_or_default();
    let more = match problems.len() {
        0 | 1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let mut error = ServiceError::new(
        ErrorKind::Validation,
        codes::VALIDATION_ERROR,
        format!("the markets are not valid: {first}{more}"),
    );
    error.violations = problems
        .into_iter()
        .map(|(field, message)| FieldViolation::new(field, codes::INVALID_VALUE, message))
        .collect();
    error
}

#[cfg(test)]
mod tests;

/// Where a program's markets come from: `MARKETS_FILE` (JSON or YAML), or
/// the demo's (local and development only; production and staging require
/// the file, as every program prices in its markets' currencies).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    File(std::path::PathBuf),
    Demo,
}

impl Source {
    /// The set the source holds, checked: a message naming the file and
    /// each problem by its path when it has any.
    pub fn read(&self) -> Result<MarketSet, String> {
        match self {
            Source::Demo => parse(DEMO.as_bytes()).map_err(|e| e.message),
            Source::File(path) => {
                let shown = path.display();
                let bytes =
                    std::fs::read(path).map_err(|e| format!("MARKETS_FILE {shown}: {e}"))?;
                parse(&bytes).map_err(|e| format!("MARKETS_FILE {shown}: {}", problems(&e)))
            }
        }
    }
}

/// A refused set's problems, one per line's worth, for a start-up error.
pub fn problems(e: &ServiceError) -> String {
    let each: Vec<String> = e
        .violations
        .iter()
        .map(|v| format!("{}: {}", v.field, v.message))
        .collect();
    each.join("; ")
}

impl Source {
    /// `MARKETS_FILE` as set (`file`), in a deployed environment or not.
    pub fn from_setting(file: Option<&str>, deployed: bool) -> Result<Self, &'static str> {
        match file {
            Some(file) => Ok(Source::File(file.into())),
            None if deployed => Err(
                "is required in production and staging: the shop's markets, whose currencies every program prices in (docs/markets.md)",
            ),
            None => Ok(Source::Demo),
        }
    }
}

/// The markets `MARKETS_FILE` (`file`) names, or the demo's outside
/// production and staging: what every program prices in, checked at start.
pub fn load(file: Option<&str>, deployed: bool) -> Result<(Source, MarketSet), String> {
    let source = Source::from_setting(file, deployed)?;
    let set = source.read()?;
    Ok((source, set))
}
