//! What one promotion takes off a cart, in integer minor units: whether it
//! applies in the cart's currency, the lines it is eligible on, and its
//! amount spread over them by largest remainder.

use storefront_proto::cart::v1::{Cart, Promotion, PromotionKind};
use storefront_proto::common::v1::Money;

/// Whether `promotion` can apply to a cart in `currency`: a fixed amount
/// needs its amount in that currency, and a promotion with minimum
/// subtotals needs one in that currency. Nothing defaults to 0.
pub fn applies_in(promotion: &Promotion, currency: &str) -> bool {
    let in_currency = |amounts: &[Money]| amounts.iter().any(|m| m.currency_code == currency);
    let fixed = promotion.kind == PromotionKind::FixedAmount as i32;
    (!fixed || in_currency(&promotion.amounts))
        && (promotion.minimum_subtotals.is_empty() || in_currency(&promotion.minimum_subtotals))
}

/// The minimum subtotal of `promotion` in `currency`, if it has one.
pub fn minimum_for(promotion: &Promotion, currency: &str) -> Option<i64> {
    promotion
        .minimum_subtotals
        .iter()
        .find(|m| m.currency_code == currency)
        .map(|m| m.cent_amount)
}

pub fn money(currency: &str, cents: i64) -> Money {
    Money {
        currency_code: currency.to_string(),
        cent_amount: cents,
        fraction_digits: storefront_domain::currencies::fraction_digits(currency),
    }
}

/// Splits `amount` over `weights` in proportion, exactly: floors first, then
/// one cent each to the largest remainders (ties to the earlier line).
/// Requires `0 <= amount <= sum(weights)`; then no share exceeds its weight.
pub fn distribute(amount: i64, weights: &[i64]) -> Vec<i64> {
    let total: i64 = weights.iter().sum();
    if total <= 0 || amount <= 0 {
        return vec![0; weights.len()];
    }
    let amount = amount.min(total);
    let mut shares: Vec<i64> = Vec::with_capacity(weights.len());
    let mut remainders: Vec<(i128, usize)> = Vec::with_capacity(weights.len());
    for (i, &w) in weights.iter().enumerate() {
        let exact = i128::from(amount) * i128::from(w);
        shares.push((exact / i128::from(total)) as i64);
        remainders.push((exact % i128::from(total), i));
    }
    let mut left = amount - shares.iter().sum::<i64>();
    remainders.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for (_, i) in remainders {
        if left == 0 {
            break;
        }
        if shares[i] < weights[i] {
            shares[i] += 1;
            left -= 1;
        }
    }
    shares
}

fn eligible(promotion: &Promotion, category_ids: &[String], product_id: &str) -> bool {
    let unscoped = promotion.category_ids.is_empty() && promotion.product_ids.is_empty();
    unscoped
        || promotion.product_ids.iter().any(|p| p == product_id)
        || promotion
            .category_ids
            .iter()
            .any(|c| category_ids.contains(c))
}

/// What one promotion takes off `remaining` (per line), or None when it
/// does not apply to this cart.
pub fn discount_of(
    promotion: &Promotion,
    cart: &Cart,
    subtotal: i64,
    remaining: &[i64],
) -> Option<Vec<i64>> {
    if !applies_in(promotion, &cart.currency_code)
        || minimum_for(promotion, &cart.currency_code).is_some_and(|min| subtotal < min)
    {
        return None;
    }
    let weights: Vec<i64> = cart
        .line_items
        .iter()
        .zip(remaining)
        .map(|(line, &r)| {
            if eligible(promotion, &line.category_ids, &line.product_id) {
                r
            } else {
                0
            }
        })
        .collect();
    let base: i64 = weights.iter().sum();
    if base == 0 {
        return None;
    }
    let amount = match PromotionKind::try_from(promotion.kind) {
        Ok(PromotionKind::Percentage) => {
            (i128::from(base) * i128::from(promotion.basis_points) / 10_000) as i64
        }
        Ok(PromotionKind::FixedAmount) => promotion
            .amounts
            .iter()
            .find(|m| m.currency_code == cart.currency_code)?
            .cent_amount
            .clamp(0, base),
        _ => return None,
    };
    Some(distribute(amount, &weights))
}
