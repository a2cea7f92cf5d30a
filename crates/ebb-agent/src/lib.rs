//! The host agent as a library: a GPU probe, the sampler that publishes its readings, the
//! HTTP API over them, and the virtual fleet that serves many simulated hosts at once.
//!
//! `main.rs` is flags and glue over this crate.

pub mod api;
pub mod fleet;
pub mod nvml;
pub mod probe;
pub mod sampler;
pub mod sim;

pub use api::{AgentState, app};
pub use fleet::{Fleet, FleetConfig, FleetHost};
pub use probe::GpuProbe;
pub use sampler::Sampler;
pub use sim::{GpuModel, LoadProfile, SimConfig, Simulator};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// One running agent: its sampler and its HTTP server, stopped together.
#[derive(Debug)]
pub struct RunningAgent {
    pub addr: SocketAddr,
    pub host: String,
    shutdown: watch::Sender<bool>,
    server: JoinHandle<std::io::Result<()>>,
    sampler: Sampler,
}

impl RunningAgent {
    /// Samples `probe` every `interval` and serves the API on `listener`.
    pub fn start(
        host: String,
        probe: Arc<dyn GpuProbe>,
        interval: Duration,
        listener: TcpListener,
    ) -> std::io::Result<Self> {
        let addr = listener.local_addr()?;
        let sampler = Sampler::start(host.clone(), probe.clone(), interval);
        let state = AgentState::new(host.clone(), probe.backend(), sampler.latest());
        let (shutdown, mut stop) = watch::channel(false);
        let server = tokio::spawn(async move {
            axum::serve(listener, app(state))
                .with_graceful_shutdown(async move {
                    let _ = stop.wait_for(|stopped| *stopped).await;
                })
                .await
        });
        Ok(Self {
            addr,
            host,
            shutdown,
            server,
            sampler,
        })
    }

    /// Stops serving, waits for the server to finish, then stops sampling.
    pub async fn stop(self) {
        let _ = self.shutdown.send(true);
        if let Err(error) = self.server.await {
            tracing::warn!(%error, host = %self.host, "agent server task ended abnormally");
        }
        self.sampler.stop().await;
    }
}
