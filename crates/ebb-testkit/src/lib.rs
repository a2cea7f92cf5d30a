//! Test support for Ebb's test suites (a dev-dependency only, never shipped).
//!
//! - [`TempDir`]: a fresh directory, removed on drop (kept for a failing test with
//!   `EBB_KEEP_TEST_DIRS=1`, for every test with `EBB_KEEP_TEST_DIRS=all`).
//! - [`eventually`]: polls a probe until it succeeds, or panics with what it saw last.
//! - [`bound_listener`] / [`Relay`]: ports are bound once and handed over as listeners, never
//!   picked, released and bound again; a relay holds a port for the whole test so an agent
//!   process can be restarted behind the same address.
//! - [`AgentProcess`] / [`Cli`]: the workspace's binaries as processes; an agent listens on
//!   `127.0.0.1:0` and the test reads the address it prints.
//! - [`SlurmCluster`]: a Slurm cluster from the machine's packages in a temp dir on loopback
//!   (its own munged and slurmctld, the test's slurmds); its ports are picked and released,
//!   as PostgreSQL's are, since Slurm takes them from its configuration only.
//! - [`PrometheusServer`]: Debian's Prometheus on the test's scrape configuration, on a port
//!   it bound itself (read from its log); stopped and restarted in place for fault tests.
//! - [`fuzz`]: inputs for the parsers' never-panic properties (arbitrary bytes, mutations
//!   of valid files) and a runner that counts the cases.
//! - `TestFleet` (feature `fleet`): simulated agents in this process; with `telemetry`, as
//!   collector targets and registry entries.
//! - `TestConsole` (feature `console`): a console on a temp data directory with its hosts.
//!
//! The rules the suites keep. No port is picked and hoped for: a server in the test's
//! process gets a listener bound on `127.0.0.1:0`, a process listens on port 0 and prints
//! its address; only PostgreSQL, Slurm and tauri-driver take port numbers, and each is
//! started again on other ports when one was taken. Every wait is `eventually(what,
//! timeout, probe)`: a `sleep` never stands in for a state (the few left are what their test
//! is about, and say so), and a wait that runs out panics with what it waited for and the
//! last thing the probe saw. `eventually` runs on tokio's
//! clock, so a test on paused time waits for nothing; suites that await real sockets or
//! PostgreSQL's clock stay on real time. With [`POSTGRES_ENV`] set, every [`TempDir`] names
//! a fresh database on that server in its `console.toml`: how ebb-core's suites run a
//! second time, on PostgreSQL.

#[cfg(feature = "console")]
mod console;
#[cfg(feature = "fleet")]
mod fleet;
#[cfg(feature = "telemetry")]
mod fleet_view;
pub mod fuzz;
mod net;
mod postgres;
mod process;
mod prometheus;
mod slurm;
mod temp;
mod wait;

#[cfg(feature = "console")]
pub use console::{TestConsole, TestConsoleBuilder};
#[cfg(feature = "fleet")]
pub use fleet::{TestFleet, TestFleetBuilder};
pub use net::{Relay, bound_listener};
pub use postgres::PostgresServer;
pub use process::{AgentCommand, AgentProcess, Cli, workspace_bin};
pub use prometheus::PrometheusServer;
pub use slurm::{SlurmCluster, SlurmSpec};
pub use temp::{POSTGRES_ENV, TempDir};
pub use wait::{Probe, Timeout, eventually, eventually_blocking, try_eventually};
