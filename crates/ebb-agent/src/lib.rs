//! The host agent as a library: a GPU probe, the sampler that publishes its readings, the
//! HTTP API over them, and the virtual fleet that serves many simulated hosts at once.
//!
//! `main.rs` is flags and glue over this crate.

pub mod admin;
pub mod api;
pub mod auth;
pub mod config;
pub mod fleet;
pub mod leases;
pub mod metrics;
pub mod nvml;
pub mod probe;
pub mod sampler;
pub mod sim;
pub mod spot;
pub mod tls;

pub use api::{AgentState, app};
pub use fleet::{Fleet, FleetConfig, FleetHost};
pub use probe::GpuProbe;
pub use sampler::{SampleHistory, Sampler};
pub use sim::{GpuModel, LoadProfile, SimConfig, Simulator};

use auth::Auth;
use axum_server::Handle;
use axum_server::tls_rustls::RustlsConfig;
use leases::store::{HostStore, StoreError};
use leases::{LeaseConfig, LeaseService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// Everything one agent is made of, before it runs.
#[derive(Debug)]
pub struct AgentParts {
    pub host: String,
    pub probe: Arc<dyn GpuProbe>,
    pub sample_interval: Duration,
    pub store: HostStore,
    pub lease_config: LeaseConfig,
    pub auth: Arc<Auth>,
    /// Serve HTTPS with this certificate; `None` serves plain HTTP.
    pub tls: Option<RustlsConfig>,
    /// The GPUs offered as spot, marked so in every published reading.
    pub spot: spot::SpotOffer,
    /// The simulator's owner reclaiming its own spot leases, when set.
    pub interruptions: Option<spot::Interruptions>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("cannot serve: {0}")]
    Io(#[from] std::io::Error),
}

/// One running agent: its sampler, its leases and its HTTP server, stopped together.
#[derive(Debug)]
pub struct RunningAgent {
    pub addr: SocketAddr,
    pub host: String,
    handle: Handle<SocketAddr>,
    server: JoinHandle<std::io::Result<()>>,
    sampler: Sampler,
    leases: Arc<LeaseService>,
}

impl RunningAgent {
    /// Samples the probe, restores the leases, and serves the API on `listener`.
    pub async fn start(parts: AgentParts, listener: TcpListener) -> Result<Self, StartError> {
        let addr = listener.local_addr()?;
        let sampler = Sampler::start(
            parts.host.clone(),
            parts.probe.clone(),
            parts.sample_interval,
            parts.spot,
        );
        let leases = LeaseService::start(
            &parts.host,
            parts.store,
            parts.probe.clone(),
            sampler.latest(),
            parts.lease_config,
        )
        .await?;
        if let Some(interruptions) = parts.interruptions {
            leases.start_interruptions(interruptions);
        }
        let state = AgentState {
            host: parts.host.clone(),
            backend: parts.probe.backend(),
            latest: sampler.latest(),
            history: sampler.history(),
            leases: leases.clone(),
            auth: parts.auth,
        };
        let service = app(state).into_make_service();
        let handle = Handle::new();
        let listener = listener.into_std()?;
        let server = match parts.tls {
            Some(tls) => {
                let server = axum_server::from_tcp_rustls(listener, tls)?.handle(handle.clone());
                tokio::spawn(async move { server.serve(service).await })
            }
            None => {
                let server = axum_server::from_tcp(listener)?.handle(handle.clone());
                tokio::spawn(async move { server.serve(service).await })
            }
        };
        Ok(Self {
            addr,
            host: parts.host,
            handle,
            server,
            sampler,
            leases,
        })
    }

    /// The agent's leases, as its API serves them.
    pub fn leases(&self) -> &Arc<LeaseService> {
        &self.leases
    }

    /// Stops serving (open requests get a second to finish), then leases and sampling.
    /// Workloads keep running: their leases outlive the agent.
    pub async fn stop(self) {
        self.handle.graceful_shutdown(Some(Duration::from_secs(1)));
        match self.server.await {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!(%error, host = %self.host, "agent server failed"),
            Err(error) => tracing::warn!(%error, host = %self.host, "agent server task panicked"),
        }
        self.leases.shutdown().await;
        self.sampler.stop().await;
    }
}
