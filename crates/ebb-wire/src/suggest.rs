//! `ebb rules suggest --json`: the suggested rule file, the rules as data, and what they did
//! on the trace they were chosen on, beside the perfect-foresight oracle. The Rules view
//! will show the same.

use crate::replay::ReplayResult;
use crate::rules::RuleSet;
use serde::{Deserialize, Serialize};
use specta::Type;

/// A suggestion and its replay figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SuggestReport {
    /// The rule file (TOML with a comment on each lever), as `ebb rules suggest` prints it.
    pub file: String,
    /// The same rules as data.
    pub rules: RuleSet,
    /// The model and region the replays were priced with.
    pub model: String,
    /// See `model`.
    pub region: String,
    /// The shortfall limit asked for, % of demand.
    pub max_shortfall_pct: f64,
    /// Whether the rules are within it on the trace (when no rule set tried is, the one
    /// with the least shortfall is suggested).
    pub within_limit: bool,
    /// Rule sets replayed in the search.
    pub candidates: u32,
    /// The suggested rules replayed on the trace (`policy` is "rules").
    pub replay: ReplayResult,
    /// The perfect-foresight oracle on the same trace and billing.
    pub oracle: ReplayResult,
    /// Why the rules are as they are, as data (what the file's comments say).
    #[serde(default)]
    pub notes: Vec<SuggestNote>,
    /// The spot mix recommended for the pool, when the trace carries a spot market.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spot_mix: Option<SpotMixSuggestion>,
}

/// The paid unit a release waits for the end of (the pool's overlay; spot is billed by the
/// hour).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum PaidUnit {
    Hour,
    Day,
    Week,
}

/// Why a suggested rule file is as it is: one note per lever or finding, with its numbers.
/// The UI words each in the operator's language; the CLI's file carries the same as English
/// TOML comments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SuggestNote {
    /// The demand it was chosen on.
    Trace { minutes: u32, peak_gpus: u32 },
    /// What it did on that demand, beside the perfect-foresight oracle, and how many rule
    /// sets the search replayed.
    Replayed {
        cost_fen: i64,
        oracle_cost_fen: i64,
        shortfall_pct: f64,
        max_shortfall_pct: f64,
        actions_per_day: f64,
        candidates: u32,
        /// They were the cheapest kept within the search's share of the limit (its margin
        /// for load not yet seen); false: none was, and these fell shortest.
        within_margin: bool,
    },
    /// No rule set tried stayed within the shortfall limit: this one fell shortest.
    OverLimit {
        shortfall_pct: f64,
        max_shortfall_pct: f64,
    },
    /// What the limit cost: the cheapest rule set replayed cost `cost_fen` with shortfall
    /// `shortfall_pct`, over `max_shortfall_pct`; within the limit GPUs are held ready
    /// ahead of demand no rule sees coming. A limit of `allow_pct` allows rules like it.
    /// `queue`: the shortfall is jobs waiting for their nodes to warm up.
    LimitPrice {
        cost_fen: i64,
        oracle_cost_fen: i64,
        shortfall_pct: f64,
        max_shortfall_pct: f64,
        allow_pct: f64,
        queue: bool,
    },
    /// A queue trace's stuck jobs: `gpu_minutes` (`share_pct` of what the queue asked for)
    /// pended while at least as many of the partition's GPUs sat idle, and were taken out of
    /// the demand.
    StuckJobs { gpu_minutes: f64, share_pct: f64 },
    /// Size the pool to its busy GPUs at `target_pct`% of each GPU (100: no headroom).
    Target { target_pct: u32 },
    /// A release goes only to the highest count of the last `minutes` minutes.
    Stabilization { minutes: u32 },
    /// A rise is met at once: a GPU ordered now is ready in `warmup_minutes`.
    ScaleOutAtOnce { warmup_minutes: u32 },
    /// A small rise waits `sustain_minutes`; a shortage of `overload_gpus` orders at once.
    ScaleOutSustain {
        sustain_minutes: u32,
        overload_gpus: u32,
        unit: PaidUnit,
    },
    /// A surplus GPU goes only in the last `minutes` of the unit it has paid for.
    ReleaseWindow { minutes: u32, unit: PaidUnit },
    /// Release only when at least `gpus` were surplus over the last `minutes`.
    Deadband { gpus: u32, minutes: u32 },
    /// The pool's limits the file keeps (`max_gpus` fitted to the pool's range).
    Limits { min_gpus: u32, max_gpus: u32 },
    /// A step up recurs at `onset` (`HH:MM` UTC) and a schedule floor meets it.
    PreScale {
        onset: String,
        rise_gpus: u32,
        floor_gpus: u32,
        days_seen: u32,
        /// Days of the week (0 = Sunday); `None`: every day.
        weekdays: Option<Vec<u8>>,
    },
    /// A recurring step was found, but a floor for it cost more than it saved.
    PreScaleLeftOut {
        onset: String,
        rise_gpus: u32,
        days_seen: u32,
    },
    /// The operator's custom metrics, kept as they were.
    KeptMetrics { names: Vec<String> },
}

/// A suggestion for a pool as the Rules view shows it: a proposal beside the rules being
/// edited, which the operator accepts into the editor or dismisses.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RulesSuggestion {
    /// The rule file, its limits fitted to the pool's range, the editor's custom metrics kept.
    pub file: String,
    /// Why it is as it is, in order.
    pub notes: Vec<SuggestNote>,
    /// Whether it stays within the shortfall limit on the demand it was chosen on.
    pub within_limit: bool,
}

/// The pool's spot settings `ebb rules suggest` recommends beside the rules (a rule file
/// has none), when the trace carries a spot market: the cheapest mix of a small grid within
/// the shortfall limit, replayed with the suggested rules.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct SpotMixSuggestion {
    /// GPUs above the base always on demand.
    pub on_demand_floor: u32,
    /// Of the GPUs above the base and the floor, the percentage on spot (0: none).
    pub spot_pct: u32,
    /// Where the interruptions came from: "trace" (its `interrupted` column) or "model"
    /// (seeded at `interruptions_per_gpu_hour`).
    pub interruptions_from: String,
    pub interruptions_per_gpu_hour: Option<f64>,
    /// Mixes replayed.
    pub candidates: u32,
    /// Whether the mix stays within the shortfall limit on the trace.
    pub within_limit: bool,
    /// The suggested rules with the mix (`policy` "rules+spot"; "rules" at 0%).
    pub replay: ReplayResult,
    /// The same rules all on demand.
    pub on_demand: ReplayResult,
}
