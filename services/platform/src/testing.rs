//! Test support shared by every crate: a real `redis-server` listening on a
//! Unix socket of its own (no TCP port, so nothing can take it between
//! choosing and binding), stopped and removed when dropped.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

mod cluster;
pub use cluster::RedisCluster;

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
