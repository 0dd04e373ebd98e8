//! Accounts, profile, addresses and preferences through the gateway, on the
//! in-memory store and on a real redis-server.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::TestMesh;

fn token(session: &Value) -> String {
    session["accessToken"].as_str().unwrap().to_string()
}

/// The log line of the mail notice `notice` to customer `id` (the
/// outbox sends after the answer: waited for).
async fn noticed(notice: &str, id: &str) -> String {
    for _ in 0..100 {
        let logs = crate::logs::captured();
        let line = logs
            .lines()
            .find(|l| l.contains(&format!(r#""notice":"{notice}""#)) && l.contains(id));
        if let Some(line) = line {
            return line.to_string();
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("no {notice} notice for {id}");
}

async fn sign_up_and_log_in(t: TestMesh) {
    let email = format!("Mixed.Case-{}@Example.com", uuid::Uuid::new_v4().simple());
    let accepted = t.sign_up(&email, "correct horse 42").await;
    assert_eq!(accepted["emailAddress"], email.to_lowercase());

    // The same address again (in other case, with another password) gets
    // the very same answer, and changes nothing: the first password holds.
    let again = json!({"emailAddress": email.to_uppercase(), "password": "another pass 1", "firstName": "A", "lastName": "B", "gRecaptchaResponse": "x"});
    let taken = t
        .send(t.json(Method::POST, "/customers", None, &again))
        .await;
    assert_eq!(taken.status, 202, "{}", taken.body);
    assert_eq!(taken.body, accepted, "a taken address is not told apart");
    t.log_in(&email, "another pass 1")
        .await
        .error(401, "INVALID_CREDENTIALS");

    let wrong = t.log_in(&email, "wrong horse 42").await;
    wrong.error(401, "INVALID_CREDENTIALS");
    assert_eq!(wrong.body["type"], "auth_error");
    let unknown = t.log_in("nobody-here@example.com", "wrong horse 42").await;
    unknown.error(401, "INVALID_CREDENTIALS");
    assert_eq!(
        unknown.body, wrong.body,
        "an unknown email answers exactly like a wrong password"
    );

    let session = t.log_in(&email.to_uppercase(), "correct horse 42").await;
    assert_eq!(session.status, 200, "{}", session.body);
    assert_eq!(session.header("cache-control"), Some("private, no-store"));
    let s = &session.body;
    assert_eq!(s["tokenType"], "Bearer");
    assert!(s["expiresIn"].as_i64().unwrap() > 0);
    assert!(s["refreshToken"].as_str().unwrap().len() >= 43);
    assert_eq!(s["customer"]["emailAddress"], email.to_lowercase());
    // The owner was told by mail, once welcomed and once warned (the
    // built-in mailer logs the notice and the customer, not the address).
    let id = s["customer"]["id"].as_str().unwrap();
    for notice in ["welcome", "sign-up-attempt"] {
        let told = noticed(notice, id).await;
        assert!(!told.contains(&email.to_lowercase()), "{told}");
    }
    for field in ["id", "emailAddress", "firstName", "lastName"] {
        assert!(s["customer"][field].is_string(), "{field}");
    }
}
both_backends!(sign_up_and_log_in_flow, sign_up_and_log_in);

async fn profile(t: TestMesh) {
    let session = t.new_session().await;
    let tok = token(&session);
    let id = session["customer"]["id"].as_str().unwrap();
    let me = t.send(t.authed(Method::GET, "/customers/me", &tok)).await;
    assert_eq!(me.status, 200);
    assert_eq!(me.header("cache-control"), Some("private, no-store"));
    assert_eq!(me.body["id"], id);
    assert_eq!(me.body["version"], 1);
    let own = t
        .send(t.authed(Method::GET, &format!("/customers/{id}"), &tok))
        .await;
    assert_eq!(own.body, me.body);
    let other = t
        .send(t.authed(Method::GET, "/customers/someone-else", &tok))
        .await;
    other.error(403, "FORBIDDEN");
    assert_eq!(other.body["type"], "auth_error");
    t.send(t.authed(Method::GET, "/customers/someone-else/addresses", &tok))
        .await
        .error(403, "FORBIDDEN");

    let update = json!({"version": 1, "firstName": "Ada", "lastName": "Lovelace", "phone": "+61 400 000 000", "dateOfBirth": "1990-05-17"});
    let updated = t
        .send(t.json(Method::PUT, "/customers/me", Some(&tok), &update))
        .await;
    assert_eq!(updated.status, 200, "{}", updated.body);
    assert_eq!(
        (
            updated.body["version"].as_i64(),
            updated.body["firstName"].as_str()
        ),
        (Some(2), Some("Ada"))
    );
    assert_eq!(updated.body["dateOfBirth"], "1990-05-17");
    let stale = t
        .send(t.json(Method::PUT, "/customers/me", Some(&tok), &update))
        .await;
    stale.error(409, "CONCURRENT_MODIFICATION");
    assert_eq!(stale.body["type"], "conflict_error");

    let bad = json!({"firstName": "", "phone": "call me", "dateOfBirth": "1990-02-30"});
    let reply = t
        .send(t.json(Method::PUT, "/customers/me", Some(&tok), &bad))
        .await;
    reply.error(422, "VALIDATION_ERROR");
    let fields: Vec<(&str, &str)> = reply.body["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["field"].as_str().unwrap(), e["code"].as_str().unwrap()))
        .collect();
    assert_eq!(
        fields,
        [
            ("firstName", "REQUIRED"),
            ("lastName", "REQUIRED"),
            ("phone", "INVALID_FORMAT"),
            ("dateOfBirth", "INVALID_FORMAT"),
            ("version", "REQUIRED")
        ]
    );
}
both_backends!(profile_reads_and_versioned_updates, profile);

fn address(city: &str, is_default: bool) -> Value {
    json!({"firstName": "Ada", "lastName": "L", "streetName": "George St", "streetNumber": "1", "city": city, "postalCode": "2000", "state": "NSW", "country": "AU", "isDefault": is_default})
}

async fn addresses(t: TestMesh) {
    let tok = token(&t.new_session().await);
    let path = "/customers/me/addresses";
    let home = t
        .send(t.json(Method::POST, path, Some(&tok), &address("Sydney", true)))
        .await;
    assert_eq!(home.status, 201, "{}", home.body);
    let work = t
        .send(t.json(Method::POST, path, Some(&tok), &address("Melbourne", false)))
        .await;
    assert_eq!(work.body["isDefault"], false);
    let holiday = t
        .send(t.json(Method::POST, path, Some(&tok), &address("Hobart", true)))
        .await;
    let defaults = t
        .send(t.authed(Method::GET, &format!("{path}?isDefault=true"), &tok))
        .await;
    assert_eq!(defaults.body["total"], 1, "the default moved");
    assert_eq!(defaults.body["results"][0]["id"], holiday.body["id"]);
    let me = t.send(t.authed(Method::GET, "/customers/me", &tok)).await;
    assert_eq!(me.body["defaultShippingAddressId"], holiday.body["id"]);
    let all = t
        .send(t.authed(Method::GET, &format!("{path}?sort=city:asc"), &tok))
        .await;
    let cities: Vec<&str> = all.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["city"].as_str().unwrap())
        .collect();
    assert_eq!(cities, ["Hobart", "Melbourne", "Sydney"]);

    let id = work.body["id"].as_str().unwrap();
    let one = format!("{path}/{id}");
    let replaced = t
        .send(t.json(Method::PUT, &one, Some(&tok), &address("Geelong", true)))
        .await;
    assert_eq!(
        (
            replaced.body["city"].as_str(),
            replaced.body["version"].as_i64()
        ),
        (Some("Geelong"), Some(2))
    );
    let defaults = t
        .send(t.authed(Method::GET, &format!("{path}?isDefault=true"), &tok))
        .await;
    assert_eq!(defaults.body["results"][0]["id"], id);
    assert_eq!(
        t.send(t.authed(Method::GET, &one, &tok)).await.body["city"],
        "Geelong"
    );

    let deleted = t.send(t.authed(Method::DELETE, &one, &tok)).await;
    assert_eq!(deleted.status, 204);
    t.send(t.authed(Method::GET, &one, &tok))
        .await
        .error(404, "NOT_FOUND");
    t.send(t.authed(Method::DELETE, &one, &tok))
        .await
        .error(404, "NOT_FOUND");
    let other = token(&t.new_session().await);
    let home_id = home.body["id"].as_str().unwrap();
    t.send(t.authed(Method::GET, &format!("{path}/{home_id}"), &other))
        .await
        .error(404, "NOT_FOUND");

    let bad = t
        .send(t.json(
            Method::POST,
            path,
            Some(&tok),
            &json!({"country": "Australia"}),
        ))
        .await;
    bad.error(422, "VALIDATION_ERROR");
    let fields = bad.error_fields();
    assert_eq!(
        fields,
        [
            "firstName",
            "lastName",
            "streetName",
            "city",
            "postalCode",
            "country"
        ]
    );
    t.send(t.authed(Method::GET, &format!("{path}?isDefault=maybe"), &tok))
        .await
        .error(400, "INVALID_QUERY_PARAMETER");
}
both_backends!(address_book_keeps_one_default, addresses);

async fn preferences(t: TestMesh) {
    let tok = token(&t.new_session().await);
    let path = "/customers/me/preferences";
    let defaults = t.send(t.authed(Method::GET, path, &tok)).await;
    assert_eq!(
        defaults.body,
        json!({"preferredLocale": "en-AU", "preferredCurrency": "AUD", "marketingEmails": false})
    );
    let wanted =
        json!({"preferredLocale": "en-NZ", "preferredCurrency": "NZD", "marketingEmails": true});
    assert_eq!(
        t.send(t.json(Method::PUT, path, Some(&tok), &wanted))
            .await
            .body,
        wanted
    );
    assert_eq!(t.send(t.authed(Method::GET, path, &tok)).await.body, wanted);
    let bad = t
        .send(t.json(
            Method::PUT,
            path,
            Some(&tok),
            &json!({"preferredLocale": "english", "preferredCurrency": "GBP"}),
        ))
        .await;
    bad.error(422, "VALIDATION_ERROR");
    assert_eq!(bad.body["errors"].as_array().unwrap().len(), 2);
}
both_backends!(preferences_round_trip, preferences);

async fn concurrent_profile_updates(t: TestMesh) {
    let tok = token(&t.new_session().await);
    let body = json!({"version": 1, "firstName": "Racer", "lastName": "X"});
    let replies = futures::future::join_all(
        (0..16).map(|_| t.send(t.json(Method::PUT, "/customers/me", Some(&tok), &body))),
    )
    .await;
    let wins = replies.iter().filter(|r| r.status == 200).count();
    let conflicts = replies
        .iter()
        .filter(|r| r.status == 409 && r.body["code"] == "CONCURRENT_MODIFICATION")
        .count();
    assert_eq!((wins, conflicts), (1, 15));
    assert_eq!(
        t.send(t.authed(Method::GET, "/customers/me", &tok))
            .await
            .body["version"],
        2
    );
}
both_backends!(
    sixteen_updates_at_one_version_one_wins,
    concurrent_profile_updates
);

async fn concurrent_address_adds(t: TestMesh) {
    let tok = token(&t.new_session().await);
    let replies = futures::future::join_all((0..12).map(|i| {
        t.send(t.json(
            Method::POST,
            "/customers/me/addresses",
            Some(&tok),
            &address(&format!("City {i}"), true),
        ))
    }))
    .await;
    assert!(replies.iter().all(|r| r.status == 201), "every add lands");
    let all = t
        .send(t.authed(Method::GET, "/customers/me/addresses?limit=100", &tok))
        .await;
    assert_eq!(all.body["total"], 12, "no add was lost");
    let defaults = all.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["isDefault"] == true)
        .count();
    assert_eq!(defaults, 1, "still one default");
}
both_backends!(
    concurrent_address_adds_lose_nothing,
    concurrent_address_adds
);

async fn bad_bodies(t: TestMesh) {
    let raw = |ct: &'static str, body: &'static str| {
        t.request(Method::POST, "/auth/login")
            .header("X-Api-Version", "v1.0")
            .header("Content-Type", ct)
            .body(body)
    };
    t.send(raw("text/plain", "{}"))
        .await
        .error(415, "UNSUPPORTED_MEDIA_TYPE");
    t.send(
        t.request(Method::POST, "/customers")
            .header("X-Api-Version", "v1.0")
            .body("{}"),
    )
    .await
    .error(415, "UNSUPPORTED_MEDIA_TYPE");
    t.send(raw("application/json", "{\"emailAddress\":"))
        .await
        .error(400, "MALFORMED_JSON");
    let typed = t
        .send(raw("application/json", "{\"emailAddress\": 42}"))
        .await;
    typed.error(422, "VALIDATION_ERROR");
    assert_eq!(typed.field_error(), ("emailAddress", "INVALID_FORMAT"));
    let missing = t
        .send(t.json(Method::POST, "/auth/login", None, &json!({})))
        .await;
    missing.error(422, "VALIDATION_ERROR");
    assert_eq!(missing.body["errors"].as_array().unwrap().len(), 3);
    let no_captcha = t
        .send(t.json(
            Method::POST,
            "/auth/login",
            None,
            &json!({"emailAddress": "a@b.co", "password": "x", "gRecaptchaResponse": ""}),
        ))
        .await;
    assert_eq!(no_captcha.field_error(), ("gRecaptchaResponse", "REQUIRED"));

    let weak = json!({"emailAddress": "weak@example.com", "password": "password", "firstName": "W", "lastName": "P", "gRecaptchaResponse": "x"});
    let reply = t
        .send(t.json(Method::POST, "/customers", None, &weak))
        .await;
    reply.error(422, "VALIDATION_ERROR");
    assert_eq!(reply.field_error(), ("password", "INVALID_VALUE"));
    let bad_email = json!({"emailAddress": "not-an-email", "password": "correct horse 42", "firstName": "W", "lastName": "P", "gRecaptchaResponse": "x"});
    assert_eq!(
        t.send(t.json(Method::POST, "/customers", None, &bad_email))
            .await
            .field_error(),
        ("emailAddress", "INVALID_FORMAT")
    );

    for (body, field, code) in [
        (json!({"refreshToken": "x"}), "grantType", "REQUIRED"),
        (
            json!({"grantType": "password", "refreshToken": "x"}),
            "grantType",
            "UNSUPPORTED",
        ),
        (
            json!({"grantType": "refresh_token"}),
            "refreshToken",
            "REQUIRED",
        ),
    ] {
        let reply = t
            .send(t.json(Method::POST, "/auth/token", None, &body))
            .await;
        reply.error(422, "VALIDATION_ERROR");
        assert_eq!(reply.field_error(), (field, code));
    }
    t.send(t.json(
        Method::POST,
        "/auth/token",
        None,
        &json!({"grantType": "refresh_token", "refreshToken": "made-up"}),
    ))
    .await
    .error(401, "INVALID_REFRESH_TOKEN");
    t.send(
        t.request(Method::GET, "/customers/me")
            .header("X-Api-Version", "v1.0"),
    )
    .await
    .error(401, "UNAUTHORIZED");
}
both_backends!(bad_bodies_get_exact_errors, bad_bodies);

/// Issue 44 item 13: names refuse direction marks, line and paragraph
/// separators and the byte-order mark anywhere, like the other
/// reordering and hiding characters.
#[tokio::test]
async fn names_refuse_marks_separators_and_byte_order_marks() {
    let t = crate::helpers::spawn_mesh().await;
    let session = t.new_session().await;
    let tok = token(&session);
    for name in [
        "Ada\u{200F}",
        "\u{200E}Ada",
        "Ad\u{2028}a",
        "Ada\u{2029}",
        "\u{FEFF}Ada",
    ] {
        let update = json!({"version": 1, "firstName": name, "lastName": "Lovelace"});
        let reply = t
            .send(t.json(Method::PUT, "/customers/me", Some(&tok), &update))
            .await;
        reply.error(422, "VALIDATION_ERROR");
        assert_eq!(
            reply.field_error(),
            ("firstName", "INVALID_FORMAT"),
            "{name:?}"
        );
    }
}
