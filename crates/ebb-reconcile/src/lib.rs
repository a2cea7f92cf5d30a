//! Ebb's pool planner, pure: no IO, no clock, no runtime (its `Cargo.toml` proves it, and
//! `cargo xtask test` checks). Observations in, decisions out:
//!
//! - [`placement`]: which free GPUs a pool takes, and which of its leases it gives back first;
//! - [`reconcile`]: from what the agents report, what to rent, release and write off so
//!   every pool moves toward its desired count, and each pool's status;
//! - [`spot`]: the pool's mix (base, on-demand floor, spot share) and the spot circuit
//!   breaker per model × region;
//! - [`settle`]: what the answers to those requests mean (outcomes, history to write,
//!   activity reasons, notes, how each open change stands).
//!
//! The enforcer in `ebb-core` observes, calls [`reconcile::plan`], carries the plan out
//! (the only IO), and writes what [`settle`] makes of the answers.

pub mod placement;
pub mod reconcile;
pub mod settle;
pub mod spot;
