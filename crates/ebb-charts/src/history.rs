//! Stored history as the charts draw it: one GPU's series, a host's or a region's
//! aggregate, the fleet heatmap's grid, a pool's samples. Pure data: the stores answer in
//! these types and `chart` draws them, so drawing never depends on a store.

use crate::downsample::Point;
use ebb_wire::ipc::ChartMetric;
use serde::Serialize;

/// One GPU's points, oldest first: each the min, mean and max of one bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GpuSeries {
    pub host: String,
    pub gpu_index: u32,
    pub points: Vec<Point>,
}

/// A host's or a region's points: per bucket, the min and max over its GPUs' readings and
/// the mean of those readings (the mean of the GPUs when each reported alike).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AggregateSeries {
    pub name: String,
    pub points: Vec<Point>,
}

/// GPU rows × time columns of mean values; `None` where a GPU gave no reading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Heatmap {
    pub metric: ChartMetric,
    /// The first column's start (the query's start, rounded down to the table's step).
    pub from_ms: i64,
    pub to_ms: i64,
    pub bucket_ms: i64,
    pub columns: u32,
    /// By host name, then GPU index.
    pub rows: Vec<HeatmapRow>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HeatmapRow {
    pub host: String,
    pub gpu_index: u32,
    pub cells: Vec<Option<f32>>,
}

/// One look at a pool (the console's pool history writes one after an enforcer pass).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PoolSample {
    pub at_ms: i64,
    pub desired: u32,
    /// Leases held and counted.
    pub ready: u32,
    /// Lease requests sent and not answered yet.
    pub warming: u32,
    /// Mean utilization of the held GPUs that reported one.
    pub util_pct: Option<f32>,
}
