//! Misbehaving hosts on loopback: a listener that accepts and never answers, and a proxy
//! that passes every byte on to a real agent but holds each answer for a while.

use ebb_testkit::bound_listener;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::task::JoinHandle;

/// A port that accepts every connection and then says nothing, reading nothing, until the
/// test ends: a host hung past its kernel.
#[derive(Debug)]
pub(crate) struct HungHost {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl HungHost {
    pub(crate) async fn start() -> Self {
        let (listener, addr) = bound_listener().await;
        let task = tokio::spawn(async move {
            let mut held = Vec::new();
            while let Ok((socket, _)) = listener.accept().await {
                held.push(socket); // kept open, never read or written
            }
        });
        Self { addr, task }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for HungHost {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A loopback proxy to `upstream` that holds the answer to each request whose method is
/// one of `methods` for `delay` before passing it on (requests go through at once). It
/// reads answers as they come, so it suits one request at a time per connection, as
/// reqwest sends them.
#[derive(Debug)]
pub(crate) struct DelayProxy {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl DelayProxy {
    pub(crate) async fn start(
        upstream: SocketAddr,
        delay: Duration,
        methods: &'static [&'static str],
    ) -> Self {
        let (listener, addr) = bound_listener().await;
        let task = tokio::spawn(async move {
            let mut connections = Vec::new();
            while let Ok((client, _)) = listener.accept().await {
                connections.retain(|task: &JoinHandle<()>| !task.is_finished());
                connections.push(tokio::spawn(forward(client, upstream, delay, methods)));
            }
        });
        Self { addr, task }
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for DelayProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(
    client: TcpStream,
    upstream: SocketAddr,
    delay: Duration,
    methods: &'static [&'static str],
) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    // Set when a request to hold was passed on; its answer's first bytes clear it.
    let hold = Arc::new(AtomicBool::new(false));
    let hold_up = hold.clone();
    let up = tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = client_read.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if methods
                .iter()
                .any(|method| buf[..n].starts_with(format!("{method} ").as_bytes()))
            {
                hold_up.store(true, Ordering::SeqCst);
            }
            if server_write.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    let mut buf = vec![0u8; 16 * 1024];
    while let Ok(n) = server_read.read(&mut buf).await {
        if n == 0 {
            break;
        }
        if hold.swap(false, Ordering::SeqCst) {
            tokio::time::sleep(delay).await;
        }
        if client_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    up.abort();
}
