//! CMS content: typed sections, locale fallback with Content-Language,
//! banner schedules, 404s, and reloading edited files without a restart.

use reqwest::Method;

use crate::helpers::{Backend, spawn_mesh, spawn_mesh_on};

#[tokio::test]
async fn documents_fall_back_along_the_locale_chain() {
    let t = spawn_mesh().await;
    let footer = t.fetch("/content/footer").await;
    assert_eq!(footer.status, 200);
    assert_eq!(
        (
            footer.body["locale"].as_str(),
            footer.header("content-language")
        ),
        (Some("en-AU"), Some("en-AU"))
    );
    let sections = footer.body["sections"].as_array().unwrap();
    assert_eq!(sections[0]["type"], "links");
    assert!(sections[0]["links"][0]["url"].is_string());
    assert_eq!(sections.last().unwrap()["type"], "text");

    for (path, served) in [
        ("/content/footer?locale=en-NZ", "en-AU"),
        ("/content/footer?locale=de-DE", "de-DE"),
        ("/content/footer?locale=fr-FR", "en-AU"),
        ("/content/pages/shipping?locale=en-NZ", "en-NZ"),
        ("/content/pages/returns?locale=en-NZ", "en-AU"),
        ("/content/pages/about?locale=de-AT", "de-DE"),
    ] {
        let reply = t.fetch(path).await;
        assert_eq!(reply.status, 200, "{path}");
        assert_eq!(reply.body["locale"], served, "{path}");
        assert_eq!(reply.header("content-language"), Some(served), "{path}");
    }
    let about = t.ok("/content/pages/about").await;
    let image = about["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["type"] == "image")
        .unwrap();
    assert!(
        image["alt"].as_str().unwrap().len() > 5,
        "images carry alt text"
    );

    for path in [
        "/content/pages/nowhere",
        "/content/pages/..%2Fetc",
        "/content/pages/ABOUT",
    ] {
        let reply = t.fetch(path).await;
        reply.error(404, "NOT_FOUND");
        assert_eq!(reply.body["type"], "not_found_error");
    }
    for locale in ["en_AU", "english", "EN-au", "en-AUS"] {
        let reply = t.fetch(&format!("/content/footer?locale={locale}")).await;
        reply.error(400, "INVALID_QUERY_PARAMETER");
        assert_eq!(reply.field_error(), ("locale", "INVALID_FORMAT"));
    }
}

#[tokio::test]
async fn only_banners_inside_their_schedule_are_served() {
    let t = spawn_mesh().await;
    let au = t.fetch("/content/banners").await;
    let keys: Vec<&str> = au.body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["key"].as_str().unwrap())
        .collect();
    assert_eq!(
        keys,
        ["summer-sale", "welcome"],
        "expired and future banners stay hidden"
    );
    assert_eq!(au.header("content-language"), Some("en-AU"));
    let nz = t.ok("/content/banners?locale=en-NZ").await;
    assert_eq!(
        (nz["locale"].as_str(), nz["results"][0]["key"].as_str()),
        (Some("en-NZ"), Some("kia-ora"))
    );
    assert!(au.body["results"][0]["image"]["alt"].is_string());
}

/// A footer document in en-AU titled `title`.
fn footer(title: &str) -> String {
    format!(
        r#"{{"kind": "footer", "locale": "en-AU", "title": "{title}", "sections": [{{"type": "text", "markdown": "hi"}}]}}"#
    )
}

/// A content folder of the test's own, holding a footer titled `First`.
fn content_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("content-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("footer.json"), footer("First")).unwrap();
    dir
}

#[tokio::test]
async fn edited_files_are_served_after_a_reload() {
    let dir = content_dir();
    // Two reloads in a row: no interval between maintenance runs here.
    let vars = [
        ("CONTENT_DIR", dir.to_str().unwrap()),
        ("RATE_LIMIT_MAINTENANCE", "off"),
    ];
    let t = spawn_mesh_on(Backend::Memory, &vars).await;
    assert_eq!(t.ok("/content/footer").await["title"], "First");
    t.fetch("/content/pages/about")
        .await
        .error(404, "NOT_FOUND");

    std::fs::write(dir.join("footer.json"), footer("Second")).unwrap();
    let token = t
        .mesh
        .issuer
        .mint("ops@storefront.iam.gserviceaccount.com", "gateway-internal")
        .unwrap();
    let url = format!("http://{}/internal/content/reload", t.mesh.internal_addr);
    let reload = t
        .send(t.http.request(Method::POST, &url).bearer_auth(&token))
        .await;
    assert_eq!(
        (reload.status.as_u16(), reload.body["documents"].as_u64()),
        (200, Some(1))
    );
    assert_eq!(t.ok("/content/footer").await["title"], "Second");

    // A broken edit is refused and the last good content stays.
    std::fs::write(dir.join("footer.json"), "{\"kind\": \"footer\"").unwrap();
    let broken = t
        .send(t.http.request(Method::POST, &url).bearer_auth(&token))
        .await;
    broken.error(422, "INVALID_CONTENT");
    assert_eq!(t.ok("/content/footer").await["title"], "Second");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 50 item 6: every replica follows its content folder (a mounted
/// ConfigMap the kubelet swaps), so an edit reaches each one without a
/// reload call landing on it; a broken edit leaves the last good content.
#[tokio::test]
async fn each_replica_follows_its_content_folder() {
    let dir = content_dir();
    let vars = [
        ("CONTENT_DIR", dir.to_str().unwrap()),
        ("CONTENT_WATCH_SECS", "1"),
    ];
    let t = spawn_mesh_on(Backend::Memory, &vars).await;
    assert_eq!(t.ok("/content/footer").await["title"], "First");
    let until = |want: &'static str| {
        let t = &t;
        async move {
            for _ in 0..50 {
                if t.ok("/content/footer").await["title"] == want {
                    return;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            panic!("the footer never became {want}");
        }
    };
    std::fs::write(dir.join("footer.json"), footer("Followed")).unwrap();
    until("Followed").await;
    std::fs::write(dir.join("footer.json"), "{\"kind\": \"footer\"").unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(2500)).await;
    assert_eq!(
        t.ok("/content/footer").await["title"],
        "Followed",
        "the last good content"
    );
    std::fs::write(dir.join("footer.json"), footer("Fixed")).unwrap();
    until("Fixed").await;
    let _ = std::fs::remove_dir_all(&dir);
}
