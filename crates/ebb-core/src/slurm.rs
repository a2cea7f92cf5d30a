//! Pools bound to a Slurm partition: Slurm's commands with a timeout (`ctl`) and the
//! binder that keeps each bound pool's nodes leased, drained and released (`binder`),
//! over the pure decisions of `ebb_slurm`.

pub mod binder;
pub mod ctl;
