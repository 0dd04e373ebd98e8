//! A program never serves on two Redis servers (issue 50, item 3). Its
//! Redis address may come from a mounted Secret (`REDIS_URL_FILE`), which
//! can change under a running pod: pods started after the change would
//! use the new server while this one stays on the old, splitting carts,
//! sessions and orders between them. So the file is followed, and when it
//! names another server (not only other credentials) this process
//! refuses: its store's `ping` fails with why, the gateway's readiness and
//! each service's gRPC health turn NOT_SERVING, and it stays out of
//! rotation until restarted (the rollout the changed Secret's hash
//! annotation starts). A change of credentials alone keeps it serving:
//! its connections are authenticated, and a restart takes the new ones.

use std::path::PathBuf;
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;

type Retired = watch::Sender<Option<String>>;

/// Follows `source` (the variable, its file, how often) while `retired`
/// lives; refuses once the file names an endpoint other than `endpoint`.
pub(super) fn follow(
    endpoint: Vec<String>,
    source: (&'static str, PathBuf, Duration),
    retired: &Arc<Retired>,
) {
    let retired = Arc::downgrade(retired);
    tokio::spawn(async move {
        let (var, path, every) = source;
        loop {
            tokio::time::sleep(every).await;
            let Some(retired) = Weak::upgrade(&retired) else {
                return;
            };
            let Some(why) = moved(&endpoint, var, &path) else {
                continue;
            };
            tracing::error!(variable = var, reason = %why, "refusing to serve: Redis moved");
            retired.send_replace(Some(why));
            return;
        }
    });
}

/// Why the file now names another server, if it does (unreadable or
/// invalid text is not a move: the next check reads it again).
fn moved(endpoint: &[String], var: &str, path: &std::path::Path) -> Option<String> {
    let text = crate::env::read_secret_file(path).ok()?;
    let url = crate::env::redis_text(var, &text).ok()?;
    let now = crate::store::RedisTarget::new(url).endpoint();
    (now != endpoint).then(|| {
        format!(
            "{var} now names {} but this process uses {}: restart it rather than serve carts, sessions and orders from two Redis servers",
            now.join(","),
            endpoint.join(",")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn another_server_is_a_move_and_other_credentials_are_not() {
        let dir = std::env::temp_dir().join(format!("redis-moved-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("url");
        let was = crate::store::RedisTarget::new("redis://:old@r1:6379/0").endpoint();
        std::fs::write(&path, "redis://:new@r1:6379/0\n").unwrap();
        assert_eq!(moved(&was, "REDIS_URL", &path), None, "credentials only");
        std::fs::write(&path, "redis://r1:6379/1").unwrap();
        assert!(
            moved(&was, "REDIS_URL", &path).is_some(),
            "another database"
        );
        std::fs::write(&path, "not a url").unwrap();
        assert_eq!(
            moved(&was, "REDIS_URL", &path),
            None,
            "unreadable: asked again"
        );
        std::fs::write(&path, "redis://:old@r2:6379/0").unwrap();
        let why = moved(&was, "REDIS_URL", &path).expect("moved");
        assert!(why.contains("r2:6379/0"), "{why}");
        assert!(!why.contains("old"), "no password in {why}");
    }
}
