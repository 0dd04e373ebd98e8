//! A misspelt setting at start: production refuses to start and names it
//! with the setting meant; elsewhere the program starts and warns.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn program(name: &str, app_env: &str) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_storefront"));
    command
        .arg(name)
        .env_clear()
        .env("APP_ENV", app_env)
        .env("LISTEN_ADDR", "127.0.0.1:0")
        .env("REDIS_ULR", "redis://127.0.0.1:6379")
        .env("CATALOG_COLOUR", "blue");
    command
}

#[test]
fn production_refuses_a_misspelt_setting_naming_the_one_meant() {
    let out = program("content", "production").output().expect("runs");
    assert!(!out.status.success());
    let said =
        String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("REDIS_ULR is not a setting; did you mean REDIS_URL?"),
        "{said}"
    );
    assert!(said.contains("CATALOG_COLOUR is not a setting"), "{said}");
}

#[test]
fn development_starts_and_warns_of_a_misspelt_setting() {
    let mut child = program("content", "development")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("starts");
    let lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut warned = false;
    for line in lines.map_while(Result::ok) {
        if line.contains("REDIS_ULR is not a setting; did you mean REDIS_URL?") {
            warned = true;
            break;
        }
        if Instant::now() > deadline {
            break;
        }
    }
    let running = child.try_wait().expect("status").is_none();
    let _ = child.kill();
    let _ = child.wait();
    assert!(warned, "no warning of REDIS_ULR");
    assert!(running, "it starts all the same");
}
