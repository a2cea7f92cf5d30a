//! The host agent's HTTP API, version 1.

use serde::{Deserialize, Serialize};
use specta::Type;

/// The API version this build speaks; it is the `/v1` in every path.
pub const API_VERSION: u32 = 1;

/// `GET /v1/health`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct Health {
    /// Always `"ok"` when the agent answers at all.
    pub status: String,
    pub api_version: u32,
    /// The agent's crate version.
    pub agent_version: String,
    /// The name this agent reports for its host.
    pub host: String,
    /// Which probe backs the readings: `"simulator"` or `"nvml"`.
    pub backend: String,
}

/// `GET /v1/gpus`: every GPU of the host with its latest sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct GpuList {
    pub host: String,
    /// When the samples were taken, Unix milliseconds.
    pub sampled_at_ms: f64,
    pub gpus: Vec<Gpu>,
}

/// One GPU: its static facts and its latest dynamic readings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct Gpu {
    pub index: u32,
    pub uuid: String,
    pub model: String,
    pub memory_total_mib: u32,
    pub memory_used_mib: Option<u32>,
    pub gpu_util_pct: Option<f32>,
    pub memory_util_pct: Option<f32>,
    pub temperature_c: Option<f32>,
    pub power_draw_w: Option<f32>,
    pub power_limit_w: Option<f32>,
}

/// The JSON body of every error the agent answers with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ApiError {
    /// A stable machine-readable kind, e.g. `"not_found"`.
    pub kind: String,
    /// What went wrong, in words an operator can act on.
    pub message: String,
}
