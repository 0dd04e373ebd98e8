//! The read tools' answers made compact for an assistant's context: the
//! English (else the first) of each localized string, prices as
//! `{currency, amount}` in minor units, and each variant's item id
//! (`{productId}:{variantId}`) as the checkout tools take it.

use serde_json::{Value, json};

fn localized(value: &Value) -> Value {
    let Some(map) = value.as_object() else {
        return value.clone();
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    let key = keys.iter().find(|k| k.starts_with("en")).or(keys.first());
    key.map_or(Value::Null, |k| map[k.as_str()].clone())
}

fn price(money: &Value) -> Value {
    json!({"currency": money["currencyCode"], "amount": money["centAmount"]})
}

fn item_id(product: &Value, variant: &Value) -> Value {
    match (product["id"].as_str(), variant["id"].as_u64()) {
        (Some(p), Some(v)) => json!(format!("{p}:{v}")),
        _ => Value::Null,
    }
}

/// `/search`: each result's id, name, brand, price, stock and item id.
pub fn search(page: Value) -> Value {
    let results: Vec<Value> = page["results"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|p| {
                    json!({
                        "id": p["id"],
                        "name": localized(&p["name"]),
                        "brand": p["brand"],
                        "in_stock": p["inStock"],
                        "price": price(&p["price"]),
                        "item_id": item_id(p, &p["masterVariant"]),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({"total": page["total"], "results": results})
}

/// `/products/{id}`: the product and every variant.
pub fn product(p: Value) -> Value {
    let variants: Vec<Value> = p["variants"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|v| {
                    let prices: Vec<Value> = v["prices"]
                        .as_array()
                        .map(|m| m.iter().map(price).collect())
                        .unwrap_or_default();
                    json!({
                        "item_id": item_id(&p, v),
                        "sku": v["sku"],
                        "options": v["attributes"],
                        "prices": prices,
                        "available": v["availability"]["quantity"],
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "id": p["id"],
        "name": localized(&p["name"]),
        "description": localized(&p["description"]),
        "brand": p["brand"],
        "variants": variants,
    })
}
