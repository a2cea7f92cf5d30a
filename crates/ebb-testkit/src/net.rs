//! Loopback ports bound once and handed over: nothing picks a port, lets it go and hopes
//! to bind it again.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A tokio listener on `127.0.0.1:0`, to hand to the server under test as it is.
pub async fn bound_listener() -> (TcpListener, SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback listener");
    let addr = listener.local_addr().expect("the listener's address");
    (listener, addr)
}

#[derive(Debug, Default)]
struct RelayState {
    upstream: Mutex<Option<SocketAddr>>,
    /// Requests whose method is one of these have their answer held this long.
    hold_answers: Mutex<Option<(&'static [&'static str], Duration)>>,
}

/// A loopback port held for the whole test, forwarding each connection to the agent behind
/// it now. An agent process restarted behind a relay keeps its address (the relay's) with no
/// port bound twice. With no agent behind it, a connection is closed at once, unanswered.
///
/// It can also hold the answers to some methods for a while ([`Relay::hold_answers`]), so a
/// test can stop a client after the agent has acted and before the client has heard, or
/// play a slow host.
#[derive(Debug)]
pub struct Relay {
    addr: SocketAddr,
    state: Arc<RelayState>,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    /// Binds `127.0.0.1:0`, forwarding to `upstream` (or to nothing yet).
    pub async fn start(upstream: Option<SocketAddr>) -> Self {
        let (listener, addr) = bound_listener().await;
        let state = Arc::new(RelayState {
            upstream: Mutex::new(upstream),
            ..RelayState::default()
        });
        let shared = state.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let upstream = *shared.upstream.lock().unwrap();
                let Some(upstream) = upstream else {
                    continue; // dropped: the client sees the connection closed
                };
                tokio::spawn(forward(client, upstream, shared.clone()));
            }
        });
        Self { addr, state, task }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`, the address to register.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// New connections go to `upstream` (`None`: closed unanswered).
    pub fn forward_to(&self, upstream: Option<SocketAddr>) {
        *self.state.upstream.lock().unwrap() = upstream;
    }

    /// While `Some`, the answer to every POST waits that long before it is passed on.
    pub fn hold_post_answers(&self, delay: Option<Duration>) {
        self.hold_answers(&["POST"], delay);
    }

    /// While `Some`, the answer to every request whose method is one of `methods` waits
    /// that long before it is passed on (the request itself goes through at once). Answers
    /// are read as they come, so it suits one request at a time per connection, as reqwest
    /// sends them.
    pub fn hold_answers(&self, methods: &'static [&'static str], delay: Option<Duration>) {
        *self.state.hold_answers.lock().unwrap() = delay.map(|delay| (methods, delay));
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn forward(client: TcpStream, upstream: SocketAddr, state: Arc<RelayState>) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return; // the agent is gone: the client's connection closes unanswered
    };
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    // Set when a request to hold was passed on; its answer's first bytes clear it.
    let held = Arc::new(AtomicBool::new(false));
    let held_up = held.clone();
    let state_up = state.clone();
    let up = tokio::spawn(async move {
        let mut buf = vec![0u8; 16 * 1024];
        while let Ok(n) = client_read.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let methods = state_up.hold_answers.lock().unwrap().map(|(m, _)| m);
            if methods.is_some_and(|methods| {
                methods
                    .iter()
                    .any(|method| buf[..n].starts_with(format!("{method} ").as_bytes()))
            }) {
                held_up.store(true, Ordering::SeqCst);
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
        if held.swap(false, Ordering::SeqCst) {
            let hold = *state.hold_answers.lock().unwrap();
            if let Some((_, delay)) = hold {
                tokio::time::sleep(delay).await;
            }
        }
        if client_write.write_all(&buf[..n]).await.is_err() {
            break;
        }
    }
    up.abort();
}
