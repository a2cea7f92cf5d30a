//! Simulated agents in the test's own process, on loopback ports they bind themselves.

use ebb_agent::fleet::SpotHost;
use ebb_agent::spot::Interruptions;
use ebb_agent::{Fleet, FleetConfig, FleetHost, GpuModel};
use std::path::Path;
use std::time::Duration;

/// How to start a [`TestFleet`]: fast samples and a short release grace, for tests.
#[derive(Debug, Clone)]
pub struct TestFleetBuilder {
    config: FleetConfig,
}

impl TestFleetBuilder {
    pub fn hosts(mut self, hosts: u32) -> Self {
        self.config.hosts = hosts;
        self
    }

    pub fn gpus_per_host(mut self, gpus: u32) -> Self {
        self.config.gpus_per_host = gpus;
        self
    }

    pub fn sample_interval(mut self, interval: Duration) -> Self {
        self.config.sample_interval = interval;
        self
    }

    pub fn release_grace(mut self, grace: Duration) -> Self {
        self.config.release_grace = grace;
        self
    }

    /// How long each host keeps a released lease (default: the agent's 7 days).
    pub fn lease_retention(mut self, retention: Duration) -> Self {
        self.config.lease_retention = retention;
        self
    }

    /// Every host carries `model` (default: the simulator's models in turn).
    pub fn model(mut self, model: GpuModel) -> Self {
        self.config.model = Some(model);
        self
    }

    /// Every host offers its GPUs as spot, so its owner may reclaim their leases;
    /// default: none.
    pub fn spot(self) -> Self {
        self.spot_hosts([SpotHost::All])
    }

    /// These hosts offer their GPUs as spot (by model or index).
    pub fn spot_hosts(mut self, hosts: impl IntoIterator<Item = SpotHost>) -> Self {
        self.config.spot.extend(hosts);
        self
    }

    /// The spot hosts' simulated owner reclaims their leases by `process` (each host on
    /// the fleet's seed plus its index).
    pub fn interruptions(mut self, process: Interruptions) -> Self {
        self.config.interruptions = Some(process);
        self
    }

    /// Leases kept in SQLite under `dir` (default: in memory).
    pub fn state_dir(mut self, dir: &Path) -> Self {
        self.config.state_dir = Some(dir.to_path_buf());
        self
    }

    /// Binds every host on `127.0.0.1:0`, then serves them all.
    pub async fn start(self) -> TestFleet {
        let fleet = Fleet::start(&self.config)
            .await
            .unwrap_or_else(|error| panic!("the test fleet did not start: {error}"));
        TestFleet { fleet: Some(fleet) }
    }
}

/// N simulated agents served in this process (the agent crate's virtual fleet).
///
/// Stop it with [`TestFleet::stop`]; dropped without, its agents stop with the runtime.
#[derive(Debug)]
pub struct TestFleet {
    fleet: Option<Fleet>,
}

impl TestFleet {
    /// Three hosts of four GPUs, sampled every 50 ms, releases after 100 ms.
    pub fn builder() -> TestFleetBuilder {
        TestFleetBuilder {
            config: FleetConfig {
                sample_interval: Duration::from_millis(50),
                release_grace: Duration::from_millis(100),
                ..FleetConfig::default()
            },
        }
    }

    pub fn hosts(&self) -> &[FleetHost] {
        self.fleet.as_ref().expect("a running fleet").hosts()
    }

    /// Every host forgets its released leases as its timer would at `now_ms` (Unix ms;
    /// `u64::MAX` forgets them all). Returns how many went.
    pub async fn prune_released(&self, now_ms: u64) -> usize {
        self.fleet
            .as_ref()
            .expect("a running fleet")
            .prune_released(now_ms)
            .await
            .unwrap_or_else(|error| panic!("pruning the test fleet's leases: {error}"))
    }

    pub async fn stop(mut self) {
        if let Some(fleet) = self.fleet.take() {
            fleet.stop().await;
        }
    }
}
