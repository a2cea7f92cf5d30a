//! Pools bound to a Slurm partition: Slurm's commands with a timeout (`ctl`), the one
//! trait the binder asks Slurm through, over them or the demo's simulated partition
//! (`api`), and the binder that keeps each bound pool's nodes leased, drained and released
//! (`binder`), over the pure decisions of `ebb_slurm`.

pub mod api;
pub mod binder;
pub mod ctl;
