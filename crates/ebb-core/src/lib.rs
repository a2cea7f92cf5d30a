//! Ebb's console core: everything the desktop shell and the CLI share. No Tauri here.
//!
//! The pure parts are crates of their own (no IO, no clock; time is a parameter): the
//! charts and the series they draw (`ebb-charts`), the pool planner (`ebb-plan`). Talking
//! to agents and storing their samples is `ebb-telemetry` (the client, the collector,
//! fan-out, the metrics store); this crate hands it the registry's hosts.

pub mod capacity;
pub mod catalog_store;
pub mod clock;
pub mod console;
pub mod console_charts;
pub mod console_costs;
mod console_pools;
pub mod console_rules;
pub mod cost_view;
pub mod db;
pub mod demo;
pub mod election;
pub mod enforcer;
pub mod metrics_api;
pub mod notify;
pub mod pool_history;
pub mod pools;
pub mod provider;
pub mod registry;
pub mod rules_live;
pub mod rules_replay;
pub mod system_fonts;
pub mod vault;
