//! The console's view of a [`TestFleet`]: collector targets, registry entries, and the
//! leases its agents hold, asked over HTTP.

use crate::TestFleet;
use ebb_telemetry::client::{AgentAccess, AgentClient, ClientConfig};
use ebb_telemetry::collect::Target;
use ebb_wire::agent::LeaseState;
use ebb_wire::ipc::HostEntry;

impl TestFleet {
    /// Every host as a collector target, without a token.
    pub fn targets(&self) -> Vec<Target> {
        self.hosts()
            .iter()
            .map(|host| Target {
                name: host.name.clone(),
                region: host.region.clone(),
                access: AgentAccess::open(&host.url),
            })
            .collect()
    }

    /// Every host as the registry keeps it.
    pub fn entries(&self) -> Vec<HostEntry> {
        self.hosts()
            .iter()
            .map(|host| HostEntry {
                name: host.name.clone(),
                url: host.url.clone(),
                region: host.region.clone(),
                labels: Default::default(),
                fingerprint: None,
                has_token: false,
                draining: false,
            })
            .collect()
    }

    /// The active leases the agents hold for `pool_id`: (host, GPU uuid), asked over HTTP.
    pub async fn held(&self, pool_id: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for host in self.hosts() {
            let client = AgentClient::new(&host.url, ClientConfig::default())
                .unwrap_or_else(|error| panic!("{}: {error}", host.url));
            let list = client
                .leases()
                .await
                .unwrap_or_else(|error| panic!("the leases of {}: {error}", host.name));
            for lease in list.leases {
                if lease.pool_id == pool_id && lease.state == LeaseState::Active {
                    out.extend(
                        lease
                            .gpu_uuids
                            .into_iter()
                            .map(|uuid| (host.name.clone(), uuid)),
                    );
                }
            }
        }
        out
    }
}
