//! The policies every replay is read against: `static-peak` (no elasticity), the seed's
//! rule `seed-80-30`, Kubernetes' `hpa`, and the perfect-foresight `oracle`.

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
/// for 3 min → +20%, ≤ 30% for 10 min → −30%, 5 min cooldown; `hpa`: target 60%, tolerance
/// 0.1, 5 min scale-in window, step cap max(×2, +4)) decide through the rules engine,
/// priced by [`pricing`].
pub fn baseline(
    name: &str,
    trace: &Trace,
    options: &ReplayOptions,
    entry: &PriceEntry,
) -> Result<Box<dyn Policy>, BaselineError> {
    baseline_within(name, trace, options, entry, None)
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
