//! The rules a set of markets keeps, each problem named by its path.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::{Amount, MAX_ENTRIES, MAX_MARKETS, Market, MarketSet, ShippingMethod, Tax};

/// The largest amount a price may be, in minor units (as the feed's).
const MAX_AMOUNT: i64 = 100_000_000_000;
/// Rates are held to a millionth.
const RATE_SCALE: f64 = 1_000_000.0;

type Problems = Vec<(String, String)>;

fn is_code(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| b.is_ascii_uppercase())
}

fn is_id(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

/// `en`, `en-AU`, `zh-Hant`: a language and at most one subtag.
fn is_locale(tag: &str) -> bool {
    let mut parts = tag.split('-');
    let language = parts.next().unwrap_or_default();
    let subtag_ok = parts
        .next()
        .is_none_or(|s| (2..=4).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()));
    (2..=3).contains(&language.len())
        && language.bytes().all(|b| b.is_ascii_lowercase())
        && subtag_ok
        && parts.next().is_none()
}

/// The problems of `set`, in document order.
pub fn problems(set: &MarketSet) -> Problems {
    let mut out = Problems::new();
    if set.markets.is_empty() {
        out.push(("markets".into(), "at least one market".into()));
    }
    if set.markets.len() > MAX_MARKETS {
        out.push(("markets".into(), format!("at most {MAX_MARKETS} markets")));
    }
    let mut ids = HashSet::new();
    // Where a (country, currency) pair is sold, and each currency's minor units.
    let mut sold: HashMap<(&str, &str), &str> = HashMap::new();
    let mut units: HashMap<&str, u32> = HashMap::new();
    for (i, market) in set.markets.iter().enumerate() {
        let at = format!("markets[{i}]");
        if !is_id(&market.id) {
            let m = "1 to 64 lowercase letters, digits, '-' or '_'";
            out.push((format!("{at}.id"), m.into()));
        } else if !ids.insert(market.id.as_str()) {
            out.push((format!("{at}.id"), format!("a second market {}", market.id)));
        }
        currencies(&at, market, &mut units, &mut out);
        countries(&at, market, &mut sold, &mut out);
        for (j, locale) in market.locales.iter().enumerate() {
            if !is_locale(locale) {
                let m = "a language tag such as en or en-AU";
                out.push((format!("{at}.locales[{j}]"), m.into()));
            }
        }
        tax(&format!("{at}.tax"), market, &market.tax, &mut out);
        shipping(&at, market, &mut out);
    }
    let max = crate::currencies::MAX_CURRENCIES;
    if units.len() > max {
        let m = format!("at most {max} currencies in all the markets (one price index each)");
        out.push(("markets".into(), m));
    }
    out
}

fn too_many(at: &str, what: &str, n: usize, out: &mut Problems) -> bool {
    if n > MAX_ENTRIES {
        out.push((format!("{at}.{what}"), format!("at most {MAX_ENTRIES}")));
        return true;
    }
    false
}

fn currencies<'a>(
    at: &str,
    market: &'a Market,
    units: &mut HashMap<&'a str, u32>,
    out: &mut Problems,
) {
    if market.currencies.is_empty() {
        out.push((format!("{at}.currencies"), "at least one currency".into()));
    }
    if too_many(at, "currencies", market.currencies.len(), out) {
        return;
    }
    let mut seen = HashSet::new();
    for (j, c) in market.currencies.iter().enumerate() {
        let here = format!("{at}.currencies[{j}]");
        if !is_code(&c.code, 3) {
            let m = "an ISO 4217 code of three capital letters";
            out.push((format!("{here}.code"), m.into()));
            continue;
        }
        if !seen.insert(c.code.as_str()) {
            out.push((
                format!("{here}.code"),
                format!("{} is listed twice", c.code),
            ));
        }
        match c.minor_units {
            None => out.push((format!("{here}.minorUnits"), "is required".into())),
            Some(n) if n > 4 => {
                out.push((format!("{here}.minorUnits"), "between 0 and 4".into()));
            }
            Some(n) => {
                if let Some(&other) = units.get(c.code.as_str())
                    && other != n
                {
                    let m = format!("{} has {other} minor units in another market", c.code);
                    out.push((format!("{here}.minorUnits"), m));
                }
                units.insert(&c.code, n);
            }
        }
    }
}

fn countries<'a>(
    at: &str,
    market: &'a Market,
    sold: &mut HashMap<(&'a str, &'a str), &'a str>,
    out: &mut Problems,
) {
    if market.countries.is_empty() {
        out.push((format!("{at}.countries"), "at least one country".into()));
    }
    if too_many(at, "countries", market.countries.len(), out) {
        return;
    }
    for (j, country) in market.countries.iter().enumerate() {
        let here = format!("{at}.countries[{j}]");
        if !is_code(country, 2) {
            let m = "an ISO 3166-1 alpha-2 code of two capital letters";
            out.push((here, m.into()));
            continue;
        }
        // A shopper's country and currency must name one market.
        for c in &market.currencies {
            let key = (country.as_str(), c.code.as_str());
            match sold.get(&key) {
                Some(other) if *other != market.id => {
                    let m = format!("{country} with {} is already market {other}'s", c.code);
                    out.push((here.clone(), m));
                }
                Some(_) => {
                    out.push((here.clone(), format!("{country} is listed twice")));
                }
                None => {
                    sold.insert(key, &market.id);
                }
            }
        }
    }
}

/// A rate's problem, if any: between 0 and 1, at most six decimals.
fn rate_problem(rate: f64) -> Option<&'static str> {
    if !rate.is_finite() || !(0.0..=1.0).contains(&rate) {
        return Some("must be between 0 and 1");
    }
    let scaled = rate * RATE_SCALE;
    if (scaled - scaled.round()).abs() > 1e-6 {
        return Some("at most 6 decimals");
    }
    None
}

fn tax(at: &str, market: &Market, tax: &Tax, out: &mut Problems) {
    if tax.name.trim().is_empty() || tax.name.chars().count() > 50 {
        out.push((format!("{at}.name"), "1 to 50 characters".into()));
    }
    if too_many(at, "rates", tax.rates.len(), out) {
        return;
    }
    let mut seen = HashSet::new();
    for (j, r) in tax.rates.iter().enumerate() {
        let here = format!("{at}.rates[{j}]");
        if !market.countries.contains(&r.country) {
            let m = format!("{} is not one of the market's countries", r.country);
            out.push((format!("{here}.country"), m));
        }
        if let Some(region) = &r.region {
            let ok = region.split_once('-').is_some_and(|(c, rest)| {
                c == r.country
                    && (1..=3).contains(&rest.len())
                    && rest
                        .bytes()
                        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
            });
            if !ok {
                let m = format!(
                    "an ISO 3166-2 code of {} such as {}-CA",
                    r.country, r.country
                );
                out.push((format!("{here}.region"), m));
            }
        }
        if r.category
            .as_deref()
            .is_some_and(|c| c.is_empty() || c.len() > 128)
        {
            out.push((format!("{here}.category"), "a category key".into()));
        }
        if let Some(problem) = rate_problem(r.rate) {
            out.push((format!("{here}.rate"), problem.into()));
        }
        let key = (&r.country, &r.region, &r.category);
        if !seen.insert(key) {
            out.push((
                here.clone(),
                "a second rate for this country, region and category".into(),
            ));
        }
    }
    // Every country has its rate (0 where none applies): a cart is never
    // taxed by accident of a missing row.
    for country in &market.countries {
        let plain = tax
            .rates
            .iter()
            .any(|r| &r.country == country && r.region.is_none() && r.category.is_none());
        if !plain {
            let m = format!("no rate for {country} (give one, 0 where no tax applies)");
            out.push((format!("{at}.rates"), m));
        }
    }
}

fn amounts(at: &str, market: &Market, amounts: &[Amount], every: bool, out: &mut Problems) {
    let mut seen = HashSet::new();
    for (k, a) in amounts.iter().enumerate() {
        let here = format!("{at}[{k}]");
        if !market.currencies.iter().any(|c| c.code == a.currency) {
            let m = format!("{} is not one of the market's currencies", a.currency);
            out.push((format!("{here}.currency"), m));
        } else if !seen.insert(a.currency.as_str()) {
            out.push((format!("{here}.currency"), format!("{} twice", a.currency)));
        }
        if !(0..=MAX_AMOUNT).contains(&a.amount) {
            let m = format!("between 0 and {MAX_AMOUNT} minor units");
            out.push((format!("{here}.amount"), m));
        }
    }
    if every {
        for c in &market.currencies {
            if !amounts.iter().any(|a| a.currency == c.code) {
                out.push((at.to_string(), format!("no price in {}", c.code)));
            }
        }
    }
}

fn shipping(at: &str, market: &Market, out: &mut Problems) {
    if too_many(at, "shipping", market.shipping.len(), out) {
        return;
    }
    let mut ids = HashSet::new();
    for (j, method) in market.shipping.iter().enumerate() {
        let here = format!("{at}.shipping[{j}]");
        if !is_id(&method.id) {
            let m = "1 to 64 lowercase letters, digits, '-' or '_'";
            out.push((format!("{here}.id"), m.into()));
        } else if !ids.insert(method.id.as_str()) {
            out.push((
                format!("{here}.id"),
                format!("a second method {}", method.id),
            ));
        }
        names(&format!("{here}.name"), &method.name, out);
        for (k, country) in method.countries.iter().enumerate() {
            if !market.countries.contains(country) {
                let m = format!("{country} is not one of the market's countries");
                out.push((format!("{here}.countries[{k}]"), m));
            }
        }
        amounts(&format!("{here}.prices"), market, &method.prices, true, out);
        amounts(
            &format!("{here}.freeAbove"),
            market,
            &method.free_above,
            false,
            out,
        );
        days(&here, method, out);
    }
}

fn names(at: &str, name: &BTreeMap<String, String>, out: &mut Problems) {
    if name.is_empty() {
        out.push((at.to_string(), "a name in at least one locale".into()));
    }
    for (locale, text) in name {
        if !is_locale(locale) || text.trim().is_empty() || text.chars().count() > 100 {
            let m = "by locale (en-AU), 1 to 100 characters";
            out.push((format!("{at}.{locale}"), m.into()));
        }
    }
}

fn days(at: &str, method: &ShippingMethod, out: &mut Problems) {
    if method.max_days > 365 {
        out.push((format!("{at}.maxDays"), "at most 365".into()));
    }
    if method.min_days > method.max_days {
        out.push((format!("{at}.minDays"), "at most maxDays".into()));
    }
}
