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
    args: Vec<std::ffi::OsString>,
    pub url: String,
    /// The socket, for tools that take a path (`redis-cli -s`).
    pub socket: PathBuf,
    /// With TLS: the certificates' directory (`ca.crt` signs the server's).
    pub tls: Option<PathBuf>,
    /// With persistence: where its append-only file is kept.
    pub data: Option<PathBuf>,
}

impl RedisServer {
    /// Starts `redis-server` (which must be on PATH) without persistence.
    pub fn start() -> std::io::Result<Self> {
        Self::launch(None, None)
    }

    /// Starts `redis-server` serving TLS on a loopback port with a
    /// certificate made now (openssl) for 127.0.0.1, signed by a CA of its
    /// own (`tls/ca.crt`); `url` is its `rediss://` URL.
    pub fn start_tls() -> std::io::Result<Self> {
        let dir = std::env::temp_dir().join(format!("sf-tls-{}-{}", std::process::id(), next()));
        make_certificates(&dir)?;
        Self::launch(Some(dir), None)
    }

    /// Starts `redis-server` as the chart expects it to be run: an
    /// append-only file fsynced every second, and no eviction.
    pub fn start_persistent() -> std::io::Result<Self> {
        let dir = std::env::temp_dir().join(format!("sf-aof-{}-{}", std::process::id(), next()));
        std::fs::create_dir_all(&dir)?;
        Self::launch(None, Some(dir))
    }

    fn launch(tls: Option<PathBuf>, data: Option<PathBuf>) -> std::io::Result<Self> {
        let socket =
            std::env::temp_dir().join(format!("sf-redis-{}-{}.sock", std::process::id(), next()));
        let _ = std::fs::remove_file(&socket);
        let mut args: Vec<std::ffi::OsString> = Vec::new();
        let mut push =
            |items: &[&std::ffi::OsStr]| args.extend(items.iter().map(|i| i.to_os_string()));
        let os = |s: &'static str| std::ffi::OsStr::new(s);
        push(&[
            os("--port"),
            os("0"),
            os("--unixsocket"),
            socket.as_os_str(),
        ]);
        push(&[os("--unixsocketperm"), os("700"), os("--save"), os("")]);
        match &data {
            None => push(&[os("--appendonly"), os("no")]),
            Some(dir) => push(&[
                os("--appendonly"),
                os("yes"),
                os("--appendfsync"),
                os("everysec"),
                os("--maxmemory-policy"),
                os("noeviction"),
                os("--dir"),
                dir.as_os_str(),
            ]),
        }
        let url = match &tls {
            None => format!("redis+unix://{}", socket.display()),
            Some(dir) => {
                let port = std::net::TcpListener::bind("127.0.0.1:0")?
                    .local_addr()?
                    .port();
                let port_arg = std::ffi::OsString::from(port.to_string());
                push(&[os("--bind"), os("127.0.0.1"), os("--tls-port"), &port_arg]);
                push(&[os("--tls-auth-clients"), os("no")]);
                for (flag, file) in [
                    ("--tls-cert-file", "server.crt"),
                    ("--tls-key-file", "server.key"),
                    ("--tls-ca-cert-file", "ca.crt"),
                ] {
                    push(&[os(flag), dir.join(file).as_os_str()]);
                }
                format!("rediss://127.0.0.1:{port}")
            }
        };
        let child = spawn_redis(&args, &socket)?;
        Ok(Self {
            child,
            args,
            url,
            socket,
            tls,
            data,
        })
    }

    /// Shuts the server down as an operator's restart does (SHUTDOWN: the
    /// append-only file is flushed) and waits for it to exit.
    pub fn stop(&mut self) -> std::io::Result<()> {
        let _ = Command::new("redis-cli")
            .arg("-s")
            .arg(&self.socket)
            .arg("shutdown")
            .output()?;
        self.child.wait()?;
        Ok(())
    }

    /// Starts it again as it was (its data from its append-only file).
    pub fn start_again(&mut self) -> std::io::Result<()> {
        self.child = spawn_redis(&self.args, &self.socket)?;
        Ok(())
    }
}

/// `redis-server args...`, once it answers PING on `socket`.
fn spawn_redis(args: &[std::ffi::OsString], socket: &Path) -> std::io::Result<Child> {
    let mut child = Command::new("redis-server")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if ping(socket) {
            return Ok(child);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    Err(std::io::Error::other("redis-server did not answer PING"))
}

fn next() -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A CA (`ca.crt`) and a server certificate it signs for 127.0.0.1 and
/// localhost (`server.crt`, `server.key`), in `dir`.
fn make_certificates(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    std::fs::write(
        dir.join("san.cnf"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\n",
    )?;
    // Each step as one line of the shell, split on spaces (no argument
    // has one; the subjects use none).
    let ec = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    let steps = [
        format!("req -x509 {ec} -keyout ca.key -out ca.crt -days 2 -subj /CN=storefront-test-CA"),
        format!("req {ec} -keyout server.key -out server.csr -subj /CN=127.0.0.1"),
        "x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt \
         -days 2 -extfile san.cnf"
            .to_string(),
    ];
    for step in &steps {
        let args: Vec<&str> = step.split_whitespace().collect();
        let status = Command::new("openssl")
            .args(&args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()?;
        if !status.success() {
            return Err(std::io::Error::other(format!("openssl {} failed", args[0])));
        }
    }
    Ok(())
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
        for dir in [&self.tls, &self.data].into_iter().flatten() {
            let _ = std::fs::remove_dir_all(dir);
        }
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
    /// With TLS (clients, the cluster bus and replication): the
    /// certificates' directory (`ca.crt` signs the nodes').
    pub tls: Option<PathBuf>,
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

impl RedisCluster {
    pub fn start() -> std::io::Result<Self> {
        Self::launch(false)
    }

    /// The cluster with TLS everywhere: clients, bus and replication, the
    /// nodes' certificate signed by a CA of its own (`tls/ca.crt`).
    pub fn start_tls() -> std::io::Result<Self> {
        Self::launch(true)
    }

    fn launch(tls: bool) -> std::io::Result<Self> {
        let dir =
            std::env::temp_dir().join(format!("sf-cluster-{}-{}", std::process::id(), next()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir)?;
        let tls = if tls {
            make_certificates(&dir.join("tls"))?;
            Some(dir.join("tls"))
        } else {
            None
        };
        let mut cluster = Self {
            nodes: Vec::new(),
            ports: Vec::new(),
            url: String::new(),
            dir,
            tls,
        };
        for _ in 0..6 {
            let (port, node) = cluster.answering_node()?;
            cluster.nodes.push(node);
            cluster.ports.push(port);
        }
        let addrs: Vec<String> = cluster
            .ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect();
        let mut create = vec!["--cluster", "create"];
        create.extend(addrs.iter().map(String::as_str));
        create.extend(["--cluster-replicas", "1", "--cluster-yes"]);
        cluster.cli(&create)?;
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
        let scheme = if cluster.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        let urls: Vec<String> = addrs.iter().map(|a| format!("{scheme}://{a}")).collect();
        cluster.url = urls.join(",");
        Ok(cluster)
    }

    /// A node started on a free port pair and answering. A port found free
    /// can be taken by another process before the node binds it (tests
    /// start many at once): that node exits, and another port is tried.
    fn answering_node(&self) -> std::io::Result<(u16, Child)> {
        for _ in 0..5 {
            let port = cluster_port(&self.ports)?;
            let mut node = self.node(port)?;
            let port_text = port.to_string();
            for _ in 0..400 {
                if node.try_wait()?.is_some() {
                    break;
                }
                if self.cli(&["-p", &port_text, "ping"])?.contains("PONG") {
                    return Ok((port, node));
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = node.kill();
            let _ = node.wait();
        }
        Err(std::io::Error::other(
            "no cluster node came up on five ports",
        ))
    }

    /// `redis-cli args...`, over TLS when the cluster has it.
    fn cli(&self, args: &[&str]) -> std::io::Result<String> {
        let mut command = Command::new("redis-cli");
        if let Some(tls) = &self.tls {
            command.arg("--tls").arg("--cacert").arg(tls.join("ca.crt"));
        }
        let out = command.args(args).output()?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    fn node(&self, port: u16) -> std::io::Result<Child> {
        let mut command = Command::new("redis-server");
        let port = port.to_string();
        match &self.tls {
            None => command.args(["--port", &port]),
            Some(tls) => command
                .args(["--port", "0", "--tls-port", &port])
                .args(["--tls-cluster", "yes", "--tls-replication", "yes"])
                .args(["--tls-auth-clients", "no"])
                .arg("--tls-cert-file")
                .arg(tls.join("server.crt"))
                .arg("--tls-key-file")
                .arg(tls.join("server.key"))
                .arg("--tls-ca-cert-file")
                .arg(tls.join("ca.crt")),
        };
        command
            .args(["--bind", "127.0.0.1"])
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
        let nodes = self.cli(&["-p", &self.ports[0].to_string(), "cluster", "nodes"])?;
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

    /// Waits (20 s at most) until the cluster has failed over from the
    /// primary on `killed`: a live node marks it failed and reports the
    /// cluster whole again (its slots served by the promoted replica).
    pub fn wait_failed_over(&self, killed: u16) -> std::io::Result<()> {
        let live = *self
            .ports
            .iter()
            .find(|&&p| p != killed)
            .ok_or_else(|| std::io::Error::other("no live node"))?;
        let deadline = Instant::now() + Duration::from_secs(20);
        let marked = format!(":{killed}@");
        while Instant::now() < deadline {
            let nodes = self.cli(&["-p", &live.to_string(), "cluster", "nodes"])?;
            let failed = nodes
                .lines()
                .any(|l| l.contains(&marked) && l.contains("fail") && !l.contains("fail?"));
            let info = self.cli(&["-p", &live.to_string(), "cluster", "info"])?;
            if failed && info.contains("cluster_state:ok") {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(std::io::Error::other(format!("no failover from {killed}")))
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
            let answer = self.cli(&cli)?;
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
