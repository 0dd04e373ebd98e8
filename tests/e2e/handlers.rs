//! Gateway handlers against fake downstreams that record what they are asked
//! ([`crate::fake`]): the translation of a REST request into the gRPC
//! message and of the answer or refusal back, checked in milliseconds
//! without a whole mesh (over real HTTP and real gRPC).

use std::time::Duration;

use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use reqwest::Method;
use storefront_domain::customer_token::{CustomerClaims, low_s};
use storefront_gateway::GatewayConfig;
use storefront_gateway::config::dev_identity_url;
use storefront_platform::env::EnvReader;
use storefront_platform::error::{ErrorKind, FieldViolation, ServiceError};
use storefront_platform::identity::dev_issuer::{DevIssuer, JWKS_PATH};
use storefront_platform::store::Store;
use storefront_proto::cart::v1::{AddLineItemRequest, Cart};
use storefront_proto::catalog::v1::{ListProductsRequest, ListProductsResponse};
use storefront_proto::common::v1::filter_value::Kind;
use storefront_proto::common::v1::{FilterOperator, PageInfo, SortDirection};
use storefront_proto::content::v1::{Document, GetPageRequest};
use storefront_proto::customers::v1::{GetSigningKeysRequest, SigningKey, SigningKeys};
use storefront_proto::orders::v1::{ListOrdersRequest, ListOrdersResponse};
use storefront_proto::search::v1::{SearchRequest, SearchResponse};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::Status;

use crate::fake::Fake;
use crate::helpers::Reply;

// The lone gateway these tests run against: no mesh, only an issuer.

/// A dev identity issuer of its own: all a lone gateway and catalog need
/// of a mesh. Stops when dropped.
pub(crate) struct Issuer {
    pub(crate) url: String,
    _stop: tokio_util::sync::DropGuard,
}

pub(crate) async fn issuer() -> Issuer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let stop = CancellationToken::new();
    let dev = DevIssuer::generate(Duration::from_secs(3600)).unwrap();
    tokio::spawn(dev.serve(listener, stop.clone()));
    Issuer {
        url,
        _stop: stop.drop_guard(),
    }
}

/// A gateway alone, identity from `issuer_url`, with a short deadline;
/// `extra` on top of its environment (where its fakes are).
pub(crate) async fn gateway_with(
    issuer_url: &str,
    extra: &[(&str, &str)],
) -> (String, CancellationToken) {
    let mut env = EnvReader::from_pairs([
        ("IDENTITY_TOKEN_URL", dev_identity_url(issuer_url)),
        ("IDENTITY_JWKS_URL", format!("{issuer_url}{JWKS_PATH}")),
        ("GRPC_TIMEOUT_MS", "400".to_string()),
    ]);
    for (k, v) in extra {
        env.set(k, *v);
    }
    let config = GatewayConfig::from_env(&env).unwrap();
    let public = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let internal = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", public.local_addr().unwrap());
    let stop = CancellationToken::new();
    tokio::spawn(storefront_gateway::serve(
        config,
        Store::memory(),
        public,
        internal,
        stop.clone(),
    ));
    (base, stop)
}

pub(crate) async fn send(request: reqwest::RequestBuilder) -> Reply {
    let response = request.send().await.unwrap();
    let status = response.status();
    let headers = response.headers().clone();
    let body = serde_json::from_slice(&response.bytes().await.unwrap()).unwrap();
    Reply {
        status,
        headers,
        body,
    }
}

/// A customers service that publishes one signing key, and tokens signed
/// with it as the real one signs them (ES256, `kid`, the gateway's
/// default issuer and audience).
struct Customers {
    url: String,
    key: EncodingKey,
}

const CUSTOMER: &str = "c-1";

impl Customers {
    async fn start() -> Self {
        use aws_lc_rs::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair};
        let pair = EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING).unwrap();
        let key = EncodingKey::from_ec_der(pair.to_pkcs8v1().unwrap().as_ref());
        let AlgorithmParameters::EllipticCurve(ec) = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .unwrap()
            .algorithm
        else {
            panic!("an EC key")
        };
        let published = SigningKeys {
            keys: vec![SigningKey {
                kid: "k1".into(),
                x: ec.x,
                y: ec.y,
            }],
            issuer: "storefront-customers".into(),
            audience: "storefront-bff".into(),
        };
        let (fake, _) = Fake::default().answer(
            "/storefront.customers.v1.CustomerService/GetSigningKeys",
            move |_: &GetSigningKeysRequest| Ok(published.clone()),
        );
        Self {
            url: fake.serve().await,
            key,
        }
    }

    fn token(&self, customer: &str) -> String {
        let now = jsonwebtoken::get_current_timestamp();
        let claims = CustomerClaims {
            iss: "storefront-customers".into(),
            aud: "storefront-bff".into(),
            sub: customer.into(),
            jti: uuid::Uuid::new_v4().to_string(),
            sid: "s-1".into(),
            iat: now,
            exp: now + 600,
            scope: None,
        };
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some("k1".into());
        low_s::normalise(jsonwebtoken::encode(&header, &claims, &self.key).unwrap())
    }
}

pub(crate) fn request(method: Method, url: String) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .request(method, url)
        .header("X-Api-Version", "v1.0")
}

#[tokio::test]
async fn a_product_listing_query_becomes_one_list_query() {
    let issuer = issuer().await;
    let (fake, listings) = Fake::default().answer(
        "/storefront.catalog.v1.CatalogService/ListProducts",
        |asked: &ListProductsRequest| {
            let page = asked
                .query
                .as_ref()
                .and_then(|q| q.page)
                .unwrap_or_default();
            Ok(ListProductsResponse {
                page: Some(PageInfo {
                    limit: page.limit,
                    offset: page.offset,
                    count: 0,
                    total: 0,
                }),
                ..Default::default()
            })
        },
    );
    let catalog = fake.serve().await;
    let (base, stop) = gateway_with(&issuer.url, &[("CATALOG_URL", &catalog)]).await;
    let get = |query: &str| send(request(Method::GET, format!("{base}/products?{query}")));
    let reply = get(
        "brand=Acme&inStock=true&sort=price:desc&sort=name&limit=5&offset=10\
        &currency=NZD&filter[popularity[gte]]=3",
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        (&reply.body["limit"], &reply.body["offset"]),
        (&5.into(), &10.into())
    );

    let asked = listings.one();
    assert_eq!(asked.currency_code, "NZD");
    let query = asked.query.unwrap();
    let page = query.page.unwrap();
    assert_eq!((page.limit, page.offset), (5, 10));
    let sort: Vec<(&str, SortDirection)> = query
        .sort
        .iter()
        .map(|s| (s.field.as_str(), s.direction()))
        .collect();
    assert_eq!(
        sort,
        [("price", SortDirection::Desc), ("name", SortDirection::Asc)]
    );
    let mut filters: Vec<(&str, FilterOperator, Option<Kind>)> = query
        .filters
        .iter()
        .map(|f| {
            (
                f.field.as_str(),
                f.operator(),
                f.value.clone().and_then(|v| v.kind),
            )
        })
        .collect();
    filters.sort_by_key(|f| f.0);
    assert_eq!(
        filters,
        [
            ("brand", FilterOperator::Eq, Some(Kind::Text("Acme".into()))),
            ("inStock", FilterOperator::Eq, Some(Kind::Boolean(true))),
            ("popularity", FilterOperator::Gte, Some(Kind::Integer(3))),
        ]
    );

    // A query the gateway refuses never reaches the catalog.
    get("sort=colour").await.error(400, "INVALID_SORT_FIELD");
    assert_eq!(listings.all().len(), 1);
    stop.cancel();
}

#[tokio::test]
async fn a_search_carries_its_text_locale_currency_and_filters() {
    let issuer = issuer().await;
    let (fake, searches) = Fake::default().answer(
        "/storefront.search.v1.SearchService/Search",
        |_: &SearchRequest| {
            Ok(SearchResponse {
                page: Some(PageInfo::default()),
                ..Default::default()
            })
        },
    );
    let url = fake.serve().await;
    let (base, stop) = gateway_with(&issuer.url, &[("SEARCH_URL", &url)]).await;
    let reply = send(request(
        Method::GET,
        format!(
            "{base}/search?query=%20red%20shoes%20&locale=de-DE&currency=NZD&brand=Acme&limit=3"
        ),
    ))
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let asked = searches.one();
    assert_eq!(
        (
            asked.text.as_str(),
            asked.locale.as_str(),
            asked.currency_code.as_str()
        ),
        ("red shoes", "de-DE", "NZD"),
        "the text trimmed, the rest as sent"
    );
    let query = asked.query.unwrap();
    assert_eq!(query.page.map(|p| p.limit), Some(3));
    assert!(query.sort.is_empty(), "no sort: ranked by relevance");
    let filters: Vec<(&str, Option<Kind>)> = query
        .filters
        .iter()
        .map(|f| (f.field.as_str(), f.value.clone().and_then(|v| v.kind)))
        .collect();
    assert_eq!(filters, [("brand", Some(Kind::Text("Acme".into())))]);
    stop.cancel();
}

/// A page's slug and locale go down; the locale served comes back as
/// Content-Language; a missing page is the spec's 404; a read is retried
/// while the service is unreachable, and then answered 503.
#[tokio::test]
async fn a_content_page_asks_for_its_locale_and_says_the_one_served() {
    let issuer = issuer().await;
    let (fake, pages) = Fake::default().answer(
        "/storefront.content.v1.ContentService/GetPage",
        |asked: &GetPageRequest| match asked.slug.as_str() {
            "about" => Ok(Document {
                key: "about".into(),
                locale: "en-AU".into(),
                title: "About us".into(),
                sections: Vec::new(),
            }),
            "down" => Err(Status::unavailable("restarting")),
            slug => Err(ServiceError::not_found("page", slug).into()),
        },
    );
    let url = fake.serve().await;
    let (base, stop) = gateway_with(&issuer.url, &[("CONTENT_URL", &url)]).await;
    let page = |slug: &str| {
        send(request(
            Method::GET,
            format!("{base}/content/pages/{slug}?locale=de-DE"),
        ))
    };

    let about = page("about").await;
    assert_eq!(about.status, 200, "{}", about.body);
    assert_eq!(about.header("content-language"), Some("en-AU"));
    assert_eq!(about.body["title"], "About us");
    let asked = pages.one();
    assert_eq!(
        (asked.slug.as_str(), asked.locale.as_str()),
        ("about", "de-DE")
    );

    page("imprint").await.error(404, "NOT_FOUND");
    assert_eq!(pages.all().len(), 2, "a refusal is not retried");
    page("down").await.error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(
        pages.all().len(),
        2 + 4,
        "an unreachable read: three retries"
    );
    stop.cancel();
}

/// The caller's orders: the customer comes from the verified token, never
/// from the request; another customer's id is refused before any call; the
/// v1 path carries its deprecation headers.
#[tokio::test]
async fn orders_are_listed_for_the_token_s_customer_only() {
    let issuer = issuer().await;
    let customers = Customers::start().await;
    let (fake, listed) = Fake::default().answer(
        "/storefront.orders.v1.OrderService/ListOrders",
        |_: &ListOrdersRequest| {
            Ok(ListOrdersResponse {
                page: Some(PageInfo::default()),
                orders: Vec::new(),
            })
        },
    );
    let orders = fake.serve().await;
    let (base, stop) = gateway_with(
        &issuer.url,
        &[("ORDERS_URL", &orders), ("CUSTOMERS_URL", &customers.url)],
    )
    .await;
    let token = customers.token(CUSTOMER);
    let get = |path: &str| {
        send(request(Method::GET, format!("{base}{path}")).header("X-BFF-Token", &token))
    };

    let reply = get("/orders/v1?sort=totalAmount:asc&filter[status]=CANCELLED&limit=2").await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(
        reply.header("sunset"),
        Some("Sat, 01 May 2027 00:00:00 GMT")
    );
    assert!(reply.header("deprecation").is_some());
    let asked = listed.one();
    assert_eq!(asked.customer_id, CUSTOMER);
    let query = asked.query.unwrap();
    assert_eq!(query.page.map(|p| p.limit), Some(2));
    let sort: Vec<(&str, SortDirection)> = query
        .sort
        .iter()
        .map(|s| (s.field.as_str(), s.direction()))
        .collect();
    assert_eq!(sort, [("totalAmount", SortDirection::Asc)]);
    let filters: Vec<(&str, FilterOperator)> = query
        .filters
        .iter()
        .map(|f| (f.field.as_str(), f.operator()))
        .collect();
    assert_eq!(filters, [("status", FilterOperator::Eq)]);

    let mine = get(&format!("/customers/{CUSTOMER}/orders")).await;
    assert_eq!(mine.status, 200, "{}", mine.body);
    assert!(mine.header("sunset").is_none(), "unversioned: v2");
    get("/customers/c-2/orders").await.error(403, "FORBIDDEN");
    let anonymous = send(request(Method::GET, format!("{base}/orders"))).await;
    assert_eq!(anonymous.status, 401, "{}", anonymous.body);
    let calls = listed.all();
    assert_eq!(calls.len(), 2, "refused requests call nothing");
    assert!(calls.iter().all(|c| c.customer_id == CUSTOMER));
    stop.cancel();
}

/// A line item goes down as sent, with the token's customer; the cart
/// service's refusals come back in the spec's shape, field errors
/// included; a write is sent once, even to an unreachable service.
#[tokio::test]
async fn a_line_item_is_sent_once_and_refusals_keep_their_fields() {
    let issuer = issuer().await;
    let customers = Customers::start().await;
    let (fake, added) = Fake::default().answer(
        "/storefront.cart.v1.CartService/AddLineItem",
        |asked: &AddLineItemRequest| -> Result<Cart, Status> {
            Err(match asked.quantity {
                1 => Status::unavailable("restarting"),
                2 => {
                    ServiceError::new(ErrorKind::Conflict, "CART_ORDERED", "already ordered").into()
                }
                _ => ServiceError::new(
                    ErrorKind::Validation,
                    "VALIDATION_ERROR",
                    "not enough stock",
                )
                .with_violation(FieldViolation::new(
                    "quantity",
                    "OUT_OF_STOCK",
                    "only 2 left",
                ))
                .into(),
            })
        },
    );
    let cart = fake.serve().await;
    let (base, stop) = gateway_with(
        &issuer.url,
        &[("CART_URL", &cart), ("CUSTOMERS_URL", &customers.url)],
    )
    .await;
    let token = customers.token(CUSTOMER);
    let add = |body: serde_json::Value| {
        send(
            request(Method::POST, format!("{base}/carts/cart-1/line-items"))
                .header("X-BFF-Token", &token)
                .json(&body),
        )
    };
    let line = |quantity: u32| serde_json::json!({"productId": "p-1", "variantId": 2, "quantity": quantity});

    let refused = add(line(5)).await;
    refused.error(422, "VALIDATION_ERROR");
    assert_eq!(refused.field_error(), ("quantity", "OUT_OF_STOCK"));
    let asked = added.one();
    assert_eq!(
        (
            asked.customer_id.as_str(),
            asked.cart_id.as_str(),
            asked.product_id.as_str(),
            asked.variant_id,
            asked.quantity
        ),
        (CUSTOMER, "cart-1", "p-1", 2, 5)
    );
    add(line(2)).await.error(409, "CART_ORDERED");
    add(line(1)).await.error(503, "SERVICE_UNAVAILABLE");
    assert_eq!(added.all().len(), 3, "each write sent once");

    let incomplete = add(serde_json::json!({"variantId": 2, "quantity": 1})).await;
    incomplete.error(422, "VALIDATION_ERROR");
    assert_eq!(incomplete.field_error(), ("productId", "REQUIRED"));
    assert_eq!(added.all().len(), 3, "refused at the edge");
    stop.cancel();
}
