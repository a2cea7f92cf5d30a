//! The virtual fleet: many simulated hosts in one process, each on its own loopback port.

use crate::RunningAgent;
use crate::sim::{GpuModel, LoadProfile, SimConfig, Simulator};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;

/// The regions hosts are spread over, round-robin.
pub const REGIONS: [&str; 3] = ["cn-north", "cn-east", "cn-south"];

/// How many hosts, what they carry, and where they listen.
#[derive(Debug, Clone, PartialEq)]
pub struct FleetConfig {
    pub hosts: u32,
    pub gpus_per_host: u32,
    /// The first host's port; host `i` listens on `base_port + i`. `0` takes free ports.
    pub base_port: u16,
    pub listen_ip: IpAddr,
    pub seed: u64,
    pub profile: LoadProfile,
    pub sample_interval: Duration,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            hosts: 3,
            gpus_per_host: 4,
            base_port: 0,
            listen_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
            seed: 1,
            profile: LoadProfile::Tidal { period_s: 60.0 },
            sample_interval: Duration::from_secs(1),
        }
    }
}

/// One host of the fleet, as a console would register it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FleetHost {
    pub name: String,
    pub region: String,
    pub model: GpuModel,
    pub url: String,
}

/// A running virtual fleet; [`Fleet::stop`] ends every host.
#[derive(Debug)]
pub struct Fleet {
    hosts: Vec<FleetHost>,
    agents: Vec<RunningAgent>,
}

impl Fleet {
    /// Binds every host's port, then starts them all.
    pub async fn start(config: &FleetConfig) -> std::io::Result<Self> {
        let mut hosts = Vec::with_capacity(config.hosts as usize);
        let mut agents = Vec::with_capacity(config.hosts as usize);
        for i in 0..config.hosts {
            let port = if config.base_port == 0 {
                0
            } else {
                config.base_port.checked_add(i as u16).ok_or_else(|| {
                    std::io::Error::other(format!(
                        "--base-port {} + {} hosts runs past port 65535",
                        config.base_port, config.hosts
                    ))
                })?
            };
            let listener = TcpListener::bind(SocketAddr::new(config.listen_ip, port)).await?;
            let region = REGIONS[i as usize % REGIONS.len()];
            let model = GpuModel::ALL[i as usize % GpuModel::ALL.len()];
            let name = format!("{region}-{:03}", i / REGIONS.len() as u32 + 1);
            let simulator = Simulator::new(SimConfig {
                host: name.clone(),
                model,
                gpu_count: config.gpus_per_host,
                seed: config.seed.wrapping_add(u64::from(i)),
                profile: config.profile,
            });
            let agent = RunningAgent::start(
                name.clone(),
                Arc::new(simulator),
                config.sample_interval,
                listener,
            )?;
            hosts.push(FleetHost {
                name,
                region: region.to_string(),
                model,
                url: format!("http://{}", agent.addr),
            });
            agents.push(agent);
        }
        Ok(Self { hosts, agents })
    }

    pub fn hosts(&self) -> &[FleetHost] {
        &self.hosts
    }

    pub async fn stop(self) {
        for agent in self.agents {
            agent.stop().await;
        }
    }
}
