use super::*;

fn fields(document: &str) -> Vec<String> {
    let refused = parse(document.as_bytes()).expect_err("refused");
    assert_eq!(refused.kind, ErrorKind::Validation);
    refused.violations.into_iter().map(|v| v.field).collect()
}

fn one(market: &str) -> String {
    format!(r#"{{"markets":[{market}]}}"#)
}

const GOOD: &str = r#"{"id":"jp","currencies":[{"code":"JPY","minorUnits":0}],"countries":["JP"],
    "prices":"taxIncluded","tax":{"name":"Consumption tax","rates":[{"country":"JP","rate":0.1}]},
    "shipping":[{"id":"standard","name":{"ja-JP":"通常配送"},"prices":[{"currency":"JPY","amount":500}],"minDays":1,"maxDays":3}]}"#;

#[test]
fn the_demo_is_four_markets_in_four_currencies() {
    let demo = parse(DEMO.as_bytes()).expect("the demo is valid");
    let ids: Vec<&str> = demo.markets.iter().map(|m| m.id.as_str()).collect();
    assert_eq!(ids, ["au", "nz", "us", "de"]);
    assert_eq!(demo.currencies(), ["AUD", "NZD", "USD", "EUR"]);
    assert_eq!(demo.minor_units("EUR"), Some(2));
    assert_eq!(demo.minor_units("JPY"), None);
}

#[test]
fn json_and_yaml_read_alike() {
    let json = parse(one(GOOD).as_bytes()).expect("json");
    let yaml = "markets:\n  - id: jp\n    currencies: [{code: JPY, minorUnits: 0}]\n    countries: [JP]\n    prices: taxIncluded\n    tax: {name: Consumption tax, rates: [{country: JP, rate: 0.1}]}\n    shipping:\n      - {id: standard, name: {ja-JP: 通常配送}, prices: [{currency: JPY, amount: 500}], minDays: 1, maxDays: 3}\n";
    assert_eq!(parse(yaml.as_bytes()).expect("yaml"), json);
    let kwd = GOOD
        .replace("JPY\",\"minorUnits\":0", "KWD\",\"minorUnits\":3")
        .replace("JPY", "KWD");
    assert_eq!(
        parse(one(&kwd).as_bytes()).expect("kwd").minor_units("KWD"),
        Some(3)
    );
}

#[test]
fn each_problem_is_named_by_its_path() {
    let bad_rate = GOOD.replace("\"rate\":0.1", "\"rate\":1.5");
    assert_eq!(fields(&one(&bad_rate)), ["markets[0].tax.rates[0].rate"]);
    let precise = GOOD.replace("\"rate\":0.1", "\"rate\":0.12345678");
    assert_eq!(fields(&one(&precise)), ["markets[0].tax.rates[0].rate"]);
    let no_units = GOOD.replace(",\"minorUnits\":0", "");
    assert_eq!(
        fields(&one(&no_units)),
        ["markets[0].currencies[0].minorUnits"]
    );
    let twice = format!(
        r#"{{"markets":[{GOOD},{}]}}"#,
        GOOD.replace("\"jp\"", "\"jp2\"")
    );
    assert_eq!(fields(&twice), ["markets[1].countries[0]"]);
    let same_id = format!(
        r#"{{"markets":[{GOOD},{}]}}"#,
        GOOD.replace("JPY", "USD")
            .replace("\"JP\"", "\"US\"")
            .replace("ja-JP", "en-US")
    );
    assert_eq!(fields(&same_id), ["markets[1].id"]);
    let no_price = GOOD.replace(
        r#""prices":[{"currency":"JPY","amount":500}]"#,
        r#""prices":[]"#,
    );
    assert_eq!(fields(&one(&no_price)), ["markets[0].shipping[0].prices"]);
    let days = GOOD.replace("\"minDays\":1", "\"minDays\":9");
    assert_eq!(fields(&one(&days)), ["markets[0].shipping[0].minDays"]);
    let region = GOOD.replace(
        r#"{"country":"JP","rate":0.1}"#,
        r#"{"country":"JP","rate":0.1},{"country":"JP","region":"US-CA","rate":0.05}"#,
    );
    assert_eq!(fields(&one(&region)), ["markets[0].tax.rates[1].region"]);
    let no_plain = GOOD.replace(
        r#"{"country":"JP","rate":0.1}"#,
        r#"{"country":"JP","category":"books","rate":0.08}"#,
    );
    assert_eq!(fields(&one(&no_plain)), ["markets[0].tax.rates"]);
    let lower = GOOD.replace("\"JPY\",\"minorUnits\"", "\"jpy\",\"minorUnits\"");
    assert!(fields(&one(&lower)).contains(&"markets[0].currencies[0].code".to_string()));
}

#[test]
fn what_serde_refuses_is_named_too() {
    assert_eq!(fields(r#"{"markets":[{"id":"x"}]}"#), ["markets[0]"]);
    assert_eq!(fields(r#"{"markets":[], "extra": 1}"#), ["extra"]);
    let mode = GOOD.replace("taxIncluded", "included");
    assert_eq!(fields(&one(&mode)), ["markets[0].prices"]);
    assert_eq!(fields("markets: [oops"), ["markets[0]"]);
    assert_eq!(fields("{not json"), ["document"]);
}
