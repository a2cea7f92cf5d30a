//! Recent utilization per GPU, kept in memory for the live chart. Pure: no IO, no clock.

use ebb_wire::agent::GpuList;
use std::collections::{BTreeMap, VecDeque};

/// One reading of one GPU.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub t_ms: f64,
    pub util_pct: f32,
}

/// The recent readings of one GPU, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuSeries {
    pub index: u32,
    pub model: String,
    pub points: Vec<Point>,
}

/// The last `capacity` readings of every GPU, by host.
#[derive(Debug, Clone, PartialEq)]
pub struct UtilHistory {
    capacity: usize,
    hosts: BTreeMap<String, BTreeMap<u32, (String, VecDeque<Point>)>>,
}

impl UtilHistory {
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            hosts: BTreeMap::new(),
        }
    }

    /// Adds one sample round of `host`. A sample no newer than the last one kept is ignored,
    /// so polling faster than the agent samples never draws the same reading twice.
    /// A GPU without a utilization reading adds no point: a gap, never a zero.
    pub fn record(&mut self, host: &str, list: &GpuList) {
        let gpus = self.hosts.entry(host.to_string()).or_default();
        for gpu in &list.gpus {
            let Some(util_pct) = gpu.gpu_util_pct else {
                continue;
            };
            let (model, points) = gpus
                .entry(gpu.index)
                .or_insert_with(|| (gpu.model.clone(), VecDeque::new()));
            model.clone_from(&gpu.model);
            if points
                .back()
                .is_some_and(|last| last.t_ms >= list.sampled_at_ms as f64)
            {
                continue;
            }
            if points.len() == self.capacity {
                points.pop_front();
            }
            points.push_back(Point {
                t_ms: list.sampled_at_ms as f64,
                util_pct,
            });
        }
    }

    /// Every GPU of `host`, by index; empty for a host never recorded.
    pub fn host_series(&self, host: &str) -> Vec<GpuSeries> {
        self.hosts
            .get(host)
            .map(|gpus| {
                gpus.iter()
                    .map(|(index, (model, points))| GpuSeries {
                        index: *index,
                        model: model.clone(),
                        points: points.iter().copied().collect(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The newest reading time over every host, if any.
    pub fn latest_ms(&self) -> Option<f64> {
        self.hosts
            .values()
            .flat_map(|gpus| gpus.values())
            .filter_map(|(_, points)| points.back().map(|point| point.t_ms))
            .reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_wire::agent::Gpu;

    fn list(t_ms: f64, utils: &[Option<f32>]) -> GpuList {
        GpuList {
            host: "h".into(),
            sampled_at_ms: t_ms as u64,
            gpus: utils
                .iter()
                .enumerate()
                .map(|(index, util)| Gpu {
                    index: index as u32,
                    uuid: format!("GPU-{index}"),
                    model: "A100".into(),
                    memory_total_mib: Some(1),
                    memory_used_mib: None,
                    gpu_util_pct: *util,
                    memory_util_pct: None,
                    temperature_c: None,
                    power_draw_w: None,
                    power_limit_w: None,
                    ..Default::default()
                })
                .collect(),
        }
    }

    #[test]
    fn keeps_the_last_capacity_points_in_order() {
        let mut history = UtilHistory::new(3);
        for second in 0..5 {
            history.record("h", &list(second as f64 * 1000.0, &[Some(second as f32)]));
        }
        let series = history.host_series("h");
        let utils: Vec<f32> = series[0].points.iter().map(|p| p.util_pct).collect();
        assert_eq!(utils, vec![2.0, 3.0, 4.0]);
        assert_eq!(history.latest_ms(), Some(4000.0));
    }

    #[test]
    fn stale_samples_and_missing_readings_add_nothing() {
        let mut history = UtilHistory::new(10);
        history.record("h", &list(1000.0, &[Some(10.0), None]));
        history.record("h", &list(1000.0, &[Some(99.0), Some(5.0)]));
        history.record("h", &list(500.0, &[Some(98.0), Some(6.0)]));
        let series = history.host_series("h");
        assert_eq!(series[0].points.len(), 1);
        assert_eq!(series[0].points[0].util_pct, 10.0);
        assert_eq!(
            series[1].points.len(),
            1,
            "GPU 1 first read at t=1000 by the second round"
        );
        assert_eq!(series[1].points[0].util_pct, 5.0);
        assert!(history.host_series("nobody").is_empty());
    }
}
