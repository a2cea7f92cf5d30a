//! Ebb's telemetry: how the console talks to agents and keeps what they report.
//!
//! - [`client`]: HTTP to one agent (reqwest with connect and total timeouts, bearer
//!   tokens, certificate pinning, failures classified in words); [`client::SharedHttp`]
//!   is the one client the many unpinned hosts share.
//! - [`collect`]: a poll task per host under one supervisor that publishes a snapshot per
//!   tick (pure `apply_poll`, `next_delay`).
//! - [`fanout`]: every host call as its own task under a concurrency limit.
//! - [`metrics_store`]: `metrics.db`, the samples at three resolutions, answered in
//!   `ebb_charts::history` types.
//! - [`prom`]: Prometheus as the metrics back end instead: its HTTP API with a timeout on
//!   every call, and the snapshot, per-GPU lines and heatmap read from it in the same types.
//!
//! It knows nothing of the console's registry, pools, vault or database: the console
//! hands it targets (an address, a token, a pinned fingerprint) and reads what it returns.

pub mod client;
pub mod collect;
pub mod fanout;
pub mod metrics_store;
pub mod prom;
