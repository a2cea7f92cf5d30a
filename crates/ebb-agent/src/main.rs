//! `ebb-agent`: flags and glue over the `ebb_agent` library.

use anyhow::Context;
use clap::{Parser, Subcommand};
use ebb_agent::{Fleet, FleetConfig, GpuModel, LoadProfile, RunningAgent, SimConfig, Simulator};
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Parser)]
#[command(
    name = "ebb-agent",
    version,
    about = "Ebb host agent: serves this host's GPUs over HTTP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve one host's GPUs (simulated for now).
    Serve {
        /// Address to listen on; port 0 takes a free port (printed on start).
        #[arg(long, default_value = "127.0.0.1:7070", env = "EBB_AGENT_LISTEN")]
        listen: SocketAddr,
        /// The name this host reports.
        #[arg(long, default_value = "sim-host")]
        host_name: String,
        /// Simulated GPU model: H800, A100, V100 or Ascend910B.
        #[arg(long, default_value = "A100")]
        model: GpuModel,
        /// Number of simulated GPUs.
        #[arg(long, default_value_t = 8)]
        gpus: u32,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Period of the simulated tide, seconds.
        #[arg(long, default_value_t = 60.0)]
        period_s: f64,
        #[arg(long, default_value_t = 1000)]
        interval_ms: u64,
    },
    /// Serve many simulated hosts from one process, each on its own port.
    Fleet {
        #[arg(long, default_value_t = 3)]
        hosts: u32,
        #[arg(long, default_value_t = 8)]
        gpus_per_host: u32,
        /// Host i listens on base-port + i; 0 takes free ports.
        #[arg(long, default_value_t = 7100)]
        base_port: u16,
        #[arg(long, default_value = "127.0.0.1")]
        listen_ip: IpAddr,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        #[arg(long, default_value_t = 1000)]
        interval_ms: u64,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    match Cli::parse().command {
        Command::Serve {
            listen,
            host_name,
            model,
            gpus,
            seed,
            period_s,
            interval_ms,
        } => {
            let listener = tokio::net::TcpListener::bind(listen)
                .await
                .with_context(|| format!("cannot listen on {listen}"))?;
            let simulator = Simulator::new(SimConfig {
                host: host_name.clone(),
                model,
                gpu_count: gpus,
                seed,
                profile: LoadProfile::Tidal { period_s },
            });
            let agent = RunningAgent::start(
                host_name,
                Arc::new(simulator),
                Duration::from_millis(interval_ms),
                listener,
            )?;
            // Tests and scripts read this line to learn the port.
            println!("listening on http://{}", agent.addr);
            wait_for_shutdown().await;
            agent.stop().await;
        }
        Command::Fleet {
            hosts,
            gpus_per_host,
            base_port,
            listen_ip,
            seed,
            interval_ms,
        } => {
            let config = FleetConfig {
                hosts,
                gpus_per_host,
                base_port,
                listen_ip,
                seed,
                sample_interval: Duration::from_millis(interval_ms),
                ..FleetConfig::default()
            };
            let fleet = Fleet::start(&config)
                .await
                .context("cannot start the virtual fleet")?;
            for host in fleet.hosts() {
                println!("{} {} {} {}", host.name, host.region, host.model, host.url);
            }
            wait_for_shutdown().await;
            fleet.stop().await;
        }
    }
    Ok(())
}

async fn wait_for_shutdown() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
    tracing::info!("shutting down");
}
