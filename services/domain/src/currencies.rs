//! The currencies a mesh prices in: every currency its markets sell
//! (docs/markets.md), in the order the markets name them, the first the
//! default. A program takes them from its markets at start
//! (`MARKETS_FILE`, or the demo's locally): the catalog and search build
//! their per-currency indexes for exactly these, and the feed, carts,
//! promotions and preferences accept exactly these. Money keeps integer
//! minor units; each currency's count of them (JPY 0, EUR 2, KWD 3) is
//! what `Money.fraction_digits` says.

use std::collections::BTreeMap;
use std::sync::{OnceLock, RwLock};

use storefront_proto::error::{ErrorKind, FieldViolation, ServiceError, codes};

use crate::markets::{self, MarketSet};

/// At most this many currencies in all the markets: the catalog and search
/// keep a per-currency index, and a search hit a facet slot, for each.
pub const MAX_CURRENCIES: usize = 8;

/// An ISO 4217 code (three capital letters), held in three bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Code([u8; 3]);

impl Code {
    pub fn parse(code: &str) -> Option<Self> {
        let bytes: [u8; 3] = code.as_bytes().try_into().ok()?;
        bytes
            .iter()
            .all(u8::is_ascii_uppercase)
            .then_some(Self(bytes))
    }

    pub fn as_str(&self) -> &str {
        // Three ASCII capitals, as `parse` checked.
        std::str::from_utf8(&self.0).unwrap_or("XXX")
    }
}

/// The currencies a program prices in, with their minor units.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Currencies {
    codes: Vec<Code>,
    units: Vec<u32>,
}

impl Currencies {
    /// Every currency `set` sells, each once (at most `MAX_CURRENCIES`; a
    /// checked set names each with its minor units).
    pub fn of(set: &MarketSet) -> Self {
        let mut out = Self {
            codes: Vec::new(),
            units: Vec::new(),
        };
        for code in set.currencies().into_iter().take(MAX_CURRENCIES) {
            if let Some(parsed) = Code::parse(code) {
                out.codes.push(parsed);
                out.units.push(set.minor_units(code).unwrap_or(2));
            }
        }
        register(&out);
        out
    }

    /// The currencies of the markets `MARKETS_FILE` (`file`) names, or of
    /// the demo's outside production and staging (`deployed`).
    pub fn from_setting(file: Option<&str>, deployed: bool) -> Result<Self, String> {
        let (_, set) = markets::load(file, deployed)?;
        Ok(Self::of(&set))
    }

    /// These and, after them, every currency `set` sells that these do not
    /// (indexes by position stay where they were), as far as
    /// `MAX_CURRENCIES`; None when `set` adds none.
    pub fn extended(&self, set: &MarketSet) -> Option<Self> {
        let mut wider = self.clone();
        for code in set.currencies() {
            if wider.codes.len() >= MAX_CURRENCIES {
                break;
            }
            if let Some(parsed) = Code::parse(code).filter(|c| !wider.codes.contains(c)) {
                wider.codes.push(parsed);
                wider.units.push(set.minor_units(code).unwrap_or(2));
            }
        }
        if wider.codes.len() == self.codes.len() {
            return None;
        }
        register(&wider);
        Some(wider)
    }

    /// The demo markets' (AUD, NZD, USD, EUR).
    pub fn demo() -> Self {
        static DEMO: OnceLock<Currencies> = OnceLock::new();
        DEMO.get_or_init(|| match markets::parse(markets::DEMO.as_bytes()) {
            Ok(set) => Self::of(&set),
            Err(_) => Self {
                codes: Vec::new(),
                units: Vec::new(),
            },
        })
        .clone()
    }

    /// `(code, minor units)` in index order (what another program is told).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, u32)> {
        self.codes
            .iter()
            .map(Code::as_str)
            .zip(self.units.iter().copied())
    }

    /// The currencies named by `pairs` (as `pairs` gives them), the
    /// well-formed ones, at most `MAX_CURRENCIES`.
    pub fn from_pairs<'a>(pairs: impl Iterator<Item = (&'a str, u32)>) -> Self {
        let mut out = Self {
            codes: Vec::new(),
            units: Vec::new(),
        };
        for (code, units) in pairs.take(MAX_CURRENCIES) {
            if let Some(parsed) = Code::parse(code).filter(|c| !out.codes.contains(c)) {
                out.codes.push(parsed);
                out.units.push(units);
            }
        }
        register(&out);
        out
    }

    pub fn codes(&self) -> &[Code] {
        &self.codes
    }

    pub fn len(&self) -> usize {
        self.codes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.codes.is_empty()
    }

    /// The default currency: what a request or a cart that names none is in.
    pub fn default_code(&self) -> &str {
        self.codes.first().map_or("", Code::as_str)
    }

    /// The code at `index` (the default's when out of range).
    pub fn code(&self, index: usize) -> &str {
        self.codes
            .get(index)
            .or(self.codes.first())
            .map_or("", Code::as_str)
    }

    pub fn index(&self, code: &str) -> Option<usize> {
        let code = Code::parse(code)?;
        self.codes.iter().position(|c| *c == code)
    }

    pub fn contains(&self, code: &str) -> bool {
        self.index(code).is_some()
    }

    /// The minor units of `code` when it is one of these: what
    /// `fraction_digits` answers for it, without the shared table's lock.
    pub fn units(&self, code: &str) -> Option<u32> {
        self.index(code).and_then(|i| self.units.get(i).copied())
    }

    /// The codes, comma-separated, for an error that names the allowed ones.
    pub fn listed(&self) -> String {
        let codes: Vec<&str> = self.codes.iter().map(Code::as_str).collect();
        codes.join(", ")
    }

    /// The index of `code` (empty: the default's), or a 400 on `currency`
    /// naming the allowed ones.
    pub fn resolve(&self, code: &str) -> Result<usize, ServiceError> {
        if code.is_empty() {
            return Ok(0);
        }
        self.index(code).ok_or_else(|| {
            let message = format!("currency must be one of {}", self.listed());
            ServiceError::new(
                ErrorKind::BadRequest,
                codes::INVALID_QUERY_PARAMETER,
                message.clone(),
            )
            .with_violation(FieldViolation::new(
                "currency",
                codes::INVALID_VALUE,
                message,
            ))
        })
    }
}

/// Minor units by code, of every set a program took: what a `Money` says
/// its `fraction_digits` are (one table per process; a code has the same
/// minor units in every document, as the markets' checks hold).
fn table() -> &'static RwLock<BTreeMap<Code, u32>> {
    static UNITS: OnceLock<RwLock<BTreeMap<Code, u32>>> = OnceLock::new();
    UNITS.get_or_init(RwLock::default)
}

fn register(set: &Currencies) {
    let mut table = table().write().unwrap_or_else(|p| p.into_inner());
    for (code, units) in set.codes.iter().zip(&set.units) {
        table.insert(*code, *units);
    }
}

/// The minor units of `code` (2 for one no set named).
pub fn fraction_digits(code: &str) -> u32 {
    let Some(code) = Code::parse(code) else {
        return 2;
    };
    let table = table().read().unwrap_or_else(|p| p.into_inner());
    table.get(&code).copied().unwrap_or(2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_prices_in_its_markets_currencies_the_first_the_default() {
        let demo = Currencies::demo();
        assert_eq!(demo.listed(), "AUD, NZD, USD, EUR");
        assert_eq!(
            (demo.default_code(), demo.resolve("").ok()),
            ("AUD", Some(0))
        );
        assert_eq!(demo.resolve("EUR").ok(), Some(3));
        let refused = demo.resolve("aud").expect_err("lowercase");
        assert_eq!(refused.violations[0].field, "currency");
        assert!(refused.message.ends_with("AUD, NZD, USD, EUR"));
    }

    #[test]
    fn a_set_adds_its_new_currencies_after_the_others() {
        let demo = Currencies::demo();
        assert!(
            demo.extended(&markets::parse(markets::DEMO.as_bytes()).unwrap())
                .is_none()
        );
        let yen = markets::parse(
            br#"{"markets":[{"id":"jp","currencies":[{"code":"JPY","minorUnits":0}],
            "countries":["JP"],"prices":"taxIncluded","tax":{"name":"VAT","rates":[{"country":"JP","rate":0.1}]}}]}"#,
        )
        .expect("a set");
        let wider = demo.extended(&yen).expect("JPY is new");
        assert_eq!(wider.listed(), "AUD, NZD, USD, EUR, JPY");
        assert_eq!((wider.index("EUR"), wider.index("JPY")), (Some(3), Some(4)));
        let pairs: Vec<(String, u32)> = wider.pairs().map(|(c, u)| (c.to_string(), u)).collect();
        let back = Currencies::from_pairs(pairs.iter().map(|(c, u)| (c.as_str(), *u)));
        assert_eq!(back, wider);
    }

    #[test]
    fn minor_units_are_the_markets() {
        let set = markets::parse(
            br#"{"markets":[{"id":"jp","currencies":[{"code":"JPY","minorUnits":0}],
            "countries":["JP"],"prices":"taxIncluded","tax":{"name":"VAT","rates":[{"country":"JP","rate":0.1}]}},
            {"id":"kw","currencies":[{"code":"KWD","minorUnits":3}],
            "countries":["KW"],"prices":"taxIncluded","tax":{"name":"VAT","rates":[{"country":"KW","rate":0}]}}]}"#,
        )
        .expect("a set");
        let two = Currencies::of(&set);
        assert_eq!(two.listed(), "JPY, KWD");
        assert_eq!((fraction_digits("JPY"), fraction_digits("KWD")), (0, 3));
        assert_eq!(fraction_digits("AUD"), 2);
        // A set's own units, as the shared table has them; none for a
        // code it does not price in.
        assert_eq!((two.units("JPY"), two.units("KWD")), (Some(0), Some(3)));
        assert_eq!(
            (two.units("AUD"), two.units(""), two.units("jpy")),
            (None, None, None)
        );
        assert_eq!(
            Code::parse("JPY").map(|c| c.as_str().to_string()),
            Some("JPY".into())
        );
        assert!(Code::parse("JP").is_none() && Code::parse("jpy").is_none());
    }
}
