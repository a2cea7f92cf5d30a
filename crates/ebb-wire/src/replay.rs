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
    /// Spot GPUs taken back (0 for a replay all on demand).
    #[serde(default)]
    pub interruptions: u32,
    /// Started hours bought on spot, beside `gpu_hours`.
    #[serde(default)]
    pub spot_gpu_hours: u64,
    /// What those hours cost, in fen; part of `cost_fen`.
    #[serde(default)]
    pub spot_cost_fen: i64,
}

/// The spot mix a replay was asked to price, as `ebb replay --spot-pct` gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SpotSettings {
    /// GPUs above the base always on demand.
    pub on_demand_floor: u32,
    /// Of the rest, the percentage on spot.
    pub spot_pct: u32,
    /// The most a spot GPU-hour may cost, in fen; `None`: any price.
    pub max_price_fen: Option<i64>,
    /// Minutes from an interruption's notice to the GPU being gone.
    pub notice_minutes: u32,
    /// Where interruptions came from: "trace" (its `interrupted` column), "model" (seeded,
    /// at `interruptions_per_gpu_hour`) or "none".
    pub interruptions_from: String,
    /// The seeded model's rate, when it drew them.
    pub interruptions_per_gpu_hour: Option<f64>,
}

/// The rules with the spot mix (and its breaker) beside the same rules all on demand and
/// the oracle (all on demand): cost, shortfall and interruptions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SpotComparison {
    pub settings: SpotSettings,
    /// The rules with the mix.
    pub mix: ReplayResult,
    /// The same rules, every GPU on demand.
    pub on_demand: ReplayResult,
    /// Perfect foresight, on demand.
    pub oracle: ReplayResult,
}

/// `ebb replay --json`: the rule set's result, then each baseline's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ReplayReport {
    /// The rule set's replay.
    #[serde(flatten)]
    pub rules: ReplayResult,
    /// Each baseline asked for, in the order asked.
    pub baselines: Vec<ReplayResult>,
    /// With a spot mix asked for: the rules with it, on demand and the oracle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot: Option<SpotComparison>,
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
    /// The metrics the rules read that the trace has no column for: those rules never act
    /// in this replay, so its figures say nothing of them.
    pub unread_metrics: Vec<UnreadMetric>,
}

/// A metric rules read that a trace does not carry (a custom metric's column, or `mem_pct`
/// for `mem_util`), with the rules that read it, in file order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct UnreadMetric {
    /// The trace column it would be (`users`, `mem_pct`).
    pub column: String,
    /// The rules (thresholds, then targets) that read it.
    pub rules: Vec<String>,
}

impl std::fmt::Display for UnreadMetric {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the trace has no `{}` column, read by {}: {} in this replay",
            self.column,
            self.rules.join(", "),
            if self.rules.len() == 1 {
                "that rule never acts"
            } else {
                "those rules never act"
            },
        )
    }
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
