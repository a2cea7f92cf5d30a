//! A console on a temp data directory.

use crate::{TempDir, TestFleet};
use ebb_core::clock::SharedClock;
use ebb_core::console::{Console, ConsoleOptions, TokenStore};
use ebb_core::enforcer::EnforcerConfig;
use ebb_telemetry::collect::CollectorConfig;
use ebb_wire::ipc::HostEntry;
use std::path::Path;
use std::time::Duration;

/// How to open a [`TestConsole`]: the file token store, a fast enforcer, no hosts.
#[derive(Debug, Clone)]
pub struct TestConsoleBuilder {
    tag: String,
    token_store: TokenStore,
    collector: CollectorConfig,
    enforcer: EnforcerConfig,
    clock: Option<SharedClock>,
    hosts: Vec<HostEntry>,
    metrics: Option<String>,
    metrics_listen: Option<std::net::SocketAddr>,
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

    /// Reads readings from Prometheus at `url` (`http://…`) instead of collecting.
    pub fn prometheus(mut self, url: &str) -> Self {
        self.metrics = Some(format!("prometheus+{url}"));
        self
    }

    /// Serves `POST /v1/metrics` and the Prometheus service discovery on `listen`
    /// (`127.0.0.1:0`: a port of its own, read back with `Console::metrics_api_addr`).
    pub fn metrics_listen(mut self, listen: std::net::SocketAddr) -> Self {
        self.metrics_listen = Some(listen);
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
            metrics: self.metrics.clone(),
            metrics_listen: self.metrics_listen,
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
            metrics: None,
            metrics_listen: None,
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
