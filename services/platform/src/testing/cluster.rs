//! A real Redis Cluster on loopback, for the tests of failover and of
//! keys spread over shards.

use super::*;

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
        // The store waits for a replica only where the node it asks shows
        // the primary with a connected one: every node's view (gossip)
        // holds all three before a test writes.
        for &port in &cluster.ports {
            cluster.wait_until(
                port,
                &["cluster", "nodes"],
                "three connected replicas",
                |nodes| {
                    let replicas = nodes.lines().filter(|line| {
                        let f: Vec<&str> = line.split_whitespace().collect();
                        f.len() > 7
                            && f[2].split(',').any(|flag| flag == "slave")
                            && f[7] == "connected"
                    });
                    replicas.count() == 3
                },
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

    /// The ports of the primary serving `key` (as the store writes it,
    /// prefixed) and of its replica, once the node asked knows both (a
    /// new cluster's roles reach every node by gossip).
    pub fn shard_of(&self, key: &str) -> std::io::Result<(u16, u16)> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.read_shard_of(key) {
                Err(e) if Instant::now() >= deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
                found => return found,
            }
        }
    }

    fn read_shard_of(&self, key: &str) -> std::io::Result<(u16, u16)> {
        let any = self.ports[0].to_string();
        let slot: u16 = self
            .cli(&["-p", &any, "cluster", "keyslot", key])?
            .trim()
            .parse()
            .map_err(std::io::Error::other)?;
        let nodes = self.cli(&["-p", &any, "cluster", "nodes"])?;
        let lines: Vec<Vec<&str>> = nodes
            .lines()
            .map(|l| l.split_whitespace().collect())
            .collect();
        let port = |f: &[&str]| f[1].split([':', '@']).nth(1)?.parse::<u16>().ok();
        let serves = |range: &&str| match range.split_once('-') {
            Some((a, b)) => {
                a.parse().is_ok_and(|a: u16| a <= slot) && b.parse().is_ok_and(|b: u16| slot <= b)
            }
            None => range.parse() == Ok(slot),
        };
        let primary = lines
            .iter()
            .find(|f| f.len() > 8 && f[2].contains("master") && f[8..].iter().any(&serves))
            .ok_or_else(|| std::io::Error::other(format!("no primary serves slot {slot}")))?;
        let replica = lines
            .iter()
            .find(|f| f.len() > 3 && f[3] == primary[0])
            .ok_or_else(|| std::io::Error::other("the primary has no replica"))?;
        match (port(primary), port(replica)) {
            (Some(p), Some(r)) => Ok((p, r)),
            _ => Err(std::io::Error::other("unreadable node addresses")),
        }
    }

    /// Sends `signal` (`STOP`: alive and connected but silent, as a node
    /// starved of CPU; `CONT`; `KILL`) to the node on `port`.
    pub fn signal(&self, port: u16, signal: &str) -> std::io::Result<()> {
        let index = self
            .ports
            .iter()
            .position(|&p| p == port)
            .ok_or_else(|| std::io::Error::other("not one of our nodes"))?;
        let sent = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(self.nodes[index].id().to_string())
            .status()?;
        if sent.success() {
            Ok(())
        } else {
            Err(std::io::Error::other(format!("kill -{signal} failed")))
        }
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
        let what = format!("one of {wanted:?}");
        self.wait_until(port, args, &what, |answer| {
            wanted.iter().any(|want| answer.contains(want))
        })
    }

    /// Waits (20 s at most) until `redis-cli -p port args...` answers
    /// what `holds` accepts.
    fn wait_until(
        &self,
        port: u16,
        args: &[&str],
        what: &str,
        holds: impl Fn(&str) -> bool,
    ) -> std::io::Result<()> {
        let port = port.to_string();
        let mut cli = vec!["-p", &port];
        cli.extend(args);
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if holds(&self.cli(&cli)?) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(std::io::Error::other(format!(
            "cluster node {port}: not {what}"
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
