//! Telemetry against agents served in-process on loopback, and the metrics store.

mod collect;
mod metrics_store;
