//! The policies every replay is read against: `static-peak` (no elasticity), the seed's
//! rule `seed-80-30`, Kubernetes' `hpa`, and the perfect-foresight `oracle`.
//!
//! # What the rule baselines do, exactly
//!
//! Both are rule files (`examples/seed-80-30.toml`, `examples/hpa.toml`) run through
//! [`RulesPolicy`] and [`crate::decide`], as a live pool's rules would be. What they see each
//! minute of a replay ([`crate::rules_policy`]): `gpu_util` is the pool's utilization over
//! its **ready** GPUs, `min(100, 100 · demand / ready)` (100 when none is ready and there is
//! work; GPUs still warming are not in it), one sample a minute; the count they act on (the
//! decision's "current") is the **held** count, ready + warming (what the pool pays for).
//! Both have `min_gpus = 1`, `max_gpus = 100000`, and `force = true`: a scale-in takes effect
//! at once (warming orders cancelled newest first, then the newest ready GPUs), with no
//! paid-unit hold and no deadband.
//!
//! **`seed-80-30`**: two threshold rules on `gpu_util`.
//! - *Out*: when the last 3 samples (this minute's and the two before) are all ≥ 80%, add
//!   20% **of the held count**, rounded up, at least 1 GPU: `held + max(1, ⌈0.2 · held⌉)`
//!   (a float within 1e-9 of a whole number is that number). No step cap.
//! - *In*: when the last 10 samples are all ≤ 30%, remove `max(1, ⌈0.3 · held⌉)` GPUs.
//! - *The sustain does not restart after an action*: it is not a counter but the metric's
//!   last 3 (10) samples, read again every minute. What spaces the actions is the 5-minute
//!   **cooldown**: a scale-out waits 5 minutes after the pool's last scale-out; a scale-in
//!   waits 5 minutes after the last change either way. Since GPUs ordered at minute `t` are
//!   ready at `t + 5` (before that minute's decision), utilization stays ≥ 80% through the
//!   warmup of a short pool, and the rule fires again at `t + 5` if the new GPUs did not
//!   bring it under 80%.
//!
//! **`hpa`**: one target rule on `gpu_util`, target 60%, tolerance 0.1.
//! - *Within tolerance* (`|util / 60 − 1| ≤ 0.1`, 54–66%) it asks to stay, which also holds
//!   off any scale-in.
//! - Otherwise it asks for `⌈ready · util / 60⌉`: computed from the **ready** GPUs of that
//!   minute (utilization is a mean over them), compared with the held count. Utilization
//!   saturates at 100, so when short one decision asks at most `⌈5/3 · ready⌉`.
//! - *Scale-out at once* (no sustain), capped by the step cap: at most
//!   `max(4, ⌈held · 100%⌉)` GPUs added per decision (doubling, or +4 from a small pool).
//! - *Scale-in*: the highest count recommended over the last 5 minutes (each from that
//!   minute's utilization and ready count), no higher than the held count, released at
//!   once. No step cap on the way down. No cooldown.

use super::ReplayOptions;
use super::billing::unit_minutes;
use super::oracle::Oracle;
use super::trace::Trace;
use crate::decide::Pricing;
use crate::policy::{MinuteView, Policy};
use crate::rules_policy::RulesPolicy;
use ebb_cost::{PoolPlan, PriceEntry};

/// Every baseline's name, in the order results list them.
pub const BASELINES: [&str; 4] = ["static-peak", "seed-80-30", "hpa", "oracle"];

/// Holds the trace's peak, rounded up, from minute 0 to the end.
#[derive(Debug, Clone, Copy)]
pub struct StaticPeak {
    peak_gpus: u32,
}

impl StaticPeak {
    /// For `trace`.
    pub fn new(trace: &Trace) -> StaticPeak {
        StaticPeak {
            peak_gpus: trace.peak_gpus(),
        }
    }
}

impl Policy for StaticPeak {
    fn name(&self) -> &str {
        "static-peak"
    }

    fn desired(&mut self, _view: &MinuteView<'_>) -> u32 {
        self.peak_gpus
    }
}

/// Why a baseline cannot be run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaselineError {
    /// Not a baseline.
    #[error("no baseline `{0}`; the baselines are static-peak, seed-80-30, hpa and oracle")]
    Unknown(String),
}

/// The pricing a rule baseline decides with: `entry` under the replay's term and overlay,
/// no base (the budget and the cost delta count every GPU at the overlay's price, the
/// dearest reading; the base is chosen after the replay, by the bill).
pub fn pricing(entry: &PriceEntry, options: &ReplayOptions) -> Pricing {
    Pricing::single(
        entry.clone(),
        PoolPlan {
            base_gpus: 0,
            term: options.term,
            overlay: options.overlay,
        },
    )
}

/// The baseline called `name` for `trace`: the oracle looks ahead `options.warmup_minutes`
/// and pays per started unit of `options.overlay`; the rule baselines (`seed-80-30`: ≥ 80%
/// for 3 min → +20% of the held count, ≤ 30% for 10 min → −30%, 5 min cooldown; `hpa`:
/// target 60% of the ready GPUs, tolerance 0.1, 5 min scale-in window, step cap max(×2, +4);
/// exactly as the module's doc says) decide through the rules engine, priced by
/// [`pricing`].
pub fn baseline(
    name: &str,
    trace: &Trace,
    options: &ReplayOptions,
    entry: &PriceEntry,
) -> Result<Box<dyn Policy>, BaselineError> {
    baseline_within(name, trace, options, entry, None)
}

/// The perfect-foresight oracle on `trace`, renting `node_gpus` at a time (a Slurm
/// partition's nodes: each minute's demand rounded up to whole nodes); 1 for single GPUs.
pub fn node_oracle(trace: &Trace, options: &ReplayOptions, node_gpus: u32) -> Box<dyn Policy> {
    let demand = if node_gpus > 1 {
        crate::suggest::queue::whole_node_demand(trace.demand(), node_gpus)
    } else {
        trace.demand().to_vec()
    };
    Box::new(Oracle::new(
        &demand,
        options.warmup_minutes,
        unit_minutes(options.overlay),
    ))
}

/// [`baseline`], a rule baseline held within `limits` (`(min, max)` GPUs: a pool's, so the
/// baseline it is compared with never holds more than the pool may).
pub fn baseline_within(
    name: &str,
    trace: &Trace,
    options: &ReplayOptions,
    entry: &PriceEntry,
    limits: Option<(u32, u32)>,
) -> Result<Box<dyn Policy>, BaselineError> {
    match name {
        "static-peak" => Ok(Box::new(StaticPeak::new(trace))),
        "oracle" => Ok(Box::new(Oracle::new(
            trace.demand(),
            options.warmup_minutes,
            unit_minutes(options.overlay),
        ))),
        other => {
            let rules = crate::rules_policy::baseline(other)
                .ok_or_else(|| BaselineError::Unknown(other.to_string()))?;
            let rules = match limits {
                Some((min, max)) => {
                    let mut spec = rules.spec().clone();
                    spec.limits.min_gpus = min.min(max);
                    spec.limits.max_gpus = max;
                    crate::model::RuleSet::from_spec(spec).unwrap_or(rules)
                }
                None => rules,
            };
            let policy = RulesPolicy::new(other, rules, Some(pricing(entry, options)));
            Ok(Box::new(policy) as Box<dyn Policy>)
        }
    }
}
