//! The console's state: the database (`console.db` or a shared PostgreSQL) and the clock it
//! reads, the host registry, the token vault, the enforcer election and the active price
//! catalog.

pub mod access;
pub mod audit;
pub mod catalog_store;
pub mod clock;
pub mod config;
pub mod db;
pub mod election;
pub mod registry;
pub mod vault;
