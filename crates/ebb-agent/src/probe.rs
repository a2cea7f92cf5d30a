//! The one trait every GPU backend implements.

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
    /// How long a lease's workload takes to come up after its grant: a simulated model load.
    /// Real hardware's workload is up once its process has started (the grant starts it).
    fn startup(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
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

/// How busy the simulated GPUs are over time.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadProfile {
    /// Near zero.
    Idle,
    /// Around a fixed level.
    Steady { pct: f64 },
    /// A tide: a sine around 50% with this period, each GPU a little out of phase.
    Tidal { period_s: f64 },
    /// Mostly idle, with full-load bursts for a quarter of each period.
    Burst { period_s: f64 },
    /// Replays a recorded utilization trace, looping; see [`crate::sim::parse_trace`].
    Trace(std::sync::Arc<[TracePoint]>),
}

/// One point of a utilization trace: from `t_s` on (until the next point), `util_pct`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TracePoint {
    pub t_s: f64,
    pub util_pct: f64,
}

impl LoadProfile {
    /// The profile a lease asks for by name (`idle`, `steady`, `diurnal`, `burst`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "idle" => Some(Self::Idle),
            "steady" => Some(Self::Steady { pct: 75.0 }),
            "diurnal" => Some(Self::Tidal { period_s: 86_400.0 }),
            "burst" => Some(Self::Burst { period_s: 120.0 }),
            _ => None,
        }
    }
}
