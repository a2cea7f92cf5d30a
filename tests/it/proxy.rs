//! A misbehaving host on loopback: a listener that accepts and never answers. (A slow host is
//! an agent behind `ebb_testkit::Relay` holding its answers.)

use ebb_testkit::bound_listener;
use std::net::SocketAddr;
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
