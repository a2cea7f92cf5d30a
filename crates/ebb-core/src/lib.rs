//! Ebb's console core: everything the desktop shell and the CLI share. No Tauri here.
//!
//! The pure parts are crates of their own (no IO, no clock; time is a parameter): the
//! charts and the series they draw (`ebb-charts`), the pool planner (`ebb-reconcile`). Talking
//! to agents and storing their samples is `ebb-telemetry` (the client, the collector,
//! fan-out, the metrics store); this crate hands it the registry's hosts.
//!
//! The console's state (the database, registry, vault, election, catalog, configuration,
//! the pools' store, validation and views) is `ebb-state`, re-exported here by its module
//! names. In folders by concern: `metrics_source/` (the embedded collector or
//! Prometheus), `enforce/` (the reconcile loop, the provider seam, capacity, pool history),
//! `rules/` (rules live, their console operations, replay and suggest, the metrics
//! endpoint), `slurm/` (the binder); the console service every front calls is
//! `console*.rs` and `demo.rs` at the top, its errors mapped once in `errors.rs`.

pub mod changes;
pub mod console;
mod console_access;
pub mod console_charts;
pub mod console_costs;
mod console_pools;
pub mod console_showback;
pub mod console_slurm;
pub mod cost_view;
pub mod demo;
pub mod enforce;
pub mod errors;
pub mod metrics_source;
pub mod rules;
pub mod slurm;
pub mod system_fonts;

// Each module by its own name too (`ebb_core::registry`, `ebb_core::enforcer`...): the
// folders group them by concern, the paths stay short.
pub use ebb_state::{
    access, audit, catalog_store, clock, config, db, election, pools, registry, vault,
};
pub use enforce::{capacity, enforcer, pool_history, provider};
pub use rules::{console_rules, metrics_api, rules_live, rules_replay};
