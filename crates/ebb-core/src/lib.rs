//! Ebb's console core: everything the desktop shell and the CLI share. No Tauri here.
//!
//! Pure modules (no IO, no clock; time is a parameter): [`series`], [`chart`]; the pool
//! planner (placement and reconcile) is its own pure crate, `ebb-plan`.
//! IO modules: [`client`] (HTTP to agents), [`collect`] (the polling loop).

pub mod calendar;
pub mod capacity;
pub mod catalog_store;
pub mod chart;
pub mod client;
pub mod clock;
pub mod collect;
pub mod console;
mod console_pools;
pub mod console_rules;
pub mod cost_view;
pub mod db;
pub mod downsample;
pub mod election;
pub mod enforcer;
pub mod fanout;
pub mod history;
pub mod metrics_api;
pub mod metrics_store;
pub mod notify;
pub mod pool_history;
pub mod pools;
pub mod provider;
pub mod raster;
pub mod registry;
pub mod rules_live;
pub mod rules_replay;
pub mod series;
pub mod vault;
