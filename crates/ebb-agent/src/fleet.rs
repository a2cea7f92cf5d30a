//! The virtual fleet: many simulated hosts in one process, each on its own loopback port
//! with its own GPUs, leases and state (rows keyed by host in one lease database).

use crate::auth::Auth;
use crate::leases::LeaseConfig;
use crate::leases::store::{LeaseDb, StoreError};
use crate::sim::{GpuModel, LoadProfile, SimConfig, Simulator};
use crate::spot::{Interruptions, SpotOffer};
use crate::{AgentParts, RunningAgent, StartError};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
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
    /// Where the fleet keeps its leases; `None` keeps them in memory.
    pub state_dir: Option<PathBuf>,
    pub release_grace: Duration,
    /// How long each host keeps a released lease (see [`LeaseConfig::retention`]).
    pub lease_retention: Duration,
    /// Every host carries this model; `None` cycles through the simulator's models.
    pub model: Option<GpuModel>,
    /// The hosts that offer all their GPUs as spot (a host any of these names); none by
    /// default.
    pub spot: Vec<SpotHost>,
    /// The spot hosts' owner reclaims their spot leases by this process (each host on its
    /// own seed, the fleet's seed plus its index); `None`: only when told
    /// ([`Fleet::reclaim`]).
    pub interruptions: Option<Interruptions>,
    /// How long each lease's workload takes to come up (see [`SimConfig::startup`]).
    pub startup: Duration,
}

/// A host of the fleet that offers its GPUs as spot, as `ebb-agent fleet --spot` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpotHost {
    /// Every host.
    All,
    /// The hosts carrying this model.
    Model(GpuModel),
    /// The host with this index (from 0, in the fleet's order).
    Index(u32),
}

impl SpotHost {
    fn names(self, index: u32, model: GpuModel) -> bool {
        match self {
            SpotHost::All => true,
            SpotHost::Model(spot) => spot == model,
            SpotHost::Index(spot) => spot == index,
        }
    }
}

/// Parses `--spot`: `all`, or a list of models and host indexes (`H800,3`).
pub fn parse_spot_hosts(text: &str) -> Result<Vec<SpotHost>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|part| !part.is_empty())
        .map(|part| {
            if part.eq_ignore_ascii_case("all") {
                Ok(SpotHost::All)
            } else if let Ok(index) = part.parse() {
                Ok(SpotHost::Index(index))
            } else {
                part.parse().map(SpotHost::Model).map_err(|_| {
                    format!(
                        "`{part}` is neither `all`, a host index nor a GPU model (H800, A100, V100, Ascend910B)"
                    )
                })
            }
        })
        .collect()
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
            state_dir: None,
            release_grace: Duration::from_secs(5),
            lease_retention: crate::leases::DEFAULT_RETENTION,
            model: None,
            spot: Vec::new(),
            interruptions: None,
            startup: Duration::ZERO,
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
    /// It offers its GPUs as spot.
    pub spot: bool,
}

/// A running virtual fleet; [`Fleet::stop`] ends every host.
#[derive(Debug)]
pub struct Fleet {
    hosts: Vec<FleetHost>,
    agents: Vec<RunningAgent>,
}

impl Fleet {
    /// Binds every host's port, then starts them all. Open (no tokens): loopback only.
    pub async fn start(config: &FleetConfig) -> Result<Self, StartError> {
        if !config.listen_ip.is_loopback() {
            return Err(StartError::Io(std::io::Error::other(format!(
                "the virtual fleet serves without tokens, so only on loopback, not {}",
                config.listen_ip
            ))));
        }
        let db = match &config.state_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)?;
                LeaseDb::open(dir).await?
            }
            None => LeaseDb::in_memory().await?,
        };
        if let Some(SpotHost::Index(index)) = config
            .spot
            .iter()
            .find(|spot| matches!(spot, SpotHost::Index(index) if *index >= config.hosts))
        {
            return Err(StartError::Io(std::io::Error::other(format!(
                "--spot: the fleet has no host {index}: it has {} (0 to {})",
                config.hosts,
                config.hosts.saturating_sub(1)
            ))));
        }
        let auth = Arc::new(Auth::open());
        let mut hosts = Vec::with_capacity(config.hosts as usize);
        let mut agents = Vec::with_capacity(config.hosts as usize);
        for i in 0..config.hosts {
            let port = if config.base_port == 0 {
                0
            } else {
                u16::try_from(u32::from(config.base_port) + i).map_err(|_| {
                    std::io::Error::other(format!(
                        "--base-port {} + {} hosts runs past port 65535",
                        config.base_port, config.hosts
                    ))
                })?
            };
            let listener = TcpListener::bind(SocketAddr::new(config.listen_ip, port)).await?;
            let region = REGIONS[i as usize % REGIONS.len()];
            let model = config
                .model
                .unwrap_or(GpuModel::ALL[i as usize % GpuModel::ALL.len()]);
            let name = format!("{region}-{:03}", i / REGIONS.len() as u32 + 1);
            let seed = config.seed.wrapping_add(u64::from(i));
            let simulator = Simulator::new(SimConfig {
                host: name.clone(),
                gpus: vec![model; config.gpus_per_host as usize],
                seed,
                profile: config.profile.clone(),
                startup: config.startup,
            });
            let spot = config.spot.iter().any(|spot| spot.names(i, model));
            let agent = RunningAgent::start(
                AgentParts {
                    host: name.clone(),
                    probe: Arc::new(simulator),
                    sample_interval: config.sample_interval,
                    store: db.host(&name),
                    lease_config: LeaseConfig {
                        release_grace: config.release_grace,
                        log_dir: config
                            .state_dir
                            .as_ref()
                            .map(|dir| dir.join("logs").join(&name)),
                        retention: config.lease_retention,
                    },
                    auth: auth.clone(),
                    tls: None,
                    spot: if spot {
                        SpotOffer::All
                    } else {
                        SpotOffer::None
                    },
                    interruptions: config
                        .interruptions
                        .clone()
                        .filter(|_| spot)
                        .map(|process| Interruptions { seed, ..process }),
                },
                listener,
            )
            .await?;
            hosts.push(FleetHost {
                name,
                region: region.to_string(),
                model,
                url: format!("http://{}", agent.addr),
                spot,
            });
            agents.push(agent);
        }
        Ok(Self { hosts, agents })
    }

    pub fn hosts(&self) -> &[FleetHost] {
        &self.hosts
    }

    /// Leases GPUs on host `index` as its own API would grant them (`key`: the request's
    /// idempotency key): the demo's other tenants hold GPUs this way.
    pub async fn lease(
        &self,
        index: usize,
        key: &str,
        request: &ebb_wire::agent::LeaseRequest,
    ) -> Result<ebb_wire::agent::Lease, String> {
        let agent = self
            .agents
            .get(index)
            .ok_or_else(|| format!("the fleet has no host {index}"))?;
        agent
            .leases()
            .create(key, request)
            .await
            .map(|created| created.lease)
            .map_err(|error| error.to_string())
    }

    /// The host's owner takes lease `lease_id` back on host `index` with `notice` (as
    /// `ebb-agent reclaim` does): released at the deadline whatever its holder does.
    pub async fn reclaim(
        &self,
        index: usize,
        lease_id: &str,
        notice: std::time::Duration,
    ) -> Result<ebb_wire::agent::Lease, String> {
        let agent = self
            .agents
            .get(index)
            .ok_or_else(|| format!("the fleet has no host {index}"))?;
        agent
            .leases()
            .reclaim(lease_id, notice)
            .await
            .map_err(|error| error.to_string())
    }

    /// Prunes every host's released leases as its timer would at `now_ms` (Unix ms): a
    /// test or a tool need not wait out the retention. Returns how many leases went.
    pub async fn prune_released(&self, now_ms: u64) -> Result<usize, StoreError> {
        let mut pruned = 0;
        for agent in &self.agents {
            pruned += agent.leases().prune_released(now_ms).await?;
        }
        Ok(pruned)
    }

    /// Stops every host at once (each gives open requests a second to finish).
    pub async fn stop(self) {
        let mut stopping = tokio::task::JoinSet::new();
        for agent in self.agents {
            stopping.spawn(agent.stop());
        }
        while stopping.join_next().await.is_some() {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spot_hosts_are_all_models_or_indexes_and_anything_else_is_named() {
        assert_eq!(parse_spot_hosts("all").unwrap(), [SpotHost::All]);
        assert_eq!(
            parse_spot_hosts("H800, 3").unwrap(),
            [SpotHost::Model(GpuModel::H800), SpotHost::Index(3)]
        );
        assert_eq!(parse_spot_hosts("").unwrap(), []);
        let error = parse_spot_hosts("H900").unwrap_err();
        assert!(error.contains("`H900`"), "{error}");
        assert!(SpotHost::Model(GpuModel::V100).names(2, GpuModel::V100));
        assert!(!SpotHost::Index(1).names(2, GpuModel::V100));
    }

    #[tokio::test]
    async fn a_spot_host_index_the_fleet_lacks_is_refused() {
        let error = Fleet::start(&FleetConfig {
            hosts: 2,
            spot: vec![SpotHost::Index(2)],
            ..FleetConfig::default()
        })
        .await
        .unwrap_err();
        assert!(
            error
                .to_string()
                .contains("--spot: the fleet has no host 2"),
            "{error}"
        );
    }
}
