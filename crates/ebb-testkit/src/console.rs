//! A console on a temp data directory, and the console's view of a [`TestFleet`].

use crate::{TempDir, TestFleet};
use ebb_core::client::{AgentAccess, AgentClient, ClientConfig};
use ebb_core::clock::SharedClock;
use ebb_core::collect::{CollectorConfig, Target};
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::enforcer::EnforcerConfig;
use ebb_wire::agent::LeaseState;
use ebb_wire::ipc::HostEntry;
use std::path::Path;
use std::time::Duration;

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

/// How to open a [`TestConsole`]: the file token store, a fast enforcer, no hosts.
#[derive(Debug, Clone)]
pub struct TestConsoleBuilder {
    tag: String,
    token_store: TokenStore,
    collector: CollectorConfig,
    enforcer: EnforcerConfig,
    clock: Option<SharedClock>,
    hosts: Vec<HostEntry>,
}

impl TestConsoleBuilder {
    pub fn token_store(mut self, store: TokenStore) -> Self {
        self.token_store = store;
        self
    }

    pub fn collector(mut self, config: CollectorConfig) -> Self {
        self.collector = config;
        self
    }

    /// A reconcile pass every `interval`; hosts written off after `grace`.
    pub fn enforcer(mut self, interval: Duration, grace: Duration) -> Self {
        self.enforcer = EnforcerConfig {
            interval,
            grace,
            ..EnforcerConfig::default()
        };
        self
    }

    /// The console reads now from `clock` (a `ManualClock` in a test that moves time).
    pub fn clock(mut self, clock: SharedClock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Registers `host` once the console is open.
    pub fn host(mut self, host: HostEntry) -> Self {
        self.hosts.push(host);
        self
    }

    /// Registers every host of `fleet`.
    pub fn fleet(mut self, fleet: &TestFleet) -> Self {
        self.hosts.extend(fleet.entries());
        self
    }

    /// The options a console on `data_dir` opens with.
    pub fn options(&self, data_dir: &Path) -> ConsoleOptions {
        let mut options = ConsoleOptions {
            token_store: self.token_store,
            collector: self.collector,
            enforcer: self.enforcer,
            ..ConsoleOptions::new(data_dir)
        };
        if let Some(clock) = &self.clock {
            options.clock = clock.clone();
        }
        options
    }

    /// Opens the console on a fresh temp data directory and registers the hosts.
    pub async fn open(self) -> TestConsole {
        let dir = TempDir::new(&self.tag);
        let console = Console::open(self.options(dir.path()))
            .await
            .unwrap_or_else(|error| panic!("the test console did not open: {error}"));
        for host in &self.hosts {
            console
                .upsert_host(host, None)
                .await
                .unwrap_or_else(|error| panic!("registering {}: {error}", host.name));
        }
        TestConsole { console, dir }
    }
}

/// A console on its own temp data directory (removed with it). Derefs to [`Console`].
#[derive(Debug)]
pub struct TestConsole {
    console: Console,
    dir: TempDir,
}

impl TestConsole {
    /// `tag` names the data directory.
    pub fn builder(tag: &str) -> TestConsoleBuilder {
        TestConsoleBuilder {
            tag: tag.into(),
            token_store: TokenStore::File,
            collector: CollectorConfig {
                interval: Duration::from_millis(100),
                ..CollectorConfig::default()
            },
            enforcer: EnforcerConfig {
                interval: Duration::from_millis(200),
                grace: Duration::from_secs(2),
                ..EnforcerConfig::default()
            },
            clock: None,
            hosts: Vec::new(),
        }
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Stops collecting and enforcing, then removes the data directory.
    pub async fn shutdown(self) {
        self.console.shutdown().await;
    }
}

impl std::ops::Deref for TestConsole {
    type Target = Console;
    fn deref(&self) -> &Console {
        &self.console
    }
}
