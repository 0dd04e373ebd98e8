//! The promotions a merchandiser runs: percentage or fixed amount off, an
//! optional minimum subtotal, scoped to categories or products, between
//! dates, reached by one or several codes, stackable or not.

use std::collections::{BTreeMap, HashMap};
use storefront_proto::error::codes;

use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_proto::Timestamp;
use storefront_proto::cart::v1::{Cart, Promotion, PromotionKind};
use storefront_proto::common::v1::{LocalizedString, Money};

pub use crate::discounts::{applies_in, minimum_for};
use crate::discounts::{discount_of, money};

pub struct Catalogue {
    promotions: Vec<Promotion>,
    /// Each code, in ASCII capitals, to its promotion: a shop may run
    /// 1,000 promotions and every priced cart looks its codes up.
    codes: HashMap<String, usize>,
    /// The demo set, which the demo's category scopes may still replace;
    /// a set the shop gave is never replaced by the demo.
    pub demo: bool,
}

fn seconds(ts: Option<&Timestamp>) -> Option<i64> {
    ts.map(|t| t.seconds)
}

fn rejected(message: String) -> ServiceError {
    ServiceError::new(
        ErrorKind::Validation,
        codes::VALIDATION_ERROR,
        message.clone(),
    )
    .with_violation(FieldViolation::new(
        "discountCode",
        codes::INVALID_VALUE,
        message,
    ))
}

impl Catalogue {
    pub fn new(promotions: Vec<Promotion>) -> Self {
        let mut codes = HashMap::new();
        for (at, p) in promotions.iter().enumerate() {
            for code in &p.codes {
                codes.entry(code.to_ascii_uppercase()).or_insert(at);
            }
        }
        Self {
            promotions,
            codes,
            demo: false,
        }
    }

    /// The demo set (local and development only).
    pub fn demo(promotions: Vec<Promotion>) -> Self {
        Self {
            demo: true,
            ..Self::new(promotions)
        }
    }

    pub fn by_code(&self, code: &str) -> Option<&Promotion> {
        let at = self.codes.get(code.to_ascii_uppercase().as_str())?;
        self.promotions.get(*at)
    }

    pub fn active(&self, p: &Promotion, now: i64) -> bool {
        seconds(p.starts_at.as_ref()).is_none_or(|s| s <= now)
            && seconds(p.ends_at.as_ref()).is_none_or(|e| now < e)
    }

    pub fn active_now(&self, now: i64) -> Vec<Promotion> {
        self.promotions
            .iter()
            .filter(|p| self.active(p, now))
            .cloned()
            .collect()
    }

    /// Checks that `code` can apply to `cart` now, saying why not; returns
    /// the promotion's canonical code.
    pub fn check(&self, code: &str, cart: &Cart, now: i64) -> Result<String, ServiceError> {
        let promotion = self
            .by_code(code)
            .ok_or_else(|| rejected(format!("{code} is not a valid discount code")))?;
        if seconds(promotion.starts_at.as_ref()).is_some_and(|s| now < s) {
            return Err(rejected(format!("{code} is not active yet")));
        }
        if seconds(promotion.ends_at.as_ref()).is_some_and(|e| now >= e) {
            return Err(rejected(format!("{code} has expired")));
        }
        if !applies_in(promotion, &cart.currency_code) {
            return Err(rejected(format!(
                "{code} does not apply to carts in {}",
                cart.currency_code
            )));
        }
        let subtotal: i64 = cart
            .line_items
            .iter()
            .map(|l| l.unit_price.as_ref().map_or(0, |p| p.cent_amount) * i64::from(l.quantity))
            .sum();
        if let Some(min) = minimum_for(promotion, &cart.currency_code).filter(|min| subtotal < *min)
        {
            let (dollars, cents) = (min / 100, min % 100);
            return Err(rejected(format!(
                "{code} needs a subtotal of at least {dollars}.{cents:02} {}",
                cart.currency_code
            )));
        }
        let gross: Vec<i64> = cart
            .line_items
            .iter()
            .map(|l| l.unit_price.as_ref().map_or(0, |p| p.cent_amount) * i64::from(l.quantity))
            .collect();
        if discount_of(promotion, cart, subtotal, &gross).is_none() {
            return Err(rejected(format!("{code} applies to nothing in this cart")));
        }
        let canonical = promotion
            .codes
            .iter()
            .find(|c| c.eq_ignore_ascii_case(code))
            .cloned();
        Ok(canonical.unwrap_or_else(|| code.to_string()))
    }

    /// The codes after applying `code`: a stackable code joins stackable
    /// ones; a non-stackable code, or one joining a non-stackable, replaces.
    pub fn with_code(&self, codes: &[String], code: String) -> Vec<String> {
        if codes.contains(&code) {
            return codes.to_vec();
        }
        let stackable = |c: &String| self.by_code(c).is_some_and(|p| p.stackable);
        if stackable(&code) && codes.iter().all(stackable) {
            let mut next = codes.to_vec();
            next.push(code);
            next
        } else {
            vec![code]
        }
    }
}

fn names(en: &str) -> Option<LocalizedString> {
    let values = BTreeMap::from([
        ("en-AU".to_string(), en.to_string()),
        ("en-NZ".to_string(), en.to_string()),
    ]);
    Some(LocalizedString { values })
}

fn both(cents: i64) -> Vec<Money> {
    vec![money("AUD", cents), money("NZD", cents)]
}

fn at(seconds: i64) -> Option<Timestamp> {
    Some(Timestamp { seconds, nanos: 0 })
}

/// The demo promotions; `shoes` are the ids of the shoe categories.
pub fn demo(shoes: Vec<String>) -> Vec<Promotion> {
    let base = |key: &str, name: &str, codes: &[&str], kind: PromotionKind| Promotion {
        id: format!("promo-{key}"),
        key: key.to_string(),
        name: names(name),
        codes: codes.iter().map(|c| c.to_string()).collect(),
        kind: kind as i32,
        ..Default::default()
    };
    vec![
        Promotion {
            basis_points: 1000,
            ..base(
                "welcome",
                "10% off your order",
                &["WELCOME10", "HELLO10"],
                PromotionKind::Percentage,
            )
        },
        Promotion {
            basis_points: 2000,
            category_ids: shoes,
            ..base(
                "shoes",
                "20% off shoes",
                &["SHOES20"],
                PromotionKind::Percentage,
            )
        },
        Promotion {
            amounts: both(1500),
            minimum_subtotals: both(10_000),
            stackable: true,
            ..base(
                "take15",
                "$15 off orders of $100 or more",
                &["TAKE15"],
                PromotionKind::FixedAmount,
            )
        },
        Promotion {
            basis_points: 500,
            stackable: true,
            ..base(
                "extra5",
                "5% extra, combines with TAKE15",
                &["EXTRA5"],
                PromotionKind::Percentage,
            )
        },
        // 2025-09-01 to 2025-12-01: over.
        Promotion {
            basis_points: 2500,
            starts_at: at(1_756_684_800),
            ends_at: at(1_764_547_200),
            ..base(
                "spring",
                "Spring sale",
                &["SPRING25"],
                PromotionKind::Percentage,
            )
        },
        // From 2099-01-01: not yet.
        Promotion {
            basis_points: 3000,
            starts_at: at(4_070_908_800),
            ..base(
                "future",
                "Next century sale",
                &["FUTURE30"],
                PromotionKind::Percentage,
            )
        },
    ]
}
