//! Ebb's wire vocabulary, defined once.
//!
//! [`agent`] holds the JSON bodies of the host agent's HTTP API (`/v1/...`); [`ipc`] holds
//! what crosses the Tauri boundary to the webview; [`pools`] holds pools, the slider's
//! preview and the activity log (IPC and `ebb --json` alike). Both derive [`specta::Type`] so the
//! TypeScript side is generated from these definitions, never written by hand.
//!
//! Field names are `snake_case` on every wire. A reading the source could not give is
//! `None` (JSON `null`), never `0`.

pub mod access;
pub mod agent;
pub mod catalog;
pub mod ipc;
pub mod phrase;
pub mod plan;
pub mod pools;
pub mod reasons;
pub mod replay;
pub mod rule_paths;
pub mod rules;
pub mod showback;
pub mod slurm;
pub mod suggest;
pub mod words;
