//! Secrets mounted as files, re-read when they change (issue 50, item 3):
//! a rotated Secret reaches a running program without a restart and
//! whatever tool changed it (Helm, Argo CD, External Secrets, `kubectl`).
//! The kubelet swaps a mounted Secret's files in place (a `..data` link)
//! within about a minute; each program checks its files every
//! `SECRETS_WATCH_SECS` (10) and hands a changed one to what uses it,
//! which takes it or refuses it (the last good value stays, logged by
//! name, never by value).

use std::path::PathBuf;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::env::{Secret, read_secret_file as read};

/// What a secret became (a parsed key, a client's credential), replaced
/// whole when its file changes; readers take the current one and keep it
/// for their call.
pub struct Swap<T>(std::sync::Arc<std::sync::RwLock<std::sync::Arc<T>>>);

impl<T> Clone for Swap<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> std::fmt::Debug for Swap<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Swap(..)")
    }
}

impl<T> Swap<T> {
    pub fn new(value: T) -> Self {
        Self(std::sync::Arc::new(std::sync::RwLock::new(
            std::sync::Arc::new(value),
        )))
    }

    pub fn get(&self) -> std::sync::Arc<T> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn set(&self, value: T) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = std::sync::Arc::new(value);
    }
}

/// What takes a changed secret: Ok when in use, Err (why) when refused.
pub type Take = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// One secret file followed.
pub struct Followed {
    pub name: &'static str,
    path: PathBuf,
    last: String,
    take: Take,
}

impl Followed {
    /// `secret`, when it came from a file, handed to `take` on change.
    pub fn of(name: &'static str, secret: &Secret, take: Take) -> Option<Self> {
        Some(Self {
            name,
            path: secret.file()?.to_path_buf(),
            last: secret.expose().to_string(),
            take,
        })
    }

    /// Re-reads the file; whether it changed and was taken.
    fn check(&mut self) -> bool {
        let Ok(now) = read(&self.path) else {
            // Mid-swap or gone: the next check sees it again.
            return false;
        };
        if now == self.last {
            return false;
        }
        self.last = now;
        match (self.take)(&self.last) {
            Ok(()) => {
                tracing::info!(secret = self.name, "a changed secret file was taken");
                true
            }
            Err(why) => {
                tracing::error!(secret = self.name, %why, "a changed secret file was refused; the last good value stays");
                false
            }
        }
    }
}

/// Checks `files` every `every` until `shutdown` (nothing to do without
/// any, or with `every` None).
pub fn watch(files: Vec<Followed>, every: Option<Duration>, shutdown: CancellationToken) {
    let Some(every) = every else { return };
    if files.is_empty() {
        return;
    }
    tokio::spawn(async move {
        let mut files = files;
        loop {
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(every) => {}
            }
            for file in &mut files {
                file.check();
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::env::EnvReader;

    #[test]
    fn a_changed_file_is_handed_over_and_a_refused_one_leaves_the_last() {
        let dir = std::env::temp_dir().join(format!("secret-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("KEY");
        std::fs::write(&path, "one\n").unwrap();
        let env = EnvReader::from_pairs([("KEY_FILE", path.to_str().unwrap())]);
        let secret = env.secret("KEY").unwrap().unwrap();
        assert_eq!(secret.expose(), "one");
        let taken = Arc::new(Mutex::new(Vec::new()));
        let seen = taken.clone();
        let take: Take = Box::new(move |text| {
            seen.lock().unwrap().push(text.to_string());
            if text == "bad" {
                Err("not a key".into())
            } else {
                Ok(())
            }
        });
        let mut followed = Followed::of("KEY", &secret, take).unwrap();
        assert!(!followed.check(), "unchanged");
        std::fs::write(&path, "two").unwrap();
        assert!(followed.check());
        std::fs::write(&path, "bad").unwrap();
        assert!(!followed.check());
        std::fs::write(&path, "").unwrap();
        assert!(!followed.check(), "an empty file is not a value");
        assert_eq!(*taken.lock().unwrap(), ["two", "bad"]);
    }

    #[test]
    fn a_value_and_a_file_together_or_an_empty_file_are_refused() {
        let both = EnvReader::from_pairs([("KEY", "x"), ("KEY_FILE", "/nope")]);
        assert!(both.secret("KEY").unwrap_err().message.contains("not both"));
        let missing = EnvReader::from_pairs([("KEY_FILE", "/nope/KEY")]);
        assert_eq!(missing.secret("KEY").unwrap_err().var, "KEY_FILE");
        assert!(EnvReader::default().secret("KEY").unwrap().is_none());
    }
}
