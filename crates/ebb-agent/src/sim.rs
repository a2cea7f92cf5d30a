//! The simulated GPU backend: deterministic for a seed, pure (time is a parameter).

use crate::probe::GpuProbe;
use ebb_wire::agent::Gpu;
use std::f64::consts::TAU;
use std::fmt;
use std::str::FromStr;

/// GPU models the simulator knows, with their real memory sizes and power limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GpuModel {
    H800,
    A100,
    V100,
    Ascend910B,
}

impl GpuModel {
    pub const ALL: [GpuModel; 4] = [
        GpuModel::H800,
        GpuModel::A100,
        GpuModel::V100,
        GpuModel::Ascend910B,
    ];

    /// The name the card reports, as NVML would.
    pub fn name(self) -> &'static str {
        match self {
            GpuModel::H800 => "NVIDIA H800",
            GpuModel::A100 => "NVIDIA A100-SXM4-80GB",
            GpuModel::V100 => "Tesla V100-SXM2-32GB",
            GpuModel::Ascend910B => "Ascend 910B",
        }
    }

    pub fn memory_total_mib(self) -> u32 {
        match self {
            GpuModel::H800 | GpuModel::A100 => 81_920,
            GpuModel::V100 => 32_768,
            GpuModel::Ascend910B => 65_536,
        }
    }

    pub fn power_limit_w(self) -> f32 {
        match self {
            GpuModel::H800 => 700.0,
            GpuModel::A100 => 400.0,
            GpuModel::V100 => 300.0,
            GpuModel::Ascend910B => 400.0,
        }
    }

    pub fn boost_clock_mhz(self) -> u32 {
        match self {
            GpuModel::H800 => 1980,
            GpuModel::A100 => 1410,
            GpuModel::V100 => 1530,
            GpuModel::Ascend910B => 1800,
        }
    }

    pub fn memory_clock_mhz(self) -> u32 {
        match self {
            GpuModel::H800 => 2619,
            GpuModel::A100 => 1593,
            GpuModel::V100 => 877,
            GpuModel::Ascend910B => 1600,
        }
    }

    fn idle_power_w(self) -> f32 {
        self.power_limit_w() * 0.12
    }
}

impl fmt::Display for GpuModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GpuModel::H800 => "H800",
            GpuModel::A100 => "A100",
            GpuModel::V100 => "V100",
            GpuModel::Ascend910B => "Ascend910B",
        })
    }
}

/// The error for a model name the simulator does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown GPU model `{0}`: expected one of H800, A100, V100, Ascend910B")]
pub struct UnknownModel(pub String);

impl FromStr for GpuModel {
    type Err = UnknownModel;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let wanted = text
            .trim()
            .to_ascii_lowercase()
            .replace([' ', '-', '_'], "");
        GpuModel::ALL
            .into_iter()
            .find(|model| model.to_string().to_ascii_lowercase() == wanted)
            .ok_or_else(|| UnknownModel(text.to_string()))
    }
}

/// How busy the simulated GPUs are over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LoadProfile {
    /// Near zero.
    Idle,
    /// A tide: a sine around 50% with this period, each GPU a little out of phase.
    Tidal { period_s: f64 },
}

/// What one simulated host has.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    pub host: String,
    pub model: GpuModel,
    pub gpu_count: u32,
    pub seed: u64,
    pub profile: LoadProfile,
}

/// A simulated host: the same seed and time give the same readings.
#[derive(Debug, Clone)]
pub struct Simulator {
    config: SimConfig,
    uuids: Vec<String>,
}

impl Simulator {
    pub fn new(config: SimConfig) -> Self {
        let uuids = (0..config.gpu_count)
            .map(|index| fake_uuid(config.seed, &config.host, index))
            .collect();
        Self { config, uuids }
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// GPU utilization of card `index` at `now_ms`, in percent.
    pub fn util_pct(&self, index: u32, now_ms: u64) -> f32 {
        let second = now_ms / 1000;
        let noise = unit_noise(self.config.seed, index, second) * 2.0 - 1.0;
        let pct = match self.config.profile {
            LoadProfile::Idle => 1.0 + noise.abs() * 2.0,
            LoadProfile::Tidal { period_s } => {
                let phase = f64::from(index) * 0.7 + (self.config.seed % 97) as f64 * 0.1;
                let t = now_ms as f64 / 1000.0;
                50.0 + 35.0 * (TAU * t / period_s.max(1.0) + phase).sin() + noise * 8.0
            }
        };
        pct.clamp(0.0, 100.0) as f32
    }
}

impl GpuProbe for Simulator {
    fn backend(&self) -> &'static str {
        "simulator"
    }

    fn read(&self, now_ms: u64) -> Vec<Gpu> {
        let model = self.config.model;
        (0..self.config.gpu_count)
            .map(|index| {
                let util = self.util_pct(index, now_ms);
                let busy = util / 100.0;
                let total = model.memory_total_mib();
                Gpu {
                    index,
                    uuid: self.uuids[index as usize].clone(),
                    model: model.name().to_string(),
                    memory_total_mib: total,
                    memory_used_mib: Some((total as f32 * (0.05 + 0.85 * busy)) as u32),
                    gpu_util_pct: Some(util),
                    memory_util_pct: Some((util * 0.8).round()),
                    temperature_c: Some((34.0 + 0.48 * util).round()),
                    power_draw_w: Some(
                        (model.idle_power_w()
                            + (model.power_limit_w() - model.idle_power_w()) * busy)
                            .round(),
                    ),
                    power_limit_w: Some(model.power_limit_w()),
                    healthy: true,
                    sm_clock_mhz: Some(
                        (model.boost_clock_mhz() as f32 * (0.55 + 0.45 * busy)) as u32,
                    ),
                    memory_clock_mhz: Some(model.memory_clock_mhz()),
                    processes: Some(Vec::new()),
                    ecc_corrected: Some(0),
                    ecc_uncorrected: Some(0),
                    retired_pages: Some(0),
                    xid_errors: Some(0),
                    ..Gpu::default()
                }
            })
            .collect()
    }
}

/// SplitMix64: a tiny, well-mixed hash for deterministic noise.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A number in `[0, 1)` fixed by its inputs.
fn unit_noise(seed: u64, index: u32, second: u64) -> f64 {
    let bits = mix(seed ^ mix(u64::from(index) ^ mix(second)));
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

fn fake_uuid(seed: u64, host: &str, index: u32) -> String {
    let host_hash = host.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    let a = mix(seed ^ host_hash ^ u64::from(index));
    let b = mix(a);
    format!(
        "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tidal(seed: u64) -> Simulator {
        Simulator::new(SimConfig {
            host: "host-a".into(),
            model: GpuModel::A100,
            gpu_count: 4,
            seed,
            profile: LoadProfile::Tidal { period_s: 60.0 },
        })
    }

    #[test]
    fn same_seed_and_time_give_the_same_readings() {
        assert_eq!(tidal(7).read(1_000_000), tidal(7).read(1_000_000));
        assert_ne!(tidal(7).read(1_000_000), tidal(8).read(1_000_000));
    }

    #[test]
    fn readings_stay_in_range_and_move_over_time() {
        let sim = tidal(1);
        let mut seen = Vec::new();
        for second in 0..120 {
            for gpu in sim.read(second * 1000) {
                let util = gpu.gpu_util_pct.unwrap();
                assert!((0.0..=100.0).contains(&util), "{util}");
                assert!(gpu.memory_used_mib.unwrap() <= gpu.memory_total_mib);
                assert!(gpu.power_draw_w.unwrap() <= gpu.power_limit_w.unwrap());
                seen.push(util);
            }
        }
        let low = seen.iter().cloned().fold(f32::MAX, f32::min);
        let high = seen.iter().cloned().fold(f32::MIN, f32::max);
        assert!(high - low > 40.0, "a tide should swing: {low}..{high}");
    }

    #[test]
    fn models_have_their_real_sizes() {
        let cases = [
            ("H800", 81_920, 700.0),
            ("a100", 81_920, 400.0),
            ("V100", 32_768, 300.0),
            ("ascend-910b", 65_536, 400.0),
        ];
        for (name, memory, power) in cases {
            let model: GpuModel = name.parse().unwrap();
            assert_eq!(model.memory_total_mib(), memory, "{name}");
            assert_eq!(model.power_limit_w(), power, "{name}");
        }
        let error = "B200".parse::<GpuModel>().unwrap_err();
        assert!(error.to_string().contains("unknown GPU model `B200`"));
    }

    #[test]
    fn uuids_are_distinct_and_shaped_like_nvml() {
        let sim = tidal(3);
        let gpus = sim.read(0);
        let mut uuids: Vec<_> = gpus.iter().map(|gpu| gpu.uuid.clone()).collect();
        assert!(
            uuids
                .iter()
                .all(|uuid| uuid.starts_with("GPU-") && uuid.len() == 40)
        );
        uuids.dedup();
        assert_eq!(uuids.len(), 4);
    }
}
