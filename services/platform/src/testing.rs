//! Test support shared by every crate: a real `redis-server` listening on a
//! Unix socket of its own (no TCP port, so nothing can take it between
//! choosing and binding), stopped and removed when dropped.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

pub struct RedisServer {
    child: Child,
    pub url: String,
    /// The socket, for tools that take a path (`redis-cli -s`).
    pub socket: PathBuf,
}

impl RedisServer {
    /// Starts `redis-server` (which must be on PATH) without persistence.
    pub fn start() -> std::io::Result<Self> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let socket = std::env::temp_dir().join(format!(
            "sf-redis-{}-{}.sock",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&socket);
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args(["--unixsocketperm", "700"])
            .args(["--save", "", "--appendonly", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let server = Self {
            child,
            url: format!("redis+unix://{}", socket.display()),
            socket,
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if ping(&server.socket) {
                return Ok(server);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Err(std::io::Error::other("redis-server did not answer PING"))
    }
}

fn ping(socket: &Path) -> bool {
    let Ok(mut stream) = UnixStream::connect(socket) else {
        return false;
    };
    let mut reply = [0u8; 7];
    stream.write_all(b"PING\r\n").is_ok()
        && stream.read_exact(&mut reply).is_ok()
        && &reply == b"+PONG\r\n"
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.socket);
    }
}

/// A real Redis Cluster on loopback: three primaries, each with one
/// replica (`redis-cli --cluster create`), stopped and removed when
/// dropped. Cluster nodes talk over TCP (each port and port + 10000).
pub struct RedisCluster {
    nodes: Vec<Child>,
    pub ports: Vec<u16>,
    /// The nodes' URLs, comma-separated: what `REDIS_CLUSTER_NODES` becomes.
    pub url: String,
    dir: PathBuf,
}

/// A loopback port free now whose cluster bus port (+10000) is free too.
fn cluster_port(taken: &[u16]) -> std::io::Result<u16> {
    for _ in 0..200 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        let port = listener.local_addr()?.port();
        let free = |p: u16| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok();
        if port < 55_000 && !taken.contains(&port) && free(port + 10_000) {
            return Ok(port);
        }
    }
    Err(std::io::Error::other(
        "no free port pair for a cluster node",
    ))
}

fn redis_cli(args: &[&str]) -> std::io::Result<String> {
    let out = Command::new("redis-cli").args(args).output()?;
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl RedisCluster {
    pub fn start() -> std::io::Result<Self> {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = std::env::temp_dir().join(format!(
            "sf-cluster-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let mut cluster = Self {
            nodes: Vec::new(),
            ports: Vec::new(),
            url: String::new(),
            dir,
        };
        for _ in 0..6 {
            let port = cluster_port(&cluster.ports)?;
            cluster.nodes.push(cluster.node(port)?);
            cluster.ports.push(port);
        }
        for &port in &cluster.ports {
            cluster.wait(port, "PONG", &["ping"])?;
        }
        let addrs: Vec<String> = cluster
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        let mut create = vec!["--cluster", "create"];
        create.extend(addrs.iter().map(String::as_str));
        create.extend(["--cluster-replicas", "1", "--cluster-yes"]);
        redis_cli(&create)?;
        for &port in &cluster.ports {
            cluster.wait(port, "cluster_state:ok", &["cluster", "info"])?;
        }
        // A replica that has not synced once cannot take over: wait for
        // every replica's link to its primary.
        for &port in &cluster.ports {
            cluster.wait_any(
                port,
                &["role:master", "master_link_status:up"],
                &["info", "replication"],
            )?;
        }
        let urls: Vec<String> = addrs.iter().map(|a| format!("redis://{a}")).collect();
        cluster.url = urls.join(",");
        Ok(cluster)
    }

    fn node(&self, port: u16) -> std::io::Result<Child> {
        Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--cluster-enabled", "yes", "--cluster-node-timeout", "2000"])
            .arg("--cluster-config-file")
            .arg(self.dir.join(format!("nodes-{port}.conf")))
            .arg("--dir")
            .arg(&self.dir)
            .args(["--save", "", "--appendonly", "no"])
            // Replicas sync at once, not after the default 5 s pause.
            .args(["--repl-diskless-sync-delay", "0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
    }

    /// Kills a primary (SIGKILL: no goodbye to its peers) and returns its
    /// port; its replica takes over once the others agree it failed.
    pub fn kill_primary(&mut self) -> std::io::Result<u16> {
        let nodes = redis_cli(&["-p", &self.ports[0].to_string(), "cluster", "nodes"])?;
        let primary = nodes
            .lines()
            .filter(|line| line.contains("master") && !line.contains("fail"))
            .find_map(|line| {
                let addr = line.split_whitespace().nth(1)?;
                addr.split(['@', ':']).nth(1)?.parse::<u16>().ok()
            })
            .ok_or_else(|| std::io::Error::other("no live primary"))?;
        let index = self
            .ports
            .iter()
            .position(|&p| p == primary)
            .ok_or_else(|| std::io::Error::other("the primary is not one of ours"))?;
        self.nodes[index].kill()?;
        self.nodes[index].wait()?;
        Ok(primary)
    }

    /// Waits until `redis-cli -p port args...` answers something with `want`.
    fn wait(&self, port: u16, want: &str, args: &[&str]) -> std::io::Result<()> {
        self.wait_any(port, &[want], args)
    }

    /// Waits until `redis-cli -p port args...` answers with one of `wanted`.
    fn wait_any(&self, port: u16, wanted: &[&str], args: &[&str]) -> std::io::Result<()> {
        let port = port.to_string();
        let mut cli = vec!["-p", &port];
        cli.extend(args);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            let answer = redis_cli(&cli)?;
            if wanted.iter().any(|want| answer.contains(want)) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(std::io::Error::other(format!(
            "cluster node {port}: none of {wanted:?}"
        )))
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = node.kill();
            let _ = node.wait();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
