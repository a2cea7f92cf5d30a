//! The console core against agents served in-process on loopback.

mod charts;
mod collect;
mod downsample;
mod election;
mod export_fonts;
mod failover;
mod lease_history;
mod metrics_store;
mod parsers;
mod pinning;
mod pools;
mod provider;
mod registry;
mod rules;
mod rules_replay;
