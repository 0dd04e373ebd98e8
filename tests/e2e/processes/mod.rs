//! The mesh as separate OS processes: the `storefront` binary started once
//! per program (`storefront gateway`, `storefront catalog`, ...) on loopback
//! ports, configured only through environment variables, sharing one real
//! redis-server, as containers or pods run it.

mod churn;
mod journey;
mod login_burst;
mod metrics;
mod proxy;
mod replicas;
mod settings;
mod shutdown;
mod traces;
mod waiting;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use storefront_platform::identity::dev_issuer::JWKS_PATH;
use storefront_platform::testing::{RedisCluster, RedisServer};
use storefront_platform::topology::{self, Role};

use crate::helpers::Api;

/// Every program but the all-in-one mesh.
fn program_names() -> impl Iterator<Item = &'static str> {
    topology::PROGRAMS.iter().map(|p| p.name)
}

/// What a program needs listening before it starts: what it calls, and
/// the issuer of the identity tokens every other program verifies.
fn prerequisites(program: &str) -> Vec<&'static str> {
    let Some(p) = topology::program(program) else {
        return Vec::new();
    };
    let issuer = (p.role != Role::Issuer).then_some(topology::DEV_ISSUER.name);
    issuer
        .into_iter()
        .chain(p.downstreams().map(|d| d.name))
        .collect()
}

/// Where the started programs listen, as each one reported it: every
/// program binds port 0 itself, so no port is chosen here and then lost to
/// another test between choosing and binding. Keys are program names, plus
/// `gateway-internal` and `<program>-metrics`.
#[derive(Default)]
pub struct Addrs(BTreeMap<String, SocketAddr>);

impl Addrs {
    pub fn url(&self, program: &str) -> String {
        format!("http://{}", self.addr(program))
    }

    pub fn addr(&self, program: &str) -> SocketAddr {
        *self
            .0
            .get(program)
            .unwrap_or_else(|| panic!("{program} has not reported its address"))
    }

    /// Records every "... listening" line of `program`'s log; true once
    /// its main listener is known.
    fn read_log(&mut self, program: &str, log: &str) -> bool {
        for line in log.lines() {
            let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else {
                continue;
            };
            let fields = &event["fields"];
            let message = fields["message"].as_str().unwrap_or_default();
            let key = match message {
                "metrics listening" => format!("{program}-metrics"),
                m if m.ends_with(" listening") => program.to_owned(),
                _ => continue,
            };
            for (field, key) in [("addr", key), ("internal", format!("{program}-internal"))] {
                if let Some(addr) = fields[field].as_str().and_then(|a| a.parse().ok()) {
                    self.0.insert(key, addr);
                }
            }
        }
        self.0.contains_key(program)
    }
}

/// One running program; killed when dropped.
pub struct Program {
    pub name: &'static str,
    /// Where its addresses are kept: its name, or `<name>-<n>` for a
    /// further replica.
    key: String,
    child: Child,
    log: PathBuf,
    /// Given a metrics port, whose address it reports.
    metrics: bool,
    /// What it was started with, to start it again.
    env: Vec<(String, String)>,
}

impl Program {
    fn spawn(name: &'static str, key: &str, env: Vec<(String, String)>, dir: &Path) -> Self {
        let metrics = env.iter().any(|(k, _)| k == "METRICS_LISTEN_ADDR");
        let log = dir.join(format!("{key}.log"));
        let file = std::fs::File::create(&log).expect("log file");
        let child = Command::new(env!("CARGO_BIN_EXE_storefront"))
            .arg(name)
            .env_clear()
            .envs(env.clone())
            .stdout(file.try_clone().expect("log file"))
            .stderr(file)
            .stdin(Stdio::null())
            .spawn()
            .expect("storefront binary starts");
        Self {
            name,
            key: key.to_string(),
            child,
            log,
            metrics,
            env,
        }
    }

    /// Waits until the program logs where it listens (its own port 0).
    async fn wait_listening(&mut self, addrs: &mut Addrs) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if addrs.read_log(&self.key, &self.log()) {
                return;
            }
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                panic!(
                    "{} exited ({status}) before listening:\n{}",
                    self.name,
                    self.log()
                );
            }
            assert!(Instant::now() < deadline, "{} never listened", self.name);
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends SIGKILL: the process dies at once, its connections reset.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

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

    /// The most memory the process has held (`VmHWM`), in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or(0)
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
    pub addrs: Addrs,
    programs: Vec<Program>,
    _redis: SharedRedis,
    dir: PathBuf,
}

/// The Redis every program shares: one server, or a cluster.
pub enum SharedRedis {
    Server(RedisServer),
    Cluster(RedisCluster),
}

impl SharedRedis {
    pub fn server() -> Self {
        SharedRedis::Server(RedisServer::start().expect("redis-server on PATH"))
    }

    pub fn cluster() -> Self {
        SharedRedis::Cluster(RedisCluster::start().expect("a Redis Cluster on loopback"))
    }

    /// What the store opens: a URL, or the cluster's node URLs.
    pub fn url(&self) -> &str {
        match self {
            SharedRedis::Server(server) => &server.url,
            SharedRedis::Cluster(cluster) => &cluster.url,
        }
    }

    /// The variable a program is given, as an operator writes it.
    fn variable(&self) -> (&'static str, String) {
        match self {
            SharedRedis::Server(server) => ("REDIS_URL", server.url.clone()),
            SharedRedis::Cluster(cluster) => {
                let nodes: Vec<String> = cluster
                    .ports
                    .iter()
                    .map(|p| format!("127.0.0.1:{p}"))
                    .collect();
                ("REDIS_CLUSTER_NODES", nodes.join(","))
            }
        }
    }
}

/// What every program gets, and what each one needs of its own; `addrs`
/// holds the programs it calls, already listening.
fn environment(addrs: &Addrs, redis: &SharedRedis, program: &str) -> Vec<(String, String)> {
    let mut env = vec![
        ("APP_ENV", "local".to_owned()),
        ("RUST_LOG", "info".to_owned()),
        ("LISTEN_ADDR", "127.0.0.1:0".to_owned()),
        redis.variable(),
    ];
    let p = topology::program(program).expect("a program of the topology");
    if p.role != Role::Issuer {
        let issuer = addrs.url(topology::DEV_ISSUER.name);
        env.push(("IDENTITY_JWKS_URL", format!("{issuer}{JWKS_PATH}")));
        if !p.calls.is_empty() {
            env.push(("IDENTITY_TOKEN_URL", p.dev_token_url(&issuer)));
        }
    }
    if p.role == Role::Service {
        env.push(("ALLOWED_CALLERS", p.dev_allowed_callers()));
    }
    let urls: Vec<(String, String)> = p
        .downstreams()
        .map(|d| (d.url_var(), addrs.url(d.name)))
        .collect();
    if program == "gateway" {
        env.push(("INTERNAL_LISTEN_ADDR", "127.0.0.1:0".to_owned()));
    }
    env.into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .chain(urls)
        .collect()
}

impl Processes {
    /// Starts every program once those it calls listen; `configure` may
    /// change any program's environment (later entries win), knowing where
    /// the programs started before it listen. Returns once the gateway is
    /// ready.
    pub async fn start(configure: impl Fn(&str, &mut Vec<(String, String)>, &Addrs)) -> Self {
        Self::start_on(SharedRedis::server(), configure).await
    }

    /// As `start`, every program on `redis`.
    pub async fn start_on(
        redis: SharedRedis,
        configure: impl Fn(&str, &mut Vec<(String, String)>, &Addrs),
    ) -> Self {
        let dir =
            std::env::temp_dir().join(format!("storefront-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).expect("log dir");
        let mut addrs = Addrs::default();
        let mut programs: Vec<Program> = Vec::new();
        let mut pending: Vec<&'static str> = program_names().collect();
        while !pending.is_empty() {
            let (wave, rest): (Vec<_>, Vec<_>) = pending
                .into_iter()
                .partition(|p| prerequisites(p).iter().all(|d| addrs.0.contains_key(*d)));
            assert!(!wave.is_empty(), "nothing can start among {rest:?}");
            let first = programs.len();
            for name in wave {
                let mut env = environment(&addrs, &redis, name);
                configure(name, &mut env, &addrs);
                programs.push(Program::spawn(name, name, env, &dir));
            }
            for program in &mut programs[first..] {
                program.wait_listening(&mut addrs).await;
            }
            pending = rest;
        }
        let api = Api {
            base: addrs.url("gateway"),
            http: reqwest::Client::new(),
        };
        let mut processes = Self {
            api,
            addrs,
            programs,
            _redis: redis,
            dir,
        };
        processes.wait_ready().await;
        // Metrics listeners may report after the main one: wait for each
        // program given one.
        let deadline = Instant::now() + Duration::from_secs(30);
        for program in &processes.programs {
            let key = format!("{}-metrics", program.name);
            while program.metrics && !processes.addrs.0.contains_key(&key) {
                assert!(Instant::now() < deadline, "{key} never reported");
                processes.addrs.read_log(&program.key, &program.log());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
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

    /// Starts a further replica of `program` as `key`, with the
    /// environment every program gets and `changes` on top.
    pub async fn add(&mut self, program: &'static str, key: &str, changes: &[(String, String)]) {
        let mut env = environment(&self.addrs, &self._redis, program);
        env.extend(changes.iter().cloned());
        let mut replica = Program::spawn(program, key, env, &self.dir);
        replica.wait_listening(&mut self.addrs).await;
        self.programs.push(replica);
    }

    /// The redis-server every program shares.
    pub fn redis_url(&self) -> &str {
        self._redis.url()
    }

    pub fn program_ref(&self, name: &str) -> &Program {
        self.programs
            .iter()
            .find(|p| p.name == name)
            .expect("such a program")
    }

    /// Stops the replica `key` (SIGTERM, as a rolling update does) and
    /// starts it again on the address it had, waiting until it listens.
    pub async fn restart(&mut self, key: &str) {
        let addr = self.addrs.addr(key);
        let at = self
            .programs
            .iter()
            .position(|p| p.key == key)
            .expect("such a replica");
        let mut old = self.programs.remove(at);
        old.terminate();
        old.wait(Duration::from_secs(30)).await;
        let mut env = old.env.clone();
        env.retain(|(k, _)| k != "LISTEN_ADDR");
        // Known again only once the new process says where it listens.
        self.addrs.0.remove(key);
        env.push(("LISTEN_ADDR".to_string(), addr.to_string()));
        let mut again = Program::spawn(old.name, key, env, &self.dir);
        again.wait_listening(&mut self.addrs).await;
        self.programs.push(again);
    }

    /// The replica started as `key` (its name, or the key `add` gave it).
    pub fn replica(&mut self, key: &str) -> &mut Program {
        self.programs
            .iter_mut()
            .find(|p| p.key == key)
            .expect("such a replica")
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
