//! A TCP proxy that holds every byte coming back from upstream for a fixed
//! delay (without limiting throughput): a slow downstream, for real.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// Listens on `listen` and forwards to `upstream`; answers arrive `delay` late.
pub async fn delaying(listen: &str, upstream: String, delay: Duration) {
    let listener = TcpListener::bind(listen).await.expect("proxy binds");
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = upstream.clone();
            tokio::spawn(async move {
                if let Ok(server) = TcpStream::connect(&upstream).await {
                    relay(client, server, delay).await;
                }
            });
        }
    });
}

async fn relay(client: TcpStream, server: TcpStream, delay: Duration) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut client_read, &mut server_write).await;
        let _ = server_write.shutdown().await;
    });
    let (tx, mut rx) = mpsc::unbounded_channel::<(Instant, Vec<u8>)>();
    tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = server_read.read(&mut buf).await {
            if n == 0
                || tx
                    .send((Instant::now() + delay, buf[..n].to_vec()))
                    .is_err()
            {
                break;
            }
        }
    });
    while let Some((due, bytes)) = rx.recv().await {
        tokio::time::sleep_until(due).await;
        if client_write.write_all(&bytes).await.is_err() {
            break;
        }
    }
    let _ = client_write.shutdown().await;
}
