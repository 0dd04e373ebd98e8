//! Issue 50, item 6, search's half: a reindex asked through the internal
//! port reaches one search replica, and every replica rebuilds. The
//! replica asked raises the catalog's reindex generation (kept in Redis,
//! so every catalog replica answers the same) and rebuilds; the others see
//! it at their next follow. Two more search replicas run beside the
//! mesh's on the same catalog, as a Deployment's pods would.

use std::time::Duration;

use reqwest::Method;
use storefront_platform::topology::SEARCH;

use crate::helpers::{Backend, TestMesh, spawn_mesh_on};

const REBUILT_BY_FOLLOW: &str = "a reindex was asked (of another replica): rebuilding";

/// Log lines of followers rebuilding for `generation`.
fn follower_rebuilds(generation: u64) -> usize {
    crate::logs::captured()
        .lines()
        .filter(|l| l.contains(REBUILT_BY_FOLLOW))
        .filter(|l| l.contains(&format!("\"generation\":{generation}")))
        .count()
}

async fn search_replica(t: &TestMesh) -> tokio_util::sync::CancellationToken {
    let catalog = format!("http://{}", t.mesh.catalog_addr);
    let tokens = SEARCH.dev_token_url(&t.mesh.issuer_url);
    let (_, stop) = crate::helpers::replica(t, move |env, serving| {
        let mut env = env.clone();
        env.set("CATALOG_URL", catalog);
        env.set("IDENTITY_TOKEN_URL", tokens);
        env.set("SEARCH_FOLLOW_MS", "100");
        let config = storefront_search::SearchConfig::from_env(&env).unwrap();
        storefront_search::serve(config, serving)
    })
    .await;
    stop
}

/// `POST /internal/search/reindex` as the ops account; its answer.
pub async fn reindex(t: &TestMesh) -> crate::helpers::Reply {
    let ops = "ops@storefront.iam.gserviceaccount.com";
    let path = "/internal/search/reindex";
    t.send(crate::catalog_changes::internal(t, ops, Method::POST, path))
        .await
}

#[tokio::test]
async fn a_reindex_reaches_every_search_replica() {
    let t = spawn_mesh_on(Backend::Redis, &[("RATE_LIMIT_MAINTENANCE", "100/1s")]).await;
    let replicas = [search_replica(&t).await, search_replica(&t).await];
    // Each has built its index and followed once (it records the
    // generation it starts at rather than rebuilding for it).
    tokio::time::sleep(Duration::from_secs(3)).await;
    // A fresh Redis holds no generation: 1; each reindex raises it by one.
    for generation in [2, 3] {
        let reply = reindex(&t).await;
        assert_eq!(reply.status, 200, "{}", reply.body);
        for _ in 0..100 {
            if follower_rebuilds(generation) >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // The two replicas beside the one asked, and not the one asked
        // again: its own follow sees the generation it raised.
        tokio::time::sleep(Duration::from_secs(1)).await;
        assert_eq!(follower_rebuilds(generation), 2, "generation {generation}");
    }
    let found = t.ok("/search?query=shirt&limit=1").await;
    assert!(found["total"].as_u64() > Some(0), "{found}");
    for stop in replicas {
        stop.cancel();
    }
}
