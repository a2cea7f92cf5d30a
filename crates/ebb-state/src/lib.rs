//! Ebb's console state, for the console (`ebb-core`) and every front through it:
//!
//! - [`db`]: the console database, `console.db` (SQLite) or a shared PostgreSQL, one schema
//!   on both (`migrations/`), and [`clock`], the time its stores read;
//! - [`config`]: the data directory's `console.toml`, `slurm.toml` and price catalog, typed
//!   and read in one place ([`catalog_store`] keeps the catalog);
//! - [`registry`] and [`vault`]: the hosts and their tokens;
//! - [`pools`]: pools, their desired counts and leases, rules, teams and quotas, the activity
//!   log and each pool's view;
//! - [`access`] and [`audit`]: who a console acts as, the roles a shared database enforces,
//!   and the audit log's hash chain;
//! - [`election`]: which of the consoles sharing a database enforces.
//!
//! Everything here reads or writes the database or a file; nothing polls an agent, runs
//! the enforcer or draws a chart (that is `ebb-core` and the pure crates).

pub mod access;
pub mod audit;
pub mod catalog_store;
pub mod clock;
pub mod config;
pub mod db;
pub mod election;
pub mod errors;
pub mod pools;
pub mod registry;
pub mod vault;
