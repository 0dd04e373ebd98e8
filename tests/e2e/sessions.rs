//! A customer's sessions: listed with their client and which is current,
//! ended one by one, and all but the current one ended by a password
//! change; their tokens answer 401 at once.

use reqwest::Method;
use serde_json::{Value, json};

use crate::both_backends;
use crate::helpers::TestMesh;

const PASSWORD: &str = "correct horse 42";
const NEW_PASSWORD: &str = "a much better passphrase";

async fn log_in_with(t: &TestMesh, email: &str, password: &str, agent: &str) -> Value {
    let body = json!({"emailAddress": email, "password": password, "gRecaptchaResponse": "dev-ok"});
    let request = t
        .json(Method::POST, "/auth/login", None, &body)
        .header("User-Agent", agent);
    let reply = t.send(request).await;
    assert_eq!(reply.status, 200, "login: {}", reply.body);
    reply.body
}

fn token(session: &Value) -> &str {
    session["accessToken"].as_str().unwrap()
}

async fn me(t: &TestMesh, session: &Value) -> u16 {
    t.send(t.authed(Method::GET, "/customers/me", token(session)))
        .await
        .status
        .as_u16()
}

async fn refreshed(t: &TestMesh, session: &Value) -> u16 {
    let body = json!({"grantType": "refresh_token", "refreshToken": session["refreshToken"]});
    t.send(t.json(Method::POST, "/auth/token", None, &body))
        .await
        .status
        .as_u16()
}

async fn listed(t: &TestMesh, session: &Value) -> Vec<Value> {
    let reply = t
        .send(t.authed(Method::GET, "/customers/me/sessions", token(session)))
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["total"], reply.body["count"]);
    reply.body["results"].as_array().unwrap().clone()
}

async fn end(t: &TestMesh, session: &Value, id: &str) -> crate::helpers::Reply {
    let path = format!("/customers/me/sessions/{id}");
    t.send(t.authed(Method::DELETE, &path, token(session)))
        .await
}

async fn change_password(
    t: &TestMesh,
    session: &Value,
    current: &str,
    new: &str,
) -> crate::helpers::Reply {
    let body = json!({"currentPassword": current, "newPassword": new});
    t.send(t.json(
        Method::PUT,
        "/customers/me/password",
        Some(token(session)),
        &body,
    ))
    .await
}

async fn sessions_and_password(t: TestMesh) {
    let email = format!("sessions-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, PASSWORD).await;
    let phone = log_in_with(&t, &email, PASSWORD, "Shop/1.0 (phone)").await;
    let laptop = log_in_with(&t, &email, PASSWORD, "Mozilla/5.0 (laptop)").await;
    let tablet = log_in_with(&t, &email, PASSWORD, "Shop/1.0 (tablet)").await;
    // A refresh is a use of its session.
    assert_eq!(refreshed(&t, &laptop).await, 200);

    let sessions = listed(&t, &laptop).await;
    let agents: Vec<&str> = sessions
        .iter()
        .map(|s| s["userAgent"].as_str().unwrap())
        .collect();
    assert_eq!(
        agents,
        [
            "Shop/1.0 (tablet)",
            "Mozilla/5.0 (laptop)",
            "Shop/1.0 (phone)"
        ]
    );
    let current: Vec<&str> = sessions
        .iter()
        .filter(|s| s["current"] == true)
        .map(|s| s["userAgent"].as_str().unwrap())
        .collect();
    assert_eq!(current, ["Mozilla/5.0 (laptop)"]);
    for s in &sessions {
        assert!(s["createdAt"].as_str().unwrap().ends_with('Z'), "{s}");
        let used_since = s["lastUsedAt"] != s["createdAt"];
        assert_eq!(
            used_since,
            s["current"] == true,
            "only the laptop refreshed: {s}"
        );
    }
    let id_of = |agent: &str| {
        sessions.iter().find(|s| s["userAgent"] == agent).unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };

    // Ended from the laptop: the phone's tokens answer 401 at once.
    let phone_id = id_of("Shop/1.0 (phone)");
    assert_eq!(end(&t, &laptop, &phone_id).await.status, 204);
    assert_eq!(me(&t, &phone).await, 401);
    assert_eq!(refreshed(&t, &phone).await, 401);
    end(&t, &laptop, &phone_id).await.error(404, "NOT_FOUND");
    assert_eq!(listed(&t, &laptop).await.len(), 2);
    // Nobody ends another customer's session.
    let stranger = t.new_session().await;
    end(&t, &stranger, &id_of("Shop/1.0 (tablet)"))
        .await
        .error(404, "NOT_FOUND");
    assert_eq!(me(&t, &tablet).await, 200);

    // A password change checks the current one and the policy first.
    let wrong = change_password(&t, &laptop, "not the password", NEW_PASSWORD).await;
    wrong.error(422, "VALIDATION_ERROR");
    assert_eq!(wrong.field_error(), ("currentPassword", "INVALID_VALUE"));
    let weak = change_password(&t, &laptop, PASSWORD, "short").await;
    assert_eq!(weak.field_error(), ("newPassword", "INVALID_VALUE"));
    let missing = change_password(&t, &laptop, "", NEW_PASSWORD).await;
    assert_eq!(missing.field_error(), ("currentPassword", "REQUIRED"));
    assert_eq!(me(&t, &tablet).await, 200, "nothing changed yet");

    // Then ends every other session at once; this one stays.
    let changed = change_password(&t, &laptop, PASSWORD, NEW_PASSWORD).await;
    assert_eq!(changed.status, 204, "{}", changed.body);
    assert_eq!(me(&t, &tablet).await, 401);
    assert_eq!(refreshed(&t, &tablet).await, 401);
    assert_eq!(me(&t, &laptop).await, 200);
    let left = listed(&t, &laptop).await;
    assert_eq!(left.len(), 1);
    assert_eq!(left[0]["current"], true);
    assert_eq!(t.log_in(&email, PASSWORD).await.status, 401);
    assert_eq!(t.log_in(&email, NEW_PASSWORD).await.status, 200);
}
both_backends!(
    sessions_are_listed_ended_and_ended_by_a_password_change,
    sessions_and_password
);

/// Another customer's id in the path is 403, as for every `/customers/{id}` route.
#[tokio::test]
async fn another_customers_sessions_are_forbidden() {
    let t = crate::helpers::spawn_mesh().await;
    let session = t.new_session().await;
    let reply = t
        .send(t.authed(
            Method::GET,
            "/customers/someone-else/sessions",
            token(&session),
        ))
        .await;
    reply.error(403, "FORBIDDEN");
    let body = json!({"currentPassword": PASSWORD, "newPassword": NEW_PASSWORD});
    let reply = t
        .send(t.json(
            Method::PUT,
            "/customers/someone-else/password",
            Some(token(&session)),
            &body,
        ))
        .await;
    reply.error(403, "FORBIDDEN");
    let reply = t
        .send(t.authed(Method::GET, "/customers/me/sessions", "not a token"))
        .await;
    assert_eq!(reply.status, 401);
}

/// Issue 44 item 6: a password change is no way around the login's
/// lockout. A wrong current password counts as a failed login of the
/// account, and a session gets a few attempts.
#[tokio::test]
async fn a_password_change_is_no_password_oracle() {
    let t = crate::helpers::spawn_mesh_with(&[
        ("RATE_LIMIT_LOGIN_EMAIL", "3/1h"),
        ("RATE_LIMIT_PASSWORD_CHANGE", "5/15m"),
    ])
    .await;
    let email = format!("oracle-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&email, PASSWORD).await;
    let session = log_in_with(&t, &email, PASSWORD, "laptop").await;
    for guess in ["guess one", "guess two", "guess three"] {
        let wrong = change_password(&t, &session, guess, NEW_PASSWORD).await;
        assert_eq!(wrong.field_error(), ("currentPassword", "INVALID_VALUE"));
    }
    // The account's failed checks from this network are used up: the
    // right password waits too, here and at login.
    let locked = change_password(&t, &session, PASSWORD, NEW_PASSWORD).await;
    locked.error(429, "RATE_LIMIT_EXCEEDED");
    assert!(locked.header("retry-after").is_some());
    let body = json!({"emailAddress": email, "password": PASSWORD, "gRecaptchaResponse": "dev-ok"});
    let login = t
        .send(t.json(Method::POST, "/auth/login", None, &body))
        .await;
    login.error(429, "RATE_LIMIT_EXCEEDED");

    // Another account: five attempts a session, then 429 whatever they say.
    let other = format!("budget-{}@example.com", uuid::Uuid::new_v4().simple());
    t.sign_up(&other, PASSWORD).await;
    let session = log_in_with(&t, &other, PASSWORD, "tablet").await;
    for _ in 0..5 {
        let weak = change_password(&t, &session, PASSWORD, "short").await;
        assert_eq!(weak.field_error(), ("newPassword", "INVALID_VALUE"));
    }
    change_password(&t, &session, PASSWORD, NEW_PASSWORD)
        .await
        .error(429, "RATE_LIMIT_EXCEEDED");
}
