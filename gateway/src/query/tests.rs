use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{FilterOperator, SortDirection};

use super::spec::{CATEGORIES, PRODUCTS};
use super::*;

fn err(raw: &str) -> crate::error::ApiError {
    parse(Some(raw), &PRODUCTS).unwrap_err()
}

fn first_error(raw: &str) -> (u16, String, String, String) {
    let e = err(raw);
    let f = &e.errors[0];
    (
        e.status.as_u16(),
        e.code.unwrap().into_owned(),
        f.field.clone(),
        f.code.clone(),
    )
}

#[test]
fn defaults_apply_without_parameters() {
    let q = parse(None, &PRODUCTS).unwrap();
    let page = q.list.page.unwrap();
    assert_eq!((page.limit, page.offset), (20, 0));
    assert!(q.list.sort.is_empty() && q.list.filters.is_empty());
}

#[test]
fn sorts_keep_their_order_and_directions() {
    let q = parse(
        Some("sort=price:desc&sort=name&sort=createdAt:asc,popularity:desc"),
        &PRODUCTS,
    )
    .unwrap();
    let got: Vec<(&str, SortDirection)> = q
        .list
        .sort
        .iter()
        .map(|s| (s.field.as_str(), s.direction()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("price", SortDirection::Desc),
            ("name", SortDirection::Asc),
            ("createdAt", SortDirection::Asc),
            ("popularity", SortDirection::Desc),
        ]
    );
}

#[test]
fn explicit_filters_translate_to_predicates() {
    let q = parse(
        Some("minPrice=1000&maxPrice=5000&inStock=true&status=active&brand=Aoraki&currency=NZD"),
        &PRODUCTS,
    )
    .unwrap();
    let got: Vec<(&str, FilterOperator)> = q
        .list
        .filters
        .iter()
        .map(|f| (f.field.as_str(), f.operator()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("price", FilterOperator::Gte),
            ("price", FilterOperator::Lte),
            ("inStock", FilterOperator::Eq),
            ("status", FilterOperator::Eq),
            ("brand", FilterOperator::Eq),
        ]
    );
    // A parameter the endpoint reads itself (`currency`) is not a filter.
    assert_eq!(q.list.filters.len(), 5);
}

#[test]
fn structured_filters_take_every_operator() {
    for op in ["eq", "ne", "gt", "gte", "lt", "lte"] {
        let q = parse(Some(&format!("filter[price[{op}]]=100")), &PRODUCTS).unwrap();
        assert_eq!(q.list.filters[0].field, "price");
        assert_eq!(
            q.list.filters[0].operator().as_str_name(),
            format!("FILTER_OPERATOR_{}", op.to_uppercase())
        );
    }
    let q = parse(
        Some("filter[createdAt[gte]]=2025-01-01&filter[featured]=true"),
        &PRODUCTS,
    )
    .unwrap();
    let Some(Kind::Timestamp(ts)) = q.list.filters[0].value.as_ref().unwrap().kind.clone() else {
        panic!()
    };
    assert_eq!(ts.seconds, 1_735_689_600);
    assert_eq!(q.list.filters[1].operator(), FilterOperator::Eq);
}

#[test]
fn bad_pages_are_invalid_query_parameters() {
    assert_eq!(
        first_error("limit=0"),
        (
            400,
            "INVALID_QUERY_PARAMETER".into(),
            "limit".into(),
            "OUT_OF_RANGE".into()
        )
    );
    assert_eq!(first_error("limit=101").3, "OUT_OF_RANGE");
    assert_eq!(first_error("limit=ten").3, "INVALID_FORMAT");
    assert_eq!(
        first_error("offset=-1"),
        (
            400,
            "INVALID_QUERY_PARAMETER".into(),
            "offset".into(),
            "OUT_OF_RANGE".into()
        )
    );
    assert_eq!(first_error("offset=1.5").3, "INVALID_FORMAT");
    assert_eq!(
        first_error("offset=99999999999999999999999").3,
        "OUT_OF_RANGE"
    );
}

#[test]
fn bad_sorts_and_filters_have_their_codes() {
    assert_eq!(
        first_error("sort=colour:asc"),
        (
            400,
            "INVALID_SORT_FIELD".into(),
            "sort".into(),
            "UNSUPPORTED".into()
        )
    );
    assert_eq!(
        first_error("sort=price:sideways").1,
        "INVALID_QUERY_PARAMETER"
    );
    assert_eq!(
        first_error("filter[price[gte]]=cheap"),
        (
            400,
            "INVALID_FILTER".into(),
            "filter[price[gte]]".into(),
            "INVALID_VALUE".into()
        )
    );
    assert_eq!(first_error("filter[colour]=red").3, "UNSUPPORTED");
    assert_eq!(first_error("filter[price[between]]=1").3, "UNSUPPORTED");
    assert_eq!(first_error("filter[featured[gt]]=true").3, "UNSUPPORTED");
    assert_eq!(first_error("filter[status]=sold").3, "INVALID_VALUE");
    assert_eq!(
        first_error("filter[createdAt[gte]]=yesterday").3,
        "INVALID_VALUE"
    );
    assert_eq!(first_error("filter[price[gte]").3, "INVALID_FORMAT");
    assert_eq!(
        first_error("inStock=yes"),
        (
            400,
            "INVALID_QUERY_PARAMETER".into(),
            "inStock".into(),
            "INVALID_VALUE".into()
        )
    );
    assert_eq!(first_error("minPrice=-5").3, "OUT_OF_RANGE");
    assert_eq!(first_error("maxPrice=abc").3, "INVALID_VALUE");
    assert_eq!(first_error("status=gone").2, "status");
}

#[test]
fn endpoints_only_accept_their_own_fields() {
    assert!(parse(Some("sort=position:desc"), &CATEGORIES).is_ok());
    assert_eq!(
        parse(Some("sort=price"), &CATEGORIES)
            .unwrap_err()
            .code
            .unwrap(),
        "INVALID_SORT_FIELD"
    );
    assert_eq!(
        parse(Some("filter[price]=1"), &CATEGORIES)
            .unwrap_err()
            .code
            .unwrap(),
        "INVALID_FILTER"
    );
}

/// `filter[attributes.colour]=Navy`: the attributes field, its member
/// `colour` U+001F `Navy`; eq and ne only; a name is required, and only
/// the attributes field takes one.
#[test]
fn attribute_filters_name_their_attribute() {
    let q = parse(
        Some("filter[attributes.colour]=Navy&filter[attributes.size[ne]]=X.L"),
        &PRODUCTS,
    )
    .unwrap();
    let members: Vec<(String, FilterOperator, Option<Kind>)> = (q.list.filters.iter())
        .map(|f| (f.field.clone(), f.operator(), f.value.clone().unwrap().kind))
        .collect();
    assert_eq!(
        members,
        [
            (
                "attributes".to_string(),
                FilterOperator::Eq,
                Some(Kind::Text("colour\u{1f}Navy".into()))
            ),
            (
                "attributes".to_string(),
                FilterOperator::Ne,
                Some(Kind::Text("size\u{1f}X.L".into()))
            ),
        ]
    );
    assert_eq!(
        first_error("filter[attributes.colour[gt]]=Navy"),
        (
            400,
            "INVALID_FILTER".into(),
            "filter[attributes.colour[gt]]".into(),
            "UNSUPPORTED".into()
        )
    );
    assert_eq!(first_error("filter[attributes]=Navy").3, "UNSUPPORTED");
    assert_eq!(first_error("filter[attributes.]=Navy").3, "UNSUPPORTED");
    assert_eq!(first_error("filter[brand.colour]=Navy").3, "UNSUPPORTED");
    assert_eq!(first_error("filter[attributes.colour]=").3, "INVALID_VALUE");
    let e = err("filter[attributes]=Navy");
    assert!(
        e.message.contains("attributes.<attribute>"),
        "{}",
        e.message
    );
    // The parameter is echoed once (the request's own limit bounds it),
    // the field it names cut to 64 characters.
    let e = err(&format!("filter[{}]=1", "x".repeat(900)));
    assert!(e.message.len() < 900 + 300, "{}", e.message.len());
    // Categories take no attribute.
    assert!(parse(Some("filter[attributes.colour]=Navy"), &CATEGORIES).is_err());
}
