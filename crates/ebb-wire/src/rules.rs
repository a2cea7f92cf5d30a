//! The rules engine's wire shapes: a pool's rule set as the console stores and shows it
//! (the TOML file, validated, in JSON), and a [`Decision`] with each rule's recommendation,
//! every clamp that changed the count and the reason (the decision log). `ebb-rules` parses,
//! decides and lints; the UI words [`RuleStatus`], [`Clamp`] and [`DecisionReason`] like
//! the other reasons. `Display` is the English for logs and the CLI.
//!
//! Times are epoch milliseconds (`_ms`), money is fen (`_fen`), counts are GPUs (`_gpus`).

use serde::{Deserialize, Serialize};
use specta::Type;
use std::fmt;

/// One pool's rules, validated (what `ebb_rules::model::parse` accepts, as data).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Type)]
pub struct RuleSet {
    /// The pool these rules are for, when the file says.
    pub pool: Option<String>,
    /// Min, max, step cap, budget: bounds no rule or schedule breaks (the budget none at all).
    pub limits: Limits,
    /// How surplus GPUs are given back.
    pub scale_in: ScaleIn,
    /// Custom metrics the rules may name, each with its staleness limit.
    pub metrics: Vec<CustomMetric>,
    /// Threshold rules, in file order.
    pub thresholds: Vec<ThresholdRule>,
    /// Target-tracking rules, in file order.
    pub targets: Vec<TargetRule>,
    /// Schedules, in file order.
    pub schedules: Vec<Schedule>,
}

/// The pool's hard limits.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, Type)]
pub struct Limits {
    /// Never fewer (unless the budget cannot pay for them).
    pub min_gpus: u32,
    /// Never more.
    pub max_gpus: u32,
    /// The largest change one decision makes, per direction.
    pub step: StepCap,
    /// What the pool may cost; no rule and no schedule can break it.
    pub budget: Budget,
}

/// A cap on one step, per direction: the larger of a count and a share of the current
/// count (HPA's `selectPolicy: Max`), so `out_gpus = 4, out_pct = 100` is "×2 or +4".
/// A direction with neither is unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize, Type)]
pub struct StepCap {
    /// At most this many GPUs added at once.
    pub out_gpus: Option<u32>,
    /// At most this share of the current count added at once (rounded up).
    pub out_pct: Option<f64>,
    /// At most this many GPUs released at once.
    pub in_gpus: Option<u32>,
    /// At most this share of the current count released at once (rounded up).
    pub in_pct: Option<f64>,
}

/// A budget cap on the pool's run rate (base and overlay, through the pool's plan and the
/// catalog), in fen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
pub struct Budget {
    /// The most per hour.
    pub per_hour_fen: Option<i64>,
    /// The most per month (730 hours).
    pub per_month_fen: Option<i64>,
}

/// Scale-in settings: billing-increment-aware release, a deadband, a disruption budget and
/// quiet windows. The budget's and the quiet windows' fields default to none, so rule sets
/// stored before them still read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ScaleIn {
    /// Release a surplus GPU at once, even in the middle of the unit it has paid for.
    /// Off by default: a GPU is released only in the last `release_window_minutes` of its
    /// paid unit (hour, day, week), the GPU whose unit ends first going first.
    pub force: bool,
    /// How near the end of its paid unit a GPU may be released.
    pub release_window_minutes: u32,
    /// Release only when at least this many GPUs are surplus (0: any).
    pub deadband_gpus: u32,
    /// …over the whole of the last this many minutes (surplus: held − ⌈busy GPUs⌉).
    pub deadband_minutes: u32,
    /// Disruption budget: at most this many GPUs released per `budget_window_minutes`
    /// (`None`: no count cap).
    #[serde(default)]
    pub budget_gpus: Option<u32>,
    /// … and at most this share (1–100%) of the highest count held over the window, rounded
    /// down but at least one. With both, the smaller allowance holds (Karpenter's budgets).
    #[serde(default)]
    pub budget_pct: Option<u32>,
    /// The budget's window; given exactly when a budget is (1–1440).
    #[serde(default)]
    pub budget_window_minutes: Option<u32>,
    /// While one of these is on, no busy GPU is released (idle ones still may be).
    #[serde(default)]
    pub quiet: Vec<QuietWindow>,
}

impl Default for ScaleIn {
    fn default() -> ScaleIn {
        ScaleIn {
            force: false,
            release_window_minutes: 5,
            deadband_gpus: 0,
            deadband_minutes: 0,
            budget_gpus: None,
            budget_pct: None,
            budget_window_minutes: None,
            quiet: Vec::new(),
        }
    }
}

/// A recurring window in which no busy GPU is released: from each time `cron` matches (in
/// `time_zone`), for `duration_minutes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct QuietWindow {
    /// A cron expression (5 or 6 fields, croner), local to `time_zone`.
    pub cron: String,
    /// How long each occurrence lasts.
    pub duration_minutes: u32,
    /// IANA time zone, e.g. `Asia/Shanghai`.
    pub time_zone: String,
}

/// A metric a rule watches.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum MetricRef {
    /// Pool GPU utilization, % (the mean over the pool's ready GPUs; saturates at 100).
    GpuUtil,
    /// Pool memory utilization, %.
    MemUtil,
    /// Busy GPUs: the sum of the ready GPUs' utilization ÷ 100 (demand; may exceed ready
    /// when the pool is short, as the replay model's `demand`).
    BusyGpus,
    /// A metric the operator's systems push (queue length, users, latency), by name.
    Custom { name: String },
}

impl MetricRef {
    /// The name a rule file uses.
    pub fn name(&self) -> &str {
        match self {
            MetricRef::GpuUtil => "gpu_util",
            MetricRef::MemUtil => "mem_util",
            MetricRef::BusyGpus => "busy_gpus",
            MetricRef::Custom { name } => name,
        }
    }
}

impl fmt::Display for MetricRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A custom metric and how old its last value may be before rules on it stand still.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct CustomMetric {
    /// As pushed, e.g. `users`, `latency_ms`, `queue_len`.
    pub name: String,
    /// A value older than this is stale: rules on it do nothing and say so.
    pub stale_after_minutes: u32,
    /// Read from Prometheus by the console instead of pushed; `None`: pushed.
    #[serde(default)]
    pub prometheus: Option<PromSource>,
}

/// A custom metric read from Prometheus: an instant PromQL query the console runs every
/// few seconds (KEDA's Prometheus scaler: its query, and a fallback after failures).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PromSource {
    /// An instant query answering one number (a scalar, or a vector of one series);
    /// `{pool}` stands for the pool's name.
    pub query: String,
    /// How long an answer may take, in seconds (1 to 60).
    pub timeout_s: u32,
    /// What the metric reads after `fallback_after` failed or empty answers in a row;
    /// `None`: it goes stale, and the rules on it stand still.
    pub fallback: Option<f64>,
    /// Failed or empty answers in a row before the fallback (at least 1).
    pub fallback_after: u32,
}

/// The default wait for a PromQL answer, in seconds.
pub const PROM_TIMEOUT_S: u32 = 5;
/// The default failures in a row before a PromQL metric's fallback.
pub const PROM_FALLBACK_AFTER: u32 = 3;

/// How a threshold rule compares its metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    /// `>`
    Above,
    /// `>=`
    AtLeast,
    /// `<`
    Below,
    /// `<=`
    AtMost,
}

impl Comparison {
    /// Whether `value` meets `threshold`.
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        match self {
            Comparison::Above => value > threshold,
            Comparison::AtLeast => value >= threshold,
            Comparison::Below => value < threshold,
            Comparison::AtMost => value <= threshold,
        }
    }

    /// The operator as a rule file writes it.
    pub const fn symbol(self) -> &'static str {
        match self {
            Comparison::Above => ">",
            Comparison::AtLeast => ">=",
            Comparison::Below => "<",
            Comparison::AtMost => "<=",
        }
    }
}

/// What a threshold rule does when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// `+N`
    AddGpus { gpus: u32 },
    /// `+N%` of the current count, rounded up, at least one.
    AddPct { pct: f64 },
    /// `-N`
    RemoveGpus { gpus: u32 },
    /// `-N%` of the current count, rounded up, at least one.
    RemovePct { pct: f64 },
    /// `set N`
    Set { gpus: u32 },
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::AddGpus { gpus } => write!(f, "+{gpus}"),
            Action::AddPct { pct } => write!(f, "+{pct}%"),
            Action::RemoveGpus { gpus } => write!(f, "-{gpus}"),
            Action::RemovePct { pct } => write!(f, "-{pct}%"),
            Action::Set { gpus } => write!(f, "set {gpus}"),
        }
    }
}

/// "When `metric` `comparison` `threshold` for `for_minutes`, do `action`".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ThresholdRule {
    /// Unique in the set; how decisions and warnings name it.
    pub name: String,
    /// What it watches.
    pub metric: MetricRef,
    /// How.
    pub comparison: Comparison,
    /// Against what, in the metric's unit.
    pub threshold: f64,
    /// Every minute of the last this many must meet it (1: the latest minute).
    pub for_minutes: u32,
    /// What it does.
    pub action: Action,
    /// After it acts, it waits this long: a scale-out rule after the last scale-out, a
    /// scale-in rule after the last change of either direction.
    pub cooldown_minutes: u32,
}

/// Keep a metric near a target (Kubernetes HPA semantics by default).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct TargetRule {
    /// Unique in the set.
    pub name: String,
    /// What it watches: `gpu_util`/`mem_util` (a mean, %), `busy_gpus` (the target is the
    /// % of each GPU to fill, up to 100: 100 sizes the pool to demand), or a custom metric
    /// (the target is its value per GPU, e.g. 5,000 users per GPU).
    pub metric: MetricRef,
    /// The target, in the unit above.
    pub target: f64,
    /// No change while `|value / target − 1| ≤ tolerance` (HPA: 0.1).
    pub tolerance: f64,
    /// A scale-in goes only to the highest count recommended over this window (HPA: 5).
    pub scale_in_stabilization_minutes: u32,
    /// A scale-out goes only to the lowest count recommended over this window (HPA: 0) …
    pub scale_out_sustain_minutes: u32,
    /// … unless the recommendation is at least this many GPUs above the current count:
    /// then at once (the asymmetric trigger).
    pub overload_gpus: Option<u32>,
}

/// When a schedule applies.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ScheduleWhen {
    /// From each time the cron expression matches (local time), for `duration_minutes`.
    Cron { cron: String, duration_minutes: u32 },
    /// Once, from `start` to `end` (local date-times `YYYY-MM-DDTHH:MM:SS`, end excluded).
    Window { start: String, end: String },
}

/// What an active schedule does to the bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum BoundKind {
    /// At least.
    Floor,
    /// At most.
    Ceiling,
    /// Exactly (a floor and a ceiling).
    Exact,
}

impl BoundKind {
    /// The key a rule file gives the count under: `floor`, `ceiling` or `exact`.
    pub const fn key(self) -> &'static str {
        match self {
            BoundKind::Floor => "floor",
            BoundKind::Ceiling => "ceiling",
            BoundKind::Exact => "exact",
        }
    }
}

impl fmt::Display for BoundKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BoundKind::Floor => "at least",
            BoundKind::Ceiling => "at most",
            BoundKind::Exact => "exactly",
        })
    }
}

/// "From … to … (in this time zone), at least / at most / exactly N GPUs".
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct Schedule {
    /// Unique in the set.
    pub name: String,
    /// When.
    pub when: ScheduleWhen,
    /// IANA time zone the times are in, e.g. `Asia/Shanghai`.
    pub time_zone: String,
    /// Floor, ceiling or exact.
    pub bound: BoundKind,
    /// The count.
    pub gpus: u32,
}

// ---------------------------------------------------------------------------------------
// Decisions

/// One decision for one pool at one minute: the decision log's line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct Decision {
    /// When it was made.
    pub at_ms: i64,
    /// The count held before (the pool's desired count).
    pub current_gpus: u32,
    /// What each rule and schedule said, in file order (thresholds, targets, schedules).
    pub rules: Vec<RuleOutcome>,
    /// The rules' combined recommendation before any clamp (the current count when no
    /// rule recommends).
    pub recommended_gpus: u32,
    /// Every clamp that changed the count, in the order applied (each with its words).
    #[serde(serialize_with = "crate::words::worded_clamps")]
    #[specta(type = crate::words::WordedClamps)]
    pub clamps: Vec<Clamp>,
    /// The count to hold from now on.
    pub desired_gpus: u32,
    /// What the change does to the pool's cost per hour (negative saves); `None` without a
    /// price.
    pub cost_delta_per_hour_fen: Option<i64>,
    /// Why, in one structured reason (also when nothing changes), with its words.
    #[serde(serialize_with = "crate::words::worded_decision_reason")]
    #[specta(type = crate::words::WordedDecisionReason)]
    pub reason: DecisionReason,
}

/// What one rule said.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RuleOutcome {
    /// The rule's or schedule's name.
    pub rule: String,
    /// The count it recommends (before the pool's clamps); `None` when it has no opinion.
    pub recommended_gpus: Option<u32>,
    /// Why, with its words.
    #[serde(serialize_with = "crate::words::worded_status")]
    #[specta(type = crate::words::WordedRuleStatus)]
    pub status: RuleStatus,
}

/// A rule's state at a decision, with its numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum RuleStatus {
    /// A threshold met for its whole window: the rule fires.
    Fired {
        metric: String,
        value: f64,
        comparison: Comparison,
        threshold: f64,
        minutes: u32,
        action: Action,
    },
    /// A threshold met for only part of its window ("80% for 2 of 3 minutes").
    Sustaining {
        metric: String,
        value: f64,
        comparison: Comparison,
        threshold: f64,
        minutes_met: u32,
        minutes_needed: u32,
    },
    /// A threshold not met now.
    NotMet {
        metric: String,
        value: f64,
        comparison: Comparison,
        threshold: f64,
    },
    /// No value for the metric yet: just enabled, or the metric never came (worded as
    /// waiting for the first reading, which is what the rule does).
    NoData { metric: String },
    /// The metric's last value is too old: the rule does nothing.
    Stale {
        metric: String,
        last_seen_ms: i64,
        stale_after_minutes: u32,
    },
    /// The rule would act but is cooling down.
    Cooldown { until_ms: i64, would_gpus: u32 },
    /// A target met within its tolerance: no change.
    WithinTolerance {
        metric: String,
        value: f64,
        target: f64,
        tolerance: f64,
    },
    /// A target's recommendation (after its own stabilization or sustain window).
    Tracking {
        metric: String,
        value: f64,
        target: f64,
        /// The count the latest value alone asks for.
        instant_gpus: u32,
    },
    /// A target above the count, waiting for its sustain window (`minutes_met` of
    /// `minutes_needed`), the overload not reached.
    TargetSustaining {
        metric: String,
        value: f64,
        target: f64,
        instant_gpus: u32,
        minutes_met: u32,
        minutes_needed: u32,
    },
    /// A schedule in force.
    ScheduleActive {
        bound: BoundKind,
        gpus: u32,
        until_ms: i64,
    },
    /// A schedule not in force now.
    ScheduleInactive,
}

/// A clamp that changed the count, with its numbers: `from_gpus` before it, `to_gpus` after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Clamp {
    /// A schedule's floor, ceiling or exact count.
    Schedule {
        schedule: String,
        bound: BoundKind,
        from_gpus: u32,
        to_gpus: u32,
    },
    /// The pool's minimum.
    Min { from_gpus: u32, to_gpus: u32 },
    /// The pool's maximum.
    Max { from_gpus: u32, to_gpus: u32 },
    /// The pool's step cap.
    StepCap {
        from_gpus: u32,
        to_gpus: u32,
        step_gpus: u32,
    },
    /// The budget: `to_gpus` is the most the budget pays for (`None` figures: no price, so
    /// the pool may not grow).
    Budget {
        from_gpus: u32,
        to_gpus: u32,
        per_hour_fen: Option<i64>,
        per_month_fen: Option<i64>,
    },
    /// A rule cooling down.
    Cooldown {
        rule: String,
        from_gpus: u32,
        to_gpus: u32,
        until_ms: i64,
    },
    /// A target's stabilization (scale-in) or sustain (scale-out) window.
    Stabilization {
        rule: String,
        from_gpus: u32,
        to_gpus: u32,
        window_minutes: u32,
    },
    /// Surplus GPUs kept until near the end of the unit they have paid for.
    PaidUnitHold {
        from_gpus: u32,
        to_gpus: u32,
        /// When the newest held GPU may next be released.
        next_release_ms: i64,
    },
    /// Too few GPUs surplus over the deadband window to release.
    Deadband {
        from_gpus: u32,
        to_gpus: u32,
        surplus_gpus: u32,
        deadband_gpus: u32,
        window_minutes: u32,
    },
    /// The disruption budget: at most `allowance_gpus` released below the highest count
    /// held over the last `window_minutes` (`highest_gpus`).
    DisruptionBudget {
        from_gpus: u32,
        to_gpus: u32,
        allowance_gpus: u32,
        highest_gpus: u32,
        window_minutes: u32,
    },
    /// A quiet window is on until `until_ms`: no busy GPU (⌈busy GPUs⌉ of the latest
    /// minute, `busy_gpus`) is released.
    QuietWindow {
        from_gpus: u32,
        to_gpus: u32,
        busy_gpus: u32,
        until_ms: i64,
    },
    /// The pool's team may hold at most `quota_gpus` GPUs of `model` in all (its other
    /// pools asking for the rest): `to_gpus` is the most this pool may ask for.
    Quota {
        from_gpus: u32,
        to_gpus: u32,
        team: String,
        model: String,
        quota_gpus: u32,
    },
    /// The pool's team may project to at most `per_month_fen` this month (its other pools'
    /// projections and this one's spend so far counted): `to_gpus` is the most that pays.
    TeamSpend {
        from_gpus: u32,
        to_gpus: u32,
        team: String,
        per_month_fen: i64,
    },
}

impl Clamp {
    /// The count before and after.
    pub fn counts(&self) -> (u32, u32) {
        match *self {
            Clamp::Schedule {
                from_gpus, to_gpus, ..
            }
            | Clamp::Min { from_gpus, to_gpus }
            | Clamp::Max { from_gpus, to_gpus }
            | Clamp::StepCap {
                from_gpus, to_gpus, ..
            }
            | Clamp::Budget {
                from_gpus, to_gpus, ..
            }
            | Clamp::Cooldown {
                from_gpus, to_gpus, ..
            }
            | Clamp::Stabilization {
                from_gpus, to_gpus, ..
            }
            | Clamp::PaidUnitHold {
                from_gpus, to_gpus, ..
            }
            | Clamp::Deadband {
                from_gpus, to_gpus, ..
            }
            | Clamp::DisruptionBudget {
                from_gpus, to_gpus, ..
            }
            | Clamp::QuietWindow {
                from_gpus, to_gpus, ..
            }
            | Clamp::Quota {
                from_gpus, to_gpus, ..
            }
            | Clamp::TeamSpend {
                from_gpus, to_gpus, ..
            } => (from_gpus, to_gpus),
        }
    }

    /// A stable word for the kind (the serde tag).
    pub const fn kind(&self) -> &'static str {
        match self {
            Clamp::Schedule { .. } => "schedule",
            Clamp::Min { .. } => "min",
            Clamp::Max { .. } => "max",
            Clamp::StepCap { .. } => "step_cap",
            Clamp::Budget { .. } => "budget",
            Clamp::Cooldown { .. } => "cooldown",
            Clamp::Stabilization { .. } => "stabilization",
            Clamp::PaidUnitHold { .. } => "paid_unit_hold",
            Clamp::Deadband { .. } => "deadband",
            Clamp::DisruptionBudget { .. } => "disruption_budget",
            Clamp::QuietWindow { .. } => "quiet_window",
            Clamp::Quota { .. } => "quota",
            Clamp::TeamSpend { .. } => "team_spend",
        }
    }
}

/// Why the decision is what it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DecisionReason {
    /// A rule's recommendation moved the pool (perhaps clamped: see the clamps).
    Rule {
        rule: String,
        from_gpus: u32,
        to_gpus: u32,
    },
    /// A bound moved the pool with no rule asking (a schedule starting, min, max, budget).
    Bound {
        #[serde(serialize_with = "crate::words::worded_clamp")]
        #[specta(type = crate::words::WordedClamp)]
        clamp: Clamp,
    },
    /// A rule asked for a change and a clamp kept the pool where it was.
    Held {
        rule: String,
        #[serde(serialize_with = "crate::words::worded_clamp")]
        #[specta(type = crate::words::WordedClamp)]
        clamp: Clamp,
    },
    /// Nothing changes; the rule nearest to acting and its state ("80% for 2 of 3 minutes",
    /// a stale metric).
    Waiting {
        rule: String,
        #[serde(serialize_with = "crate::words::worded_status")]
        #[specta(type = crate::words::WordedRuleStatus)]
        status: RuleStatus,
    },
    /// Nothing changes and no rule is near acting.
    Steady,
}

/// Epoch milliseconds as `HH:MM` UTC (the CLI's and the log's words; the UI shows local time).
pub fn hh_mm_utc(at_ms: i64) -> String {
    let minute_of_day = at_ms.div_euclid(60_000).rem_euclid(1_440);
    format!("{:02}:{:02} UTC", minute_of_day / 60, minute_of_day % 60)
}

/// A count and its noun, singular for one: `counted(1, "GPU", "GPUs")` is "1 GPU",
/// `counted(2, "GPU", "GPUs")` "2 GPUs" (the CLI's and the log's English; the UI words its
/// own from the catalog).
pub fn counted(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A metric's value or threshold as the decision log words it: whole numbers bare, others
/// with two decimals.
pub fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{value:.0}")
    } else {
        format!("{value:.2}")
    }
}

/// The English of a phrased reason: its phrase in the English catalog (`crate::words`
/// chooses the words, `crate::catalog` holds them), as logs and the CLI write it.
pub(crate) fn english(phrase: &crate::phrase::Phrase, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.write_str(&crate::catalog::Words::of(crate::ipc::UiLanguage::English).render(phrase))
}

impl fmt::Display for RuleStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        english(&self.phrase(), f)
    }
}

impl fmt::Display for Clamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        english(&self.phrase(), f)
    }
}

impl fmt::Display for DecisionReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        english(&self.phrase(), f)
    }
}

// ---------------------------------------------------------------------------------------
// Validation and lint

/// One reason a rule file (or rule set) is invalid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct RuleProblem {
    /// The line in the file (from 1), when there is a file and the field is found in it.
    pub line: Option<u32>,
    /// The field, as the file names it: `limits.max_gpus`, `threshold[1].action` (indexes
    /// from 0 in file order).
    pub field: String,
    /// What is wrong, in English (logs, the CLI): `words` in the English catalog.
    pub message: String,
    /// What is wrong, as words (a `rules.error.*` key and its arguments): the UI says them
    /// in the operator's language.
    pub words: crate::phrase::Phrase,
}

impl RuleProblem {
    /// A problem with `field` (at `line`, when known), its English written from `words`.
    pub fn new(
        line: Option<u32>,
        field: impl Into<String>,
        words: crate::phrase::Phrase,
    ) -> RuleProblem {
        RuleProblem {
            line,
            field: field.into(),
            message: crate::catalog::Words::of(crate::ipc::UiLanguage::English).render(&words),
            words,
        }
    }
}

impl fmt::Display for RuleProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(line) = self.line {
            write!(f, "line {line}: ")?;
        }
        // A TOML syntax error outside any key has a line and no field.
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// A warning about a valid rule set: it will run, but probably not as meant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct LintWarning {
    /// The rule or schedule it is about (`None`: the limits).
    pub rule: Option<String>,
    /// The field, as in [`RuleProblem::field`].
    pub field: String,
    /// The line in the file, when linted from one.
    pub line: Option<u32>,
    /// What, with its numbers.
    pub problem: LintProblem,
}

/// What a lint warning found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LintProblem {
    /// A scale-out moves the metric from its threshold to about `after` (U·N/(N+k)), at or
    /// past a scale-in rule's threshold (or a scale-in the other way): the pool flaps.
    Flapping {
        other_rule: String,
        at_gpus: u32,
        from_value: f64,
        after_value: f64,
        other_threshold: f64,
    },
    /// A scale-out rule's cooldown ends before the GPUs it ordered are ready: it fires again
    /// on a metric that does not show them yet.
    CooldownShorterThanWarmup {
        cooldown_minutes: u32,
        warmup_minutes: u32,
    },
    /// A scale-out and a scale-in band on the same metric overlap: both can fire at once.
    BandsOverlap {
        other_rule: String,
        out_threshold: f64,
        in_threshold: f64,
    },
    /// A threshold the metric can never meet (utilization beyond 0–100%).
    Unreachable {
        metric: String,
        comparison: Comparison,
        threshold: f64,
    },
    /// A schedule's count outside min/max: the limits win and the schedule does nothing there.
    ScheduleFightsLimits {
        bound: BoundKind,
        gpus: u32,
        min_gpus: u32,
        max_gpus: u32,
    },
    /// A schedule's floor (or the pool's min) costs more than the budget: the budget wins.
    OverBudget { gpus: u32, budget_gpus: u32 },
    /// A `set N` outside min/max.
    SetOutsideLimits {
        gpus: u32,
        min_gpus: u32,
        max_gpus: u32,
    },
    /// Holding the target at the expected peak needs more than max.
    TargetUnreachable {
        peak_value: f64,
        needed_gpus: u32,
        max_gpus: u32,
    },
    /// `scale_in.force = true` releases GPUs at once, while the pool's overlay pays each
    /// started unit of `unit_hours` in full: a release and a re-rent within the unit pay it
    /// again.
    ForceReleasePaysAgain { unit_hours: u32 },
}

impl fmt::Display for LintProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LintProblem::Flapping {
                other_rule,
                at_gpus,
                from_value,
                after_value,
                other_threshold,
            } => write!(
                f,
                "flapping: at {at_gpus} GPUs this step moves the metric from {} to about {}, past {other_rule}'s threshold {}",
                number(*from_value),
                number(*after_value),
                number(*other_threshold)
            ),
            LintProblem::CooldownShorterThanWarmup {
                cooldown_minutes,
                warmup_minutes,
            } => write!(
                f,
                "the cooldown ({cooldown_minutes} min) is shorter than the warmup ({warmup_minutes} min): it fires again before its GPUs are ready"
            ),
            LintProblem::BandsOverlap {
                other_rule,
                out_threshold,
                in_threshold,
            } => write!(
                f,
                "overlaps {other_rule}: scale out from {}, scale in up to {}: both can fire at once",
                number(*out_threshold),
                number(*in_threshold)
            ),
            LintProblem::Unreachable {
                metric,
                comparison,
                threshold,
            } => write!(
                f,
                "{metric} {} {} can never be met (utilization is 0–100%)",
                comparison.symbol(),
                number(*threshold)
            ),
            LintProblem::ScheduleFightsLimits {
                bound,
                gpus,
                min_gpus,
                max_gpus,
            } => write!(
                f,
                "{bound} {gpus} is outside the pool's min {min_gpus} and max {max_gpus}: the limits win"
            ),
            LintProblem::OverBudget { gpus, budget_gpus } => write!(
                f,
                "{gpus} GPUs cost more than the budget, which pays for {budget_gpus}: the budget wins"
            ),
            LintProblem::SetOutsideLimits {
                gpus,
                min_gpus,
                max_gpus,
            } => write!(
                f,
                "set {gpus} is outside the pool's min {min_gpus} and max {max_gpus}: the limits win"
            ),
            LintProblem::TargetUnreachable {
                peak_value,
                needed_gpus,
                max_gpus,
            } => write!(
                f,
                "at the expected peak ({}) the target needs {needed_gpus} GPUs, more than max {max_gpus}",
                number(*peak_value)
            ),
            LintProblem::ForceReleasePaysAgain { unit_hours } => write!(
                f,
                "force = true releases a GPU at once, but GPUs above the base pay each started {} in full: each release and re-rent within the {} pays again (leave force off to release in the last minutes of the paid unit)",
                unit_word(*unit_hours),
                unit_word(*unit_hours)
            ),
        }
    }
}

/// A paid unit of `hours` as a word: hour, day, week (else "N hours").
fn unit_word(hours: u32) -> String {
    match hours {
        1 => "hour".into(),
        24 => "day".into(),
        168 => "week".into(),
        n => format!("{n} hours"),
    }
}

/// `ebb rules lint --json`: a file's problems (invalid) or warnings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct LintReport {
    /// The file linted.
    pub file: String,
    /// Whether it is a valid rule set.
    pub valid: bool,
    /// Why not (empty when valid), each with its field's place as data (`path`).
    #[serde(serialize_with = "crate::rule_paths::problems_with_paths")]
    #[specta(type = crate::rule_paths::PathedProblems)]
    pub errors: Vec<RuleProblem>,
    /// Warnings about a valid set, each with its field's place as data (`path`).
    #[serde(serialize_with = "crate::rule_paths::warnings_with_paths")]
    #[specta(type = crate::rule_paths::PathedWarnings)]
    pub warnings: Vec<LintWarning>,
}

// ---------------------------------------------------------------------------------------
// Rules on a pool, live

/// A PromQL metric's query as run (the pool's name templated in) and its value now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PromqlValue {
    pub query: String,
    pub value: f64,
}

/// Whether the console acts on a pool's rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum RulesMode {
    /// Decide each tick and set the pool's desired count.
    Enabled,
    /// Kept, not evaluated.
    Disabled,
    /// Decide and log each change the rules would make; change nothing.
    Shadow,
}

impl fmt::Display for RulesMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RulesMode::Enabled => "enabled",
            RulesMode::Disabled => "disabled",
            RulesMode::Shadow => "shadow",
        })
    }
}

/// A pool's rules as stored, with what the console last decided on them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct PoolRules {
    pub pool: String,
    /// 1 for the first save, one more for each.
    pub version: u32,
    pub mode: RulesMode,
    /// The rule file (TOML) as saved.
    pub source: String,
    /// The same, as data.
    pub rules: RuleSet,
    pub updated_at_ms: i64,
    /// Its lint warnings (acknowledged when it was saved).
    pub warnings: Vec<LintWarning>,
    /// The enforcer's latest decision on these rules (also "no change", with why).
    pub last_decision: Option<Decision>,
    /// The custom metrics the rules name: the latest value and when it came.
    pub metrics: Vec<MetricValue>,
}

/// A custom metric's latest value for a pool.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct MetricValue {
    pub name: String,
    /// `None` when none has come yet.
    pub value: Option<f64>,
    pub at_ms: Option<i64>,
    /// Past its staleness limit (or never seen): the rules that name it do nothing.
    pub stale: bool,
    pub stale_after_minutes: u32,
}

/// A custom metric pushed by the operator's systems (`POST /v1/metrics`, `ebb metric push`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct MetricPush {
    /// `[a-z0-9_]`, 1 to 64 characters, starting with a letter.
    pub name: String,
    pub value: f64,
    /// The pool it is about; `None` for every pool.
    #[serde(default)]
    pub pool: Option<String>,
    /// When it was measured (epoch ms); `None` for now.
    #[serde(default)]
    pub at: Option<i64>,
}
