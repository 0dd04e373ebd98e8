//! Bad paging, sorting and filtering through HTTP: exact statuses and bodies.

use crate::helpers::spawn_mesh;

#[tokio::test]
async fn bad_queries_get_their_exact_codes() {
    let t = spawn_mesh().await;
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "/products?limit=0",
            "INVALID_QUERY_PARAMETER",
            "limit",
            "OUT_OF_RANGE",
        ),
        (
            "/products?limit=101",
            "INVALID_QUERY_PARAMETER",
            "limit",
            "OUT_OF_RANGE",
        ),
        (
            "/products?limit=abc",
            "INVALID_QUERY_PARAMETER",
            "limit",
            "INVALID_FORMAT",
        ),
        (
            "/products?offset=-1",
            "INVALID_QUERY_PARAMETER",
            "offset",
            "OUT_OF_RANGE",
        ),
        (
            "/products?offset=x",
            "INVALID_QUERY_PARAMETER",
            "offset",
            "INVALID_FORMAT",
        ),
        (
            "/products?inStock=maybe",
            "INVALID_QUERY_PARAMETER",
            "inStock",
            "INVALID_VALUE",
        ),
        (
            "/products?featured=1",
            "INVALID_QUERY_PARAMETER",
            "featured",
            "INVALID_VALUE",
        ),
        (
            "/products?status=sold",
            "INVALID_QUERY_PARAMETER",
            "status",
            "INVALID_VALUE",
        ),
        (
            "/products?minPrice=ten",
            "INVALID_QUERY_PARAMETER",
            "minPrice",
            "INVALID_VALUE",
        ),
        (
            "/products?maxPrice=-1",
            "INVALID_QUERY_PARAMETER",
            "maxPrice",
            "OUT_OF_RANGE",
        ),
        (
            "/products?currency=GBP",
            "INVALID_QUERY_PARAMETER",
            "currency",
            "INVALID_VALUE",
        ),
        (
            "/products?sort=colour:asc",
            "INVALID_SORT_FIELD",
            "sort",
            "UNSUPPORTED",
        ),
        (
            "/products?sort=price:up",
            "INVALID_QUERY_PARAMETER",
            "sort",
            "INVALID_VALUE",
        ),
        (
            "/categories?sort=price:asc",
            "INVALID_SORT_FIELD",
            "sort",
            "UNSUPPORTED",
        ),
        (
            "/products?filter[price[gte]]=cheap",
            "INVALID_FILTER",
            "filter[price[gte]]",
            "INVALID_VALUE",
        ),
        (
            "/products?filter[createdAt[gte]]=last-week",
            "INVALID_FILTER",
            "filter[createdAt[gte]]",
            "INVALID_VALUE",
        ),
        (
            "/products?filter[colour]=red",
            "INVALID_FILTER",
            "filter[colour]",
            "UNSUPPORTED",
        ),
        (
            "/products?filter[price[about]]=5",
            "INVALID_FILTER",
            "filter[price[about]]",
            "UNSUPPORTED",
        ),
        (
            "/products?filter[inStock[gt]]=true",
            "INVALID_FILTER",
            "filter[inStock[gt]]",
            "UNSUPPORTED",
        ),
        (
            "/products?filter[featured]=yes",
            "INVALID_FILTER",
            "filter[featured]",
            "INVALID_VALUE",
        ),
        (
            "/products?filter[price[gte]=5",
            "INVALID_FILTER",
            "filter[price[gte]",
            "INVALID_FORMAT",
        ),
        (
            "/products/p/variants?limit=500",
            "INVALID_QUERY_PARAMETER",
            "limit",
            "OUT_OF_RANGE",
        ),
    ];
    for (path, code, field, field_code) in cases {
        let path = path.replace('[', "%5B").replace(']', "%5D");
        let reply = t.fetch(&path).await;
        let body = reply.error(400, code);
        assert_eq!(body["type"], "validation_error", "{path}");
        assert_eq!(reply.field_error(), (*field, *field_code), "{path}: {body}");
    }
}

/// A query's work is bounded: at most 4 sort keys and 16 filters; beyond
/// that a 400 in the spec's shape before any record is touched, on
/// listings and searches alike. A field sorted by again is redundant (it
/// can never break a tie the first mention left): the first mention
/// decides, later ones are ignored.
#[tokio::test]
async fn work_per_request_is_bounded() {
    let t = spawn_mesh().await;
    let many_sorts = vec!["sort=price:asc"; 300].join("&");
    let five_sorts =
        "sort=name:asc&sort=price:desc&sort=brand:asc&sort=createdAt:asc&sort=popularity:asc";
    let ops = ["eq", "ne", "gt", "gte", "lt", "lte"];
    let filters: Vec<String> = ["price", "popularity", "name"]
        .iter()
        .flat_map(|f| {
            ops.iter()
                .map(move |op| format!("filter%5B{f}%5B{op}%5D%5D=1"))
        })
        .take(17)
        .collect();
    let cases = [
        (
            format!("/products?{many_sorts}"),
            "INVALID_SORT_FIELD",
            "sort",
        ),
        (
            format!("/products?{five_sorts}"),
            "INVALID_SORT_FIELD",
            "sort",
        ),
        (
            format!("/search?query=shirt&{five_sorts}"),
            "INVALID_SORT_FIELD",
            "sort",
        ),
        (
            format!("/products?{}", filters.join("&")),
            "INVALID_FILTER",
            "filter",
        ),
        (
            format!("/search?query=shirt&{}", filters.join("&")),
            "INVALID_FILTER",
            "filter",
        ),
        (
            format!("/search?query={}", ["shirt"; 11].join("+")),
            "INVALID_QUERY_PARAMETER",
            "query",
        ),
    ];
    for (path, code, field) in cases {
        let reply = t.fetch(&path).await;
        let body = reply.error(400, code);
        assert_eq!(body["type"], "validation_error", "{path}");
        assert_eq!(
            reply.field_error(),
            (field, "OUT_OF_RANGE"),
            "{path}: {body}"
        );
    }
    // Four distinct keys and sixteen filters are fine.
    let four = "sort=name:asc&sort=price:desc&sort=brand:asc&sort=createdAt:asc";
    let sixteen = filters[..16].join("&");
    let reply = t.fetch(&format!("/products?{four}&{sixteen}")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    for (twice, once) in [
        ("sort=price:asc,price:desc", "sort=price:asc"),
        (
            "sort=name:desc&sort=price&sort=name",
            "sort=name:desc&sort=price",
        ),
    ] {
        let (twice, once) = (
            t.ok(&format!("/products?limit=50&{twice}")).await,
            t.ok(&format!("/products?limit=50&{once}")).await,
        );
        assert_eq!(twice["results"], once["results"]);
    }
    let searched = t
        .fetch("/search?query=shirt&sort=price&sort=price:desc")
        .await;
    assert_eq!(searched.status, 200, "{}", searched.body);
    // Explicit filters come on top of the 16 filter[...] ones (found by the
    // contract run: every explicit filter plus every documented field).
    let explicit =
        "inStock=true&featured=false&status=active&minPrice=0&maxPrice=9&category=c&brand=b";
    let every_field = "filter%5Bname%5D=x&filter%5Bprice%5D=1&filter%5BcreatedAt%5D=2026-01-01\
        &filter%5Bpopularity%5D=1&filter%5Bfeatured%5D=true&filter%5Bstatus%5D=active\
        &filter%5BinStock%5D=true&filter%5Bcategory%5D=c&filter%5Bbrand%5D=b&filter%5Bkey%5D=k";
    for path in ["/products?", "/search?query=shirt&"] {
        let reply = t.fetch(&format!("{path}{explicit}&{every_field}")).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
    }
    let ten_words = ["blue"; 10].join("+");
    let reply = t.fetch(&format!("/search?query={ten_words}")).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
}
