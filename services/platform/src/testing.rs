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
