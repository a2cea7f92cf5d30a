//! Slurm for Ebb, pure: no IO, no clock, no runtime (its `Cargo.toml` proves it, and
//! `cargo xtask test` checks). Text and values in, decisions out:
//!
//! - [`hostlist`]: Slurm's hostlist syntax (`gpu[1-4,7]`), expanded and compressed, for
//!   `ebb slurm resume|suspend HOSTLIST` (Slurm's ResumeProgram and SuspendProgram);
//! - [`queue`]: `squeue` and `sinfo` text into jobs and nodes, and each partition's
//!   [`queue::QueueMetrics`] (the GPUs pending for resources, allocated, the oldest wait);
//! - [`drain`]: the scale-in decision: which nodes drain, which go back, which are kept
//!   to the end of their paid unit, whose jobs are requeued, all under a disruption budget.
//!   A job is never ended without `force` or the drain's cost cap;
//! - [`binding`]: the console's `slurm.toml`: which partition each pool is bound to, and
//!   which agent GPUs each Slurm node is (a fixed group on one host);
//! - [`conf`]: the Slurm configuration for a binding: `slurm.conf` lines, `gres.conf`, and
//!   the task prolog that maps a job's `CUDA_VISIBLE_DEVICES` to the machine's GPUs;
//! - [`error`]: why Slurm could not be asked or did not answer (the shell's calls);
//! - [`sim`]: a simulated partition for the demo (a repeating job schedule, first-fit,
//!   drain and down as `scontrol` sets them), answering in [`queue`]'s shapes.
//!
//! The shell runs `squeue`/`sinfo`/`scontrol`, hands their text here, and carries the plan out.

pub mod binding;
pub mod conf;
pub mod drain;
pub mod error;
pub mod hostlist;
pub mod queue;
pub mod sim;
