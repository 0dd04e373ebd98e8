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

/// What `/proc/<pid>/environ` holds once it names `variable`.
fn environment_naming(pid: u32, variable: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
        let environ = String::from_utf8_lossy(&environ).replace('\0', "\n");
        if environ.contains(variable) || Instant::now() > deadline {
            return environ;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_program_runs_with_the_allocators_purge_delay_and_keeps_an_operators_own() {
    for (given, runs_with) in [(None, "10"), (Some("250"), "250")] {
        let mut command = program("content", "development");
        if let Some(value) = given {
            command.env("MIMALLOC_PURGE_DELAY", value);
        }
        let mut child = command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starts");
        let environ = environment_naming(child.id(), "MIMALLOC_PURGE_DELAY=");
        let running = child.try_wait().expect("status").is_none();
        let _ = child.kill();
        let _ = child.wait();
        assert!(running, "it runs, as the process it was started as");
        let line = format!("MIMALLOC_PURGE_DELAY={runs_with}\n");
        assert!(environ.contains(&line), "{given:?}: {environ}");
        assert!(environ.contains("APP_ENV=development\n"), "{environ}");
    }
}
