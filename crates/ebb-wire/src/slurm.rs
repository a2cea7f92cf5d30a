//! A pool bound to a Slurm partition as the Pool view and `ebb slurm status --json` show
//! it: the queue metrics, each node with its lease, the partition's jobs.

use serde::{Deserialize, Serialize};
use specta::Type;

/// Who decides how many nodes are up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SlurmMode {
    /// The pool's rules (on the queue metrics) or the slider.
    Ebb,
    /// Slurm's power saving, through `ebb slurm resume|suspend`.
    Slurm,
}

/// The partition's queue at the last look.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SlurmQueue {
    /// GPUs asked for by jobs pending for resources (not held, not on a dependency).
    pub pending_gpus: u32,
    /// GPUs held by running (or completing, configuring) jobs.
    pub allocated_gpus: u32,
    pub pending_jobs: u32,
    /// How long the oldest job pending for resources has waited, in seconds.
    pub oldest_wait_s: Option<u32>,
}

/// A node's state as the Pool view words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SlurmNodeState {
    Idle,
    /// Running jobs on all or some of its GPUs.
    Allocated,
    /// Draining for scale-in: no new job starts; it goes back when its jobs end.
    Draining,
    /// Drained and idle: about to go back.
    Drained,
    /// Suspended by Slurm while its lease is kept to the end of the paid unit.
    Parked,
    /// Powered down: no lease.
    PoweredDown,
    /// Being resumed (its GPUs being leased, its slurmd starting).
    PoweringUp,
    /// Down or not responding (`reason` says why).
    Down,
    /// A state Ebb does not act on (`state_text` says which).
    Other,
}

/// One node of the partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SlurmNodeView {
    pub name: String,
    /// The agent host whose GPUs it is, and which of them.
    pub host: String,
    pub gpu_indexes: Vec<u32>,
    pub state: SlurmNodeState,
    /// Slurm's own word for it (`idle~`, `drained`, `down*`, …).
    pub state_text: String,
    /// Why it is down or drained, as Slurm has it.
    pub reason: Option<String>,
    /// The lease holding its GPUs; `None` when none does.
    pub lease_id: Option<String>,
    /// Jobs running on it now.
    pub jobs: Vec<String>,
}

/// A job's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum SlurmJobState {
    Pending,
    Running,
    Completing,
    /// Allocated while its nodes start.
    Configuring,
    Other,
}

/// One job of the partition's queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SlurmJobView {
    pub id: String,
    pub state: SlurmJobState,
    /// Slurm's reason for a pending job (`Resources`, `Dependency`, …).
    pub reason: String,
    /// GPUs it asks for or holds.
    pub gpus: u32,
    /// Whether more GPUs would start it (pending for resources, not held or waiting on
    /// another job): what the pool scales on.
    pub waits_for_gpus: bool,
    /// How long it has waited since it was submitted, in seconds.
    pub waited_s: u32,
}

/// A Slurm-bound pool's partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SlurmPoolView {
    pub partition: String,
    /// The demo's simulated partition (its job queue made up), not a real slurmctld's.
    pub simulated: bool,
    pub mode: SlurmMode,
    pub gpus_per_node: u32,
    /// `None` when Slurm did not answer (`unreachable` says why).
    pub queue: Option<SlurmQueue>,
    pub unreachable: Option<String>,
    pub nodes: Vec<SlurmNodeView>,
    /// At most the 50 oldest.
    pub jobs: Vec<SlurmJobView>,
    /// Jobs in the partition's queue in all.
    pub jobs_total: u32,
}
