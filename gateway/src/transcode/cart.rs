//! A cart as JSON straight from the cart service's protobuf bytes (see the
//! module above): a full cart is a hundred lines of a dozen strings each,
//! which decoding, converting and serialising used to copy three times.
//! The JSON is what `model::cart::Cart` serialises to.

use super::product::{
    integer, key, localized, merge, money, required, resource_meta, string, text,
};
use super::wire::{Message, Result, utf8};

/// `model::cart::Cart`.
pub fn cart(out: &mut Vec<u8>, c: &Message<'_>) -> Result<()> {
    let (mut meta, mut subtotal, mut discount, mut total) = Default::default();
    let mut totals: Option<Message<'_>> = None;
    let (mut customer, mut currency, mut state): (&[u8], &[u8], i32) = (b"", b"", 0);
    for field in c.fields() {
        match field? {
            (1, v) => merge(&mut meta, v)?,
            (2, v) => customer = checked(v)?,
            (3, v) => currency = checked(v)?,
            (6, v) => merge(&mut subtotal, v)?,
            (7, v) => merge(&mut discount, v)?,
            (8, v) => merge(&mut total, v)?,
            (9, v) => state = v.varint()? as i32,
            // Not shown, but a decoder checks it all the same.
            (10, v) => _ = utf8(v.text()?)?,
            (11, v) => merge(totals.get_or_insert_default(), v)?,
            _ => {}
        }
    }
    let meta = required(&meta, "resource without meta")?;
    let subtotal = required(&subtotal, "subtotal missing")?;
    let discount = required(&discount, "discount total missing")?;
    let total = required(&total, "total missing")?;
    out.push(b'{');
    resource_meta(out, meta)?;
    key(out, false, "customerId");
    text(out, customer)?;
    key(out, false, "currencyCode");
    text(out, currency)?;
    key(out, false, "lineItems");
    out.push(b'[');
    for (i, line) in c.repeated(4).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        line_item(out, &Message::new(line?.bytes()?))?;
    }
    out.push(b']');
    key(out, false, "discountCodes");
    out.push(b'[');
    for (i, code) in c.repeated(5).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        text(out, code?.text()?)?;
    }
    out.push(b']');
    for (name, value) in [
        ("subtotal", subtotal),
        ("discountTotal", discount),
        ("totalPrice", total),
    ] {
        key(out, false, name);
        money(out, value)?;
    }
    key(out, false, "state");
    string(out, if state == 2 { "ORDERED" } else { "ACTIVE" });
    if let Some(totals) = &totals {
        key(out, false, "totals");
        totals_of(out, totals)?;
    }
    key(out, false, "taxLines");
    out.push(b'[');
    for (i, line) in c.repeated(12).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        tax_line(out, &Message::new(line?.bytes()?))?;
    }
    out.push(b']');
    out.push(b'}');
    Ok(())
}

/// `model::totals::Totals`: every amount required.
fn totals_of(out: &mut Vec<u8>, t: &Message<'_>) -> Result<()> {
    let mut amounts: [Message<'_>; 5] = Default::default();
    for field in t.fields() {
        let (number, v) = field?;
        if let Some(slot) = (1..=5)
            .contains(&number)
            .then(|| &mut amounts[number as usize - 1])
        {
            merge(slot, v)?;
        }
    }
    let names = ["subtotal", "discount", "shipping", "tax", "total"];
    out.push(b'{');
    for (i, (name, amount)) in names.iter().zip(&amounts).enumerate() {
        key(out, i == 0, name);
        money(out, required(amount, "a total missing")?)?;
    }
    out.push(b'}');
    Ok(())
}

/// `model::totals::TaxLine`: its rate in millionths written as a fraction.
fn tax_line(out: &mut Vec<u8>, l: &Message<'_>) -> Result<()> {
    let (mut name, mut millionths, mut amount): (&[u8], i64, Message<'_>) = Default::default();
    for field in l.fields() {
        match field? {
            (1, v) => name = checked(v)?,
            (2, v) => millionths = v.varint()? as i64,
            (3, v) => merge(&mut amount, v)?,
            _ => {}
        }
    }
    let amount = required(&amount, "tax line missing")?;
    out.push(b'{');
    key(out, true, "name");
    text(out, name)?;
    key(out, false, "rate");
    let rate = millionths as f64 / 1_000_000.0;
    // As serde writes an f64 (writing to memory cannot fail).
    let _ = serde_json::to_writer(&mut *out, &rate);
    key(out, false, "amount");
    money(out, amount)?;
    out.push(b'}');
    Ok(())
}

/// A string field's bytes, each occurrence checked as a decoder checks it
/// (a field given twice shows its last; the first must be UTF-8 too).
fn checked<'a>(v: super::wire::Value<'a>) -> Result<&'a [u8]> {
    let text = v.text()?;
    utf8(text)?;
    Ok(text)
}

/// `model::cart::LineItem`.
fn line_item(out: &mut Vec<u8>, l: &Message<'_>) -> Result<()> {
    let (mut id, mut product, mut sku): (&[u8], &[u8], &[u8]) = (b"", b"", b"");
    let (mut variant, mut quantity) = (0u32, 0u32);
    let (mut name, mut unit, mut total) = Default::default();
    for field in l.fields() {
        match field? {
            (1, v) => id = checked(v)?,
            (2, v) => product = checked(v)?,
            (3, v) => variant = v.varint()? as u32,
            (4, v) => sku = checked(v)?,
            (5, v) => merge(&mut name, v)?,
            (6, v) => quantity = v.varint()? as u32,
            (7, v) => merge(&mut unit, v)?,
            (8, v) => merge(&mut total, v)?,
            (9, v) => _ = utf8(v.text()?)?,
            _ => {}
        }
    }
    let unit = required(&unit, "unit price missing")?;
    let total = required(&total, "line total missing")?;
    out.push(b'{');
    key(out, true, "id");
    text(out, id)?;
    key(out, false, "productId");
    text(out, product)?;
    key(out, false, "variantId");
    integer(out, variant);
    key(out, false, "sku");
    text(out, sku)?;
    key(out, false, "name");
    localized(out, &name, None)?;
    key(out, false, "quantity");
    integer(out, quantity);
    key(out, false, "unitPrice");
    money(out, unit)?;
    key(out, false, "totalPrice");
    money(out, total)?;
    out.push(b'}');
    Ok(())
}

#[cfg(test)]
mod tests {
    use prost::Message as _;
    use storefront_proto::Timestamp;
    use storefront_proto::cart::v1::{Cart, CartState};
    use storefront_proto::common::v1::{
        LineItem, LocalizedString, Money, ResourceMeta, TaxLine, Totals,
    };

    use super::super::cart as by_transcoder;
    use super::super::tests::damaged;
    use crate::model::cart::Cart as Model;

    fn money(cents: i64) -> Option<Money> {
        Some(Money {
            currency_code: "AUD".into(),
            cent_amount: cents,
            fraction_digits: 2,
        })
    }

    fn line(n: u32) -> LineItem {
        let name = [
            ("en-NZ", "Mug \"kia ora\""),
            ("de-DE", "Becher\n"),
            ("en-AU", "Mug"),
        ];
        LineItem {
            id: format!("line-{n}"),
            product_id: format!("p-{n}"),
            variant_id: n,
            sku: format!("SKU-{n}"),
            name: Some(LocalizedString {
                values: name
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            }),
            quantity: n + 1,
            unit_price: money(1_995),
            total_price: money(-5),
            category_ids: vec!["c-1".into()],
        }
    }

    fn cart(lines: u32, state: CartState) -> Cart {
        Cart {
            meta: Some(ResourceMeta {
                id: "cart-1".into(),
                version: 7,
                created_at: Some(Timestamp {
                    seconds: 1_740_000_000,
                    nanos: 5,
                }),
                last_modified_at: None,
            }),
            customer_id: "c-\u{e9}".into(),
            currency_code: "AUD".into(),
            line_items: (0..lines).map(line).collect(),
            discount_codes: vec!["SAVE10".into(), "\u{1f600}".into()],
            subtotal: money(100),
            discount_total: money(0),
            total_price: money(i64::MAX),
            state: state as i32,
            order_id: "o-1".into(),
            totals: (lines > 1).then(|| Totals {
                subtotal: money(100),
                discount: money(0),
                shipping: money(0),
                tax: money(9),
                total: money(100),
            }),
            tax_lines: (0..lines.min(2))
                .map(|n| TaxLine {
                    name: format!("GST \"{n}\""),
                    rate_millionths: [100_000, 72_500][n as usize],
                    amount: money(9),
                })
                .collect(),
        }
    }

    /// The model path's JSON, or None where it refuses the bytes.
    fn by_model(bytes: &[u8]) -> Option<Vec<u8>> {
        let model = Model::try_from(Cart::decode(bytes).ok()?).ok()?;
        Some(serde_json::to_vec(&model).unwrap())
    }

    #[test]
    fn a_cart_is_written_as_the_model_writes_it() {
        for (lines, state) in [
            (0, CartState::Active),
            (3, CartState::Ordered),
            (100, CartState::Unspecified),
        ] {
            let bytes = cart(lines, state).encode_to_vec();
            let got = by_transcoder(&bytes).unwrap();
            let want = by_model(&bytes).unwrap();
            assert_eq!(
                String::from_utf8_lossy(got.as_bytes()),
                String::from_utf8_lossy(&want)
            );
        }
    }

    #[test]
    fn a_cart_the_model_refuses_is_refused() {
        let mut no_meta = cart(1, CartState::Active);
        no_meta.meta = None;
        let mut no_total = cart(1, CartState::Active);
        no_total.total_price = None;
        let mut no_line_price = cart(2, CartState::Active);
        no_line_price.line_items[1].unit_price = None;
        let mut no_tax = cart(3, CartState::Active);
        if let Some(t) = no_tax.totals.as_mut() {
            t.tax = None;
        }
        let mut no_tax_amount = cart(3, CartState::Active);
        no_tax_amount.tax_lines[1].amount = None;
        for c in [no_meta, no_total, no_line_price, no_tax, no_tax_amount] {
            let bytes = c.encode_to_vec();
            assert!(by_model(&bytes).is_none());
            let refused = by_transcoder(&bytes).unwrap_err();
            assert_eq!(refused.status, axum::http::StatusCode::BAD_GATEWAY);
        }
    }

    /// As for products (`transcode::tests`): damaged bytes are written as
    /// the model writes them or refused, never a panic.
    #[test]
    fn damaged_bytes_never_panic_and_never_disagree() {
        let body = cart(2, CartState::Active).encode_to_vec();
        let mut rng = fastrand::Rng::with_seed(11);
        let (mut agreed, mut lenient) = (0, 0);
        for round in 0..20_000 {
            let (bytes, retyped) = damaged(&body, round, &mut rng);
            let got = by_transcoder(&bytes);
            match by_model(&bytes) {
                Some(_) if got.is_err() && retyped => lenient += 1,
                Some(want) => {
                    assert_eq!(got.unwrap().as_bytes(), want, "round {round}");
                    agreed += 1;
                }
                None => assert!(got.is_err(), "round {round}: the model refuses it"),
            }
        }
        assert!(lenient < 20, "{lenient} rounds differ by the map leniency");
        assert!(agreed > 100, "the model accepted only {agreed} variations");
    }
}
