//! The one trait every GPU backend implements.

use ebb_wire::agent::Gpu;

/// A source of GPU readings: the simulator now, NVML on real hosts.
///
/// `read` returns every GPU with its latest readings; a reading the backend cannot give is
/// `None`. Time is a parameter so a backend can be deterministic.
pub trait GpuProbe: Send + Sync + std::fmt::Debug {
    /// `"simulator"` or `"nvml"`, reported by `/v1/health`.
    fn backend(&self) -> &'static str;
    /// Every GPU with its readings at `now_ms` (Unix milliseconds).
    fn read(&self, now_ms: u64) -> Vec<Gpu>;
}
