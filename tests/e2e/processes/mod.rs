//! The mesh as separate OS processes: the `storefront` binary started once
//! per program (`storefront gateway`, `storefront catalog`, ...) on loopback
//! ports, configured only through environment variables, sharing one real
//! redis-server, as containers or pods run it.

mod journey;
mod metrics;
mod proxy;
mod shutdown;
mod traces;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use storefront::programs::PROGRAMS;
use storefront_cart::config::DEV_CART_ACCOUNT;
use storefront_common::identity::dev_issuer::{JWKS_PATH, account_url};
use storefront_common::settings::DEV_GATEWAY_ACCOUNT;
use storefront_common::testing::RedisServer;
use storefront_search::config::DEV_SEARCH_ACCOUNT;

use crate::helpers::Api;

/// Every program but the all-in-one mesh; the order does not matter, as
/// callers retry and the harness waits for the gateway's readiness.
fn program_names() -> impl Iterator<Item = &'static str> {
    PROGRAMS.iter().copied().filter(|p| *p != "all")
}

/// A loopback port per program, chosen before anything starts so that a
/// test can put something (a proxy) between two of them.
pub struct Ports(BTreeMap<&'static str, u16>);

impl Ports {
    pub fn allocate() -> Self {
        let mut ports = BTreeMap::new();
        for name in program_names().chain(["gateway-internal"]) {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("free port");
            ports.insert(name, listener.local_addr().expect("addr").port());
        }
        Self(ports)
    }

    pub fn url(&self, program: &str) -> String {
        format!("http://127.0.0.1:{}", self.0[program])
    }

    pub fn addr(&self, program: &str) -> String {
        format!("127.0.0.1:{}", self.0[program])
    }
}

/// One running program; killed when dropped.
pub struct Program {
    pub name: &'static str,
    child: Child,
    log: PathBuf,
}

impl Program {
    /// Sends SIGTERM, as Kubernetes does to stop a pod.
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "SIGTERM delivered");
    }

    /// Waits for the process to exit, for at most `timeout`.
    pub async fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "{} did not exit in {timeout:?}",
                self.name
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Everything the program logged (JSON lines).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub struct Processes {
    pub api: Api,
    pub ports: Ports,
    programs: Vec<Program>,
    _redis: RedisServer,
    dir: PathBuf,
}

/// What every program gets, and what each one needs of its own.
fn environment(ports: &Ports, redis: &str, program: &str) -> Vec<(String, String)> {
    let issuer = ports.url("dev-issuer");
    let mut env = vec![
        ("APP_ENV", "local".to_owned()),
        ("RUST_LOG", "info".to_owned()),
        ("LISTEN_ADDR", ports.addr(program)),
        ("IDENTITY_JWKS_URL", format!("{issuer}{JWKS_PATH}")),
        ("REDIS_URL", redis.to_owned()),
    ];
    let callers = match program {
        "catalog" => format!(
            "{DEV_GATEWAY_ACCOUNT},{DEV_CART_ACCOUNT}={},{DEV_SEARCH_ACCOUNT}={}",
            storefront_cart::config::CALLS_ON_CATALOG,
            storefront_search::config::CALLS_ON_CATALOG
        ),
        "orders" => format!(
            "{DEV_GATEWAY_ACCOUNT},{DEV_CART_ACCOUNT}={}",
            storefront_cart::config::CALLS_ON_ORDERS
        ),
        _ => DEV_GATEWAY_ACCOUNT.to_owned(),
    };
    env.push(("ALLOWED_CALLERS", callers));
    let account = match program {
        "cart" => DEV_CART_ACCOUNT,
        "search" => DEV_SEARCH_ACCOUNT,
        _ => DEV_GATEWAY_ACCOUNT,
    };
    env.push(("IDENTITY_TOKEN_URL", account_url(&issuer, account)));
    let downstreams: &[&str] = match program {
        "cart" => &["catalog", "orders"],
        "search" => &["catalog"],
        "gateway" => &[
            "catalog",
            "search",
            "cart",
            "orders",
            "customers",
            "content",
        ],
        _ => &[],
    };
    for d in downstreams {
        env.push((downstream_var(d), ports.url(d)));
    }
    if program == "gateway" {
        env.push(("INTERNAL_LISTEN_ADDR", ports.addr("gateway-internal")));
    }
    env.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
}

fn downstream_var(program: &str) -> &'static str {
    match program {
        "catalog" => "CATALOG_URL",
        "search" => "SEARCH_URL",
        "cart" => "CART_URL",
        "orders" => "ORDERS_URL",
        "customers" => "CUSTOMERS_URL",
        _ => "CONTENT_URL",
    }
}

impl Processes {
    /// Starts every program; `configure` may change any program's
    /// environment (later entries win). Returns once the gateway is ready.
    pub async fn start(ports: Ports, configure: impl Fn(&str, &mut Vec<(String, String)>)) -> Self {
        let redis = RedisServer::start().expect("redis-server on PATH");
        let dir =
            std::env::temp_dir().join(format!("storefront-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("log dir");
        let mut programs = Vec::new();
        for name in program_names() {
            let mut env = environment(&ports, &redis.url, name);
            configure(name, &mut env);
            let log = dir.join(format!("{name}.log"));
            let file = std::fs::File::create(&log).expect("log file");
            let child = Command::new(env!("CARGO_BIN_EXE_storefront"))
                .arg(name)
                .env_clear()
                .envs(env)
                .stdout(file.try_clone().expect("log file"))
                .stderr(file)
                .stdin(Stdio::null())
                .spawn()
                .expect("storefront binary starts");
            programs.push(Program { name, child, log });
        }
        let api = Api {
            base: ports.url("gateway"),
            http: reqwest::Client::new(),
        };
        let processes = Self {
            api,
            ports,
            programs,
            _redis: redis,
            dir,
        };
        processes.wait_ready().await;
        processes
    }

    async fn wait_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            let ready = self
                .api
                .request(reqwest::Method::GET, "/health/ready")
                .send()
                .await;
            if ready.is_ok_and(|r| r.status() == 200) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("the separate-process mesh never became ready");
    }

    pub fn program(&mut self, name: &str) -> &mut Program {
        self.programs
            .iter_mut()
            .find(|p| p.name == name)
            .expect("such a program")
    }
}

impl Drop for Processes {
    fn drop(&mut self) {
        // A failing test shows what every program said.
        if std::thread::panicking() {
            for p in &self.programs {
                let log = p.log();
                let tail: Vec<&str> = log.lines().rev().take(15).collect();
                eprintln!("--- {} ---", p.name);
                for line in tail.iter().rev() {
                    eprintln!("{line}");
                }
            }
        }
        self.programs.clear();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
