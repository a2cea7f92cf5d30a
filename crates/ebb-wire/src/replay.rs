//! A replay's result: one policy (a rule set, a baseline or the oracle) against a trace,
//! priced by the billing model. `ebb replay --json` prints a [`ReplayReport`]; the Rules
//! view will show the same.

use serde::{Deserialize, Serialize};
use specta::Type;

/// Paid GPU-hours, by how they were paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
pub struct ReplayGpuHours {
    /// Subscribed GPUs times the trace's started hours.
    pub subscribed: u64,
    /// Overlay units bought, times their hours (a day unit is 24).
    pub overlay: u64,
}

/// One policy's replay.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ReplayResult {
    /// "rules", "static-peak", "seed-80-30", "hpa" or "oracle".
    pub policy: String,
    /// What the held series costs under the best base, in fen.
    pub cost_fen: i64,
    /// GPUs on subscription in that plan.
    pub base_gpus: u32,
    /// GPU-hours paid.
    pub gpu_hours: ReplayGpuHours,
    /// `sum_t max(0, demand(t) - ready(t))`.
    pub shortfall_gpu_minutes: f64,
    /// The shortfall as a share of all demand, in percent.
    pub shortfall_pct: f64,
    /// Minutes in which the held count changed.
    pub actions: u32,
    /// Actions per day of trace.
    pub actions_per_day: f64,
    /// The most GPUs held at once.
    pub peak_held_gpus: u32,
}

/// `ebb replay --json`: the rule set's result, then each baseline's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ReplayReport {
    /// The rule set's replay.
    #[serde(flatten)]
    pub rules: ReplayResult,
    /// Each baseline asked for, in the order asked.
    pub baselines: Vec<ReplayResult>,
}

/// Where a Rules view replay's demand came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ReplaySource {
    /// The pool's own recorded history (desired, ready, utilization each minute): demand is
    /// utilization × ready ÷ 100; minute 0 is `from_ms`.
    History { from_ms: i64 },
    /// A trace the operator gave (CSV `minute,demand[,metric…]`).
    Trace,
}

/// A rule file replayed for a pool before it is enabled: the rules beside the baselines
/// `seed-80-30`, `hpa` and `oracle`, priced with the pool's model, region and plan through
/// the active catalog, and the chart of the rules' run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RulesReplay {
    /// The rules' result, then each baseline's.
    pub report: ReplayReport,
    /// Demand, ready and held GPUs each minute, the decisions marked (SVG).
    pub chart_svg: String,
    /// Minutes replayed.
    pub minutes: u32,
    /// The trace's peak demand, whole GPUs.
    pub peak_demand_gpus: u32,
    pub source: ReplaySource,
    /// The catalog entry that priced it.
    pub model: String,
    pub region: String,
    /// Minutes from ordering a GPU to its being ready.
    pub warmup_minutes: u32,
}

/// The replay chart's legend, in the viewer's language.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ReplayChartLabels {
    pub demand: String,
    pub ready: String,
    pub held: String,
    pub scale_out: String,
    pub scale_in: String,
    /// The time axis's label for whole days from minute 0, `{n}` standing for the number
    /// ("day {n}"); shorter spans are labelled `H:MM` from minute 0.
    pub day: String,
}
