//! The console core against agents served in-process on loopback.

mod collect;
mod downsample;
mod metrics_store;
mod registry;
