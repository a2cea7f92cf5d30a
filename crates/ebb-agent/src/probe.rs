//! The one trait every GPU backend implements.

use crate::sim::LoadProfile;
use ebb_wire::agent::Gpu;
use std::collections::HashMap;

/// A source of GPU readings: the simulator, or NVML on real hosts.
///
/// `read` returns every GPU with its latest readings; a reading the backend cannot give is
/// `None`, never `0`, and a card that stopped answering is `healthy: false`. Time is a
/// parameter so a backend can be deterministic. `read` is only ever called by the agent's
/// one sampler task.
pub trait GpuProbe: Send + Sync + std::fmt::Debug {
    /// `"simulator"` or `"nvml"`, reported by `/v1/health`.
    fn backend(&self) -> &'static str;
    /// Every GPU with its readings at `now_ms` (Unix milliseconds).
    fn read(&self, now_ms: u64) -> Vec<Gpu>;
    /// The load each leased GPU (by UUID) should run, for backends that simulate load.
    /// Real hardware ignores it.
    fn set_lease_loads(&self, _loads: &HashMap<String, LoadProfile>) {}
    /// The lease workloads running now, by GPU UUID, for backends that simulate the
    /// processes on a card. Real hardware lists its own processes and ignores it.
    fn set_lease_workloads(&self, _workloads: &HashMap<String, LeaseWorkload>) {}
}

/// A lease whose workload runs on a GPU: a simulator shows it as the card's process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaseWorkload {
    pub lease_id: String,
    /// The workload's process, when the lease started one (`command`).
    pub pid: Option<u32>,
    /// The workload's program (the command's first word), when it has one.
    pub program: Option<String>,
}
