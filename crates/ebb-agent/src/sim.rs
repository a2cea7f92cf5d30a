//! The simulated GPU backend: deterministic for a seed, pure (time is a parameter).
//!
//! Models with their real names, memory, power limits and clocks (H800, A100, V100, Ascend
//! 910B), given as specs like `8xA100` or `4xH800,4xV100` ([`parse_spec`]); load profiles
//! (idle, steady, tidal, burst, or a CSV trace). A card reads the load its lease names,
//! else the host's profile while a lease's workload runs on it, else idle: a free card is
//! an idle one.

use crate::probe::{GpuProbe, LeaseWorkload};
use ebb_wire::agent::{Gpu, GpuProcess};
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

    /// Whether NVML would report ECC and Xid counts for the card: the NVIDIA data-centre
    /// cards do; the Ascend card is not an NVML device, so its counts are unknown.
    fn reports_ecc(self) -> bool {
        !matches!(self, GpuModel::Ascend910B)
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

pub use crate::probe::{LoadProfile, TracePoint};

/// The error for a bad `--sim` spec or trace file, naming the part at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimSpecError {
    #[error("--sim `{spec}`: `{part}` is not COUNTxMODEL (e.g. 8xA100)")]
    Shape { spec: String, part: String },
    #[error("--sim `{spec}`: `{count}` is not a GPU count from 1 to 64")]
    Count { spec: String, count: String },
    #[error("--sim `{spec}`: {source}")]
    Model { spec: String, source: UnknownModel },
    #[error("trace line {line}: {problem}")]
    Trace { line: usize, problem: String },
}

/// Parses a GPU spec like `8xA100` or `4xH800,4xV100` into one model per GPU.
pub fn parse_spec(spec: &str) -> Result<Vec<GpuModel>, SimSpecError> {
    let mut gpus = Vec::new();
    for part in spec.split(',').map(str::trim) {
        let (count, model) = part
            .split_once(['x', 'X'])
            .ok_or_else(|| SimSpecError::Shape {
                spec: spec.into(),
                part: part.into(),
            })?;
        let count: u32 = count
            .trim()
            .parse()
            .ok()
            .filter(|count| (1..=64).contains(count))
            .ok_or_else(|| SimSpecError::Count {
                spec: spec.into(),
                count: count.into(),
            })?;
        let model: GpuModel = model.parse().map_err(|source| SimSpecError::Model {
            spec: spec.into(),
            source,
        })?;
        gpus.extend(std::iter::repeat_n(model, count as usize));
    }
    if gpus.len() > 64 {
        return Err(SimSpecError::Count {
            spec: spec.into(),
            count: gpus.len().to_string(),
        });
    }
    Ok(gpus)
}

/// Parses a trace: CSV with a header `t_s,util_pct` (seconds from the start, percent),
/// rows in increasing time. A byte order mark (spreadsheets write one) is skipped.
pub fn parse_trace(text: &str) -> Result<LoadProfile, SimSpecError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut points = Vec::new();
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty());
    match lines.next() {
        Some((_, header)) if header.trim().replace(' ', "") == "t_s,util_pct" => {}
        _ => {
            return Err(SimSpecError::Trace {
                line: 1,
                problem: "the header must be `t_s,util_pct`".into(),
            });
        }
    }
    for (number, line) in lines {
        let bad = |problem: String| SimSpecError::Trace {
            line: number + 1,
            problem,
        };
        let (t, util) = line
            .split_once(',')
            .ok_or_else(|| bad("expected two columns".into()))?;
        let t_s: f64 = t
            .trim()
            .parse()
            .map_err(|_| bad(format!("t_s `{}` is not a number", t.trim())))?;
        let util_pct: f64 = util
            .trim()
            .parse()
            .ok()
            .filter(|pct| (0.0..=100.0).contains(pct))
            .ok_or_else(|| bad(format!("util_pct `{}` is not a percentage", util.trim())))?;
        if points
            .last()
            .is_some_and(|last: &TracePoint| last.t_s >= t_s)
            || t_s < 0.0
        {
            return Err(bad("times must start at 0 or later and increase".into()));
        }
        points.push(TracePoint { t_s, util_pct });
    }
    if points.is_empty() {
        return Err(SimSpecError::Trace {
            line: 2,
            problem: "the trace has no rows".into(),
        });
    }
    Ok(LoadProfile::Trace(points.into()))
}

/// The seed of `ebb-agent serve --sim`: its readings and its spot interruptions are the
/// same each run.
pub const DEFAULT_SEED: u64 = 1;

/// What one simulated host has.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    pub host: String,
    /// One model per GPU, by index.
    pub gpus: Vec<GpuModel>,
    pub seed: u64,
    /// The load a leased GPU runs when its lease names none. A GPU no lease holds is idle:
    /// free means idle.
    pub profile: LoadProfile,
    /// How long a lease's workload takes to come up after its grant (a model loading): its
    /// lease answers as starting and its GPUs idle until then.
    pub startup: std::time::Duration,
}

/// A simulated host: the same seed, time and leased loads give the same readings.
#[derive(Debug)]
pub struct Simulator {
    config: SimConfig,
    uuids: Vec<String>,
    lease_loads: std::sync::RwLock<std::collections::HashMap<String, LoadProfile>>,
    workloads: std::sync::RwLock<std::collections::HashMap<String, LeaseWorkload>>,
}

impl Simulator {
    pub fn new(config: SimConfig) -> Self {
        let uuids = (0..config.gpus.len() as u32)
            .map(|index| fake_uuid(config.seed, &config.host, index))
            .collect();
        Self {
            config,
            uuids,
            lease_loads: Default::default(),
            workloads: Default::default(),
        }
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// Whether a lease holds card `uuid` and its workload runs (its load shows).
    fn runs_workload(&self, uuid: &str) -> bool {
        self.workloads
            .read()
            .is_ok_and(|workloads| workloads.contains_key(uuid))
    }

    /// GPU utilization of card `index` at `now_ms`, in percent: the lease's load, the host's
    /// profile for a leased card whose lease names none, idle for a card no lease runs on.
    pub fn util_pct(&self, index: u32, now_ms: u64) -> f32 {
        let uuid = &self.uuids[index as usize];
        let leased = self
            .lease_loads
            .read()
            .ok()
            .and_then(|loads| loads.get(uuid).cloned());
        let profile = match &leased {
            Some(profile) => profile,
            None if self.runs_workload(uuid) => &self.config.profile,
            None => &LoadProfile::Idle,
        };
        let second = now_ms / 1000;
        let noise = unit_noise(self.config.seed, index, second) * 2.0 - 1.0;
        let t = now_ms as f64 / 1000.0;
        let pct = match profile {
            LoadProfile::Idle => 1.0 + noise.abs() * 2.0,
            LoadProfile::Steady { pct } => pct + noise * 4.0,
            LoadProfile::Tidal { period_s } => {
                let phase = f64::from(index) * 0.7 + (self.config.seed % 97) as f64 * 0.1;
                50.0 + 35.0 * (TAU * t / period_s.max(1.0) + phase).sin() + noise * 8.0
            }
            LoadProfile::Burst { period_s } => {
                let period = period_s.max(4.0);
                let offset = f64::from(index) * period / 8.0;
                if (t + offset) % period < period / 4.0 {
                    96.0 + noise * 3.0
                } else {
                    3.0 + noise.abs() * 3.0
                }
            }
            LoadProfile::Trace(points) => {
                let span = points.last().map_or(1.0, |last| last.t_s + 1.0);
                let at = t % span;
                let position = points.partition_point(|point| point.t_s <= at);
                points[position.saturating_sub(1)].util_pct + noise
            }
        };
        pct.clamp(0.0, 100.0) as f32
    }

    /// The process a lease's workload runs on card `uuid`, using `used_mib` of its memory
    /// less what the driver keeps; none when no lease's workload runs there.
    fn processes(&self, uuid: &str, used_mib: u32, total_mib: u32) -> Vec<GpuProcess> {
        let Some(workload) = self
            .workloads
            .read()
            .ok()
            .and_then(|workloads| workloads.get(uuid).cloned())
        else {
            return Vec::new();
        };
        let lease_hash = mix(self.config.seed ^ fnv(&workload.lease_id));
        // A workload started by the lease is that real process; a simulated one gets a
        // pid and a program name fixed by its lease.
        let pid = workload
            .pid
            .unwrap_or(10_000 + (lease_hash % 50_000) as u32);
        let name = workload.program.unwrap_or_else(|| {
            SIMULATED_PROGRAMS[(lease_hash >> 20) as usize % SIMULATED_PROGRAMS.len()].to_string()
        });
        vec![GpuProcess {
            pid,
            name: Some(name),
            used_memory_mib: Some(used_mib.saturating_sub(total_mib / 50)),
        }]
    }

    /// Corrected ECC errors since the driver loaded: a few cards of a fleet have some.
    fn ecc_corrected(&self, index: u32) -> u64 {
        let roll = mix(self.config.seed ^ fnv(&self.config.host) ^ u64::from(index));
        if roll.is_multiple_of(7) {
            1 + (roll >> 8) % 4
        } else {
            0
        }
    }
}

/// The programs a simulated lease workload runs as.
const SIMULATED_PROGRAMS: [&str; 4] = ["python3", "vllm", "torchrun", "tritonserver"];

impl GpuProbe for Simulator {
    fn backend(&self) -> &'static str {
        "simulator"
    }

    fn startup(&self) -> std::time::Duration {
        self.config.startup
    }

    fn read(&self, now_ms: u64) -> Vec<Gpu> {
        (0..self.config.gpus.len() as u32)
            .map(|index| {
                let model = self.config.gpus[index as usize];
                let util = self.util_pct(index, now_ms);
                let busy = util / 100.0;
                let total = model.memory_total_mib();
                let uuid = &self.uuids[index as usize];
                // A card nothing runs on holds only the driver's context.
                let used = if self.runs_workload(uuid) {
                    (total as f32 * (0.05 + 0.85 * busy)) as u32
                } else {
                    (total as f32 * 0.005) as u32
                };
                let ecc = model.reports_ecc();
                Gpu {
                    index,
                    uuid: uuid.clone(),
                    model: model.name().to_string(),
                    memory_total_mib: Some(total),
                    memory_used_mib: Some(used),
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
                    processes: Some(self.processes(uuid, used, total)),
                    ecc_corrected: ecc.then(|| self.ecc_corrected(index)),
                    ecc_uncorrected: ecc.then_some(0),
                    retired_pages: ecc.then_some(0),
                    xid_errors: ecc.then_some(0),
                    ..Gpu::default()
                }
            })
            .collect()
    }

    fn set_lease_loads(&self, loads: &std::collections::HashMap<String, LoadProfile>) {
        if let Ok(mut current) = self.lease_loads.write() {
            current.clone_from(loads);
        }
    }

    fn set_lease_workloads(&self, workloads: &std::collections::HashMap<String, LeaseWorkload>) {
        if let Ok(mut current) = self.workloads.write() {
            current.clone_from(workloads);
        }
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

/// FNV-1a: a text's stable 64-bit hash.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn fake_uuid(seed: u64, host: &str, index: u32) -> String {
    let a = mix(seed ^ fnv(host) ^ u64::from(index));
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

    /// Four A100s, every one leased (so they run the host's tidal profile).
    fn tidal(seed: u64) -> Simulator {
        let sim = Simulator::new(SimConfig {
            host: "host-a".into(),
            gpus: vec![GpuModel::A100; 4],
            seed,
            profile: LoadProfile::Tidal { period_s: 60.0 },
            startup: std::time::Duration::ZERO,
        });
        let all: std::collections::HashMap<String, LeaseWorkload> = sim
            .uuids
            .iter()
            .map(|uuid| {
                let workload = LeaseWorkload {
                    lease_id: format!("lease-{uuid}"),
                    pid: None,
                    program: None,
                };
                (uuid.clone(), workload)
            })
            .collect();
        sim.set_lease_workloads(&all);
        sim
    }

    #[test]
    fn a_gpu_no_lease_holds_is_idle() {
        let sim = tidal(3);
        sim.set_lease_workloads(&Default::default());
        for second in 0..120 {
            for gpu in sim.read(second * 1000) {
                let util = gpu.gpu_util_pct.unwrap();
                assert!(util <= 5.0, "a free GPU at {util}%");
                assert!(gpu.memory_used_mib.unwrap() < 1_024, "{gpu:?}");
                assert_eq!(gpu.processes, Some(Vec::new()));
            }
        }
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
                assert!(gpu.memory_used_mib.unwrap() <= gpu.memory_total_mib.unwrap());
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
    fn specs_parse_and_name_their_mistakes() {
        let gpus = parse_spec("4xH800, 2xV100").unwrap();
        assert_eq!(gpus.len(), 6);
        assert_eq!((gpus[0], gpus[5]), (GpuModel::H800, GpuModel::V100));
        for (spec, expected) in [
            ("8A100", "`8A100` is not COUNTxMODEL"),
            ("0xA100", "`0` is not a GPU count"),
            ("99xA100", "`99` is not a GPU count"),
            ("2xB200", "unknown GPU model `B200`"),
        ] {
            let error = parse_spec(spec).unwrap_err().to_string();
            assert!(error.contains(expected), "{spec}: {error}");
        }
    }

    #[test]
    fn a_lease_load_overrides_the_host_profile() {
        let sim = tidal(5);
        let uuid = sim.read(0)[1].uuid.clone();
        let loads =
            std::collections::HashMap::from([(uuid, LoadProfile::from_name("steady").unwrap())]);
        sim.set_lease_loads(&loads);
        for second in 0..60 {
            let util = sim.util_pct(1, second * 1000);
            assert!((70.0..=80.0).contains(&util), "steady 75±4: {util}");
        }
        sim.set_lease_loads(&Default::default());
        let swing: Vec<f32> = (0..60)
            .map(|second| sim.util_pct(1, second * 1000))
            .collect();
        assert!(
            swing.iter().any(|util| !(70.0..=80.0).contains(util)),
            "back to the tide"
        );
    }

    #[test]
    fn a_leased_gpu_whose_workload_runs_shows_its_process() {
        let sim = tidal(5);
        sim.set_lease_workloads(&Default::default());
        let uuid = sim.read(0)[2].uuid.clone();
        assert!(
            sim.read(0)
                .iter()
                .all(|gpu| gpu.processes == Some(Vec::new()))
        );
        let simulated = LeaseWorkload {
            lease_id: "lease-1-abcd".into(),
            pid: None,
            program: None,
        };
        sim.set_lease_workloads(&std::collections::HashMap::from([(
            uuid.clone(),
            simulated,
        )]));
        let gpus = sim.read(9_000);
        let processes = gpus[2].processes.clone().unwrap();
        assert_eq!(processes.len(), 1, "{processes:?}");
        let process = &processes[0];
        assert!((10_000..60_000).contains(&process.pid));
        assert!(SIMULATED_PROGRAMS.contains(&process.name.as_deref().unwrap()));
        let used = process.used_memory_mib.unwrap();
        assert!(used > 0 && used < gpus[2].memory_used_mib.unwrap());
        assert_eq!(
            sim.read(9_000)[2].processes,
            gpus[2].processes,
            "fixed by the lease"
        );
        assert!(
            gpus.iter()
                .filter(|gpu| gpu.index != 2)
                .all(|gpu| gpu.processes == Some(Vec::new()))
        );

        // A workload the lease started is that process, by its program's name.
        let real = LeaseWorkload {
            lease_id: "lease-2-beef".into(),
            pid: Some(31_337),
            program: Some("train.sh".into()),
        };
        sim.set_lease_workloads(&std::collections::HashMap::from([(uuid, real)]));
        let process = sim.read(9_000)[2].processes.clone().unwrap().remove(0);
        assert_eq!(
            (process.pid, process.name.as_deref()),
            (31_337, Some("train.sh"))
        );

        sim.set_lease_workloads(&Default::default());
        assert_eq!(
            sim.read(9_000)[2].processes,
            Some(Vec::new()),
            "released: gone"
        );
    }

    #[test]
    fn ecc_counts_are_none_where_the_card_has_none() {
        let sim = Simulator::new(SimConfig {
            host: "mixed".into(),
            gpus: vec![GpuModel::A100, GpuModel::Ascend910B],
            seed: 2,
            profile: LoadProfile::Idle,
            startup: std::time::Duration::ZERO,
        });
        let gpus = sim.read(0);
        assert!(gpus[0].ecc_corrected.is_some() && gpus[0].xid_errors == Some(0));
        assert_eq!(
            (
                gpus[1].ecc_corrected,
                gpus[1].ecc_uncorrected,
                gpus[1].xid_errors
            ),
            (None, None, None)
        );
    }

    #[test]
    fn traces_replay_step_by_step_and_loop() {
        let profile = parse_trace("t_s,util_pct\n0,10\n10,90\n").unwrap();
        let sim = Simulator::new(SimConfig {
            host: "h".into(),
            gpus: vec![GpuModel::V100],
            seed: 1,
            profile,
            startup: std::time::Duration::ZERO,
        });
        let uuid = sim.uuids[0].clone();
        let workload = LeaseWorkload {
            lease_id: "l".into(),
            pid: None,
            program: None,
        };
        sim.set_lease_workloads(&std::collections::HashMap::from([(uuid, workload)]));
        let near = |util: f32, target: f32| (util - target).abs() <= 1.0;
        assert!(near(sim.util_pct(0, 5_000), 10.0));
        assert!(near(sim.util_pct(0, 10_500), 90.0));
        assert!(
            near(sim.util_pct(0, 11_000 + 5_000), 10.0),
            "loops after 11 s"
        );
        for (text, expected) in [
            ("t,u\n0,1", "header must be"),
            ("t_s,util_pct\n0,101", "line 2: util_pct `101`"),
            ("t_s,util_pct\n5,1\n5,2", "line 3: times must"),
            ("t_s,util_pct\n", "no rows"),
        ] {
            let error = parse_trace(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
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
