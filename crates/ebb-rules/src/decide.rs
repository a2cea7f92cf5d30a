//! Decide, pure: `(rules, pool state, metric windows, now) -> Decision`, with each rule's
//! raw recommendation, every clamp that changed the count, the final count, its cost delta
//! and a structured reason, also when nothing changes.
//!
//! # Conflict resolution
//!
//! Written once, here:
//!
//! 1. **Each rule recommends** a count, or has no opinion. A threshold rule recommends its
//!    action applied to the current count once its condition has held for every minute of
//!    `for_minutes`; a target rule recommends the count that brings its metric to the
//!    target (the current count while within its tolerance); a rule whose metric is stale
//!    or missing has no opinion and says so. Schedules do not recommend: **schedules set
//!    bounds**.
//! 2. **The highest recommendation wins**: scale-out beats scale-in, the largest scale-out
//!    wins, and among scale-ins the smallest one (a target within tolerance, which asks to
//!    stay, holds off every scale-in, as in HPA with several metrics).
//! 3. **Clamps, in this fixed order**, each recorded when it changes the count:
//!    1. *schedule*: the largest floor and the smallest ceiling of the schedules in force
//!       (`exact` is both; when a floor and a ceiling cross, the floor wins);
//!    2. *min / max* of the pool (they beat schedules: a schedule outside them is a lint
//!       warning);
//!    3. *step cap*: at most the larger of `out_gpus` and `out_pct` of the current count
//!       added (in: `in_gpus`, `in_pct`) in one decision;
//!    4. *budget*: at most the largest count whose run rate (base + overlay, through the
//!       pool's plan and the catalog) fits the hourly and monthly budget. Nothing breaks it,
//!       not even min; without a price a budget allows no growth;
//!    5. *cooldown*, then *stabilization*: the same bounds applied to the recommendation
//!       without the rules cooling down, then with each target's stabilization (scale-in:
//!       the highest count recommended over its window) and sustain window (scale-out: the
//!       lowest over its window, unless the overload is reached);
//!    6. *deadband*: a release goes only when at least `deadband_gpus` are surplus (held −
//!       ⌈busy GPUs⌉) over the whole of the last `deadband_minutes`, and releases at most
//!       that surplus;
//!    7. *disruption budget*: a release goes no lower than the highest count held over the
//!       last `budget_window_minutes` less the allowance: the smaller of `budget_gpus` and
//!       `budget_pct` of that highest count (rounded down, at least 1), so at most that
//!       many GPUs go per window, whoever released them;
//!    8. *quiet window*: while a `[[scale_in.quiet]]` window is on, a release goes no lower
//!       than the busy GPUs (⌈busy GPUs⌉ of the latest minute; with no reading, none
//!       goes): idle GPUs may still go;
//!    9. *paid-unit hold* (unless `force`): a GPU goes only in the last
//!       `release_window_minutes` of the unit it has paid for (the pool's overlay unit:
//!       hour, day or week, from its own rental), so the count goes no lower than the GPUs
//!       held less those whose unit is ending, whichever they are (the console's placement
//!       gives back those whose unit ends soonest, and keeps each to its unit's end), and a
//!       release never pays a unit again nor throws paid time away.
//!
//!    Holds (5–9) only ever keep the count nearer the current one, and never above the
//!    upper bound (the smallest of max, the schedules' ceilings and the budget) nor below
//!    the lower one: the disruption budget and quiet windows pace the rules' releases, not
//!    a drop to a new max, ceiling or cost budget.
//!
//! Cooldowns: a scale-out rule with `cooldown_minutes` waits that long after the pool's last
//! scale-out; a scale-in rule waits that long after the last change of either direction (a
//! scale-in just after a scale-out is the flap a cooldown is for). A paid unit is a natural
//! minimum hold, so with paid-unit release a cooldown is rarely needed.
//!
//! Samples are one a minute (the console feeds minute means; a replay feeds its minutes):
//! "for 3 minutes" is the latest three samples within the last three minutes.

use crate::model::{CompiledSchedule, RuleSet};
use ebb_wire::rules::{
    Action, BoundKind, Clamp, Decision, DecisionReason, MetricRef, RuleOutcome, RuleStatus,
    ScaleIn, TargetRule, ThresholdRule,
};
use std::collections::VecDeque;

const MINUTE_MS: i64 = 60_000;

pub use crate::model::Pricing;

/// The pool as a decision sees it.
#[derive(Debug, Clone, Copy)]
pub struct PoolState<'a> {
    /// The count the pool is asked to hold now (the last decision's, or the slider's).
    pub desired_gpus: u32,
    /// GPUs ready.
    pub ready_gpus: u32,
    /// GPUs held (paid): ready + warming.
    pub held_gpus: u32,
    /// GPUs ordered and warming.
    pub warming_gpus: u32,
    /// When each held GPU's current run began (epoch ms), oldest first: a release holds
    /// each until near the end of its paid unit.
    pub held_since_ms: &'a [i64],
    /// The pool's last scale-out and scale-in, for cooldowns.
    pub last_scale_out_ms: Option<i64>,
    /// See `last_scale_out_ms`.
    pub last_scale_in_ms: Option<i64>,
    /// What the pool pays; `None` when no price is known (no budget check can pass, no
    /// cost delta, an hourly paid unit).
    pub pricing: Option<&'a Pricing>,
    /// GPUs that come and go together (a Slurm node's, for a pool bound to a partition);
    /// 1 (or 0) for a pool of single GPUs. Every count decided is whole nodes, so each
    /// step and its cost are a node's.
    pub node_gpus: u32,
}

/// One observation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// When (epoch ms).
    pub at_ms: i64,
    /// The value in the metric's unit.
    pub value: f64,
}

/// A metric's recent samples, oldest first: one a minute (each minute's mean), and before
/// the first whole minute, the readings so far as one partial sample.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Window {
    samples: VecDeque<Sample>,
    /// The mean of the readings so far while no whole minute has been read: what a target
    /// rule may scale out on at once. It counts toward no rule's minutes.
    partial: Option<Sample>,
}

impl Window {
    /// A window holding these samples (oldest first).
    pub fn from_samples(samples: impl IntoIterator<Item = Sample>) -> Window {
        Window {
            samples: samples.into_iter().collect(),
            partial: None,
        }
    }

    /// The first readings, less than a minute of them, as their mean at `at_ms`: the
    /// window's latest value until a whole minute is read (kept only while there is none).
    pub fn set_partial(&mut self, at_ms: i64, value: f64) {
        self.partial = self.samples.is_empty().then_some(Sample { at_ms, value });
    }

    /// Whether the latest value is the first readings', less than a whole minute.
    pub fn is_partial(&self) -> bool {
        self.samples.is_empty() && self.partial.is_some()
    }

    /// Adds the newest sample.
    pub fn push(&mut self, at_ms: i64, value: f64) {
        self.samples.push_back(Sample { at_ms, value });
        self.partial = None;
    }

    /// Forgets samples older than `from_ms`, but always keeps the newest (a custom metric's
    /// last-seen time is what staleness is judged by).
    pub fn trim_before(&mut self, from_ms: i64) {
        while self.samples.len() > 1 && self.samples.front().is_some_and(|s| s.at_ms < from_ms) {
            self.samples.pop_front();
        }
    }

    /// The newest sample (for a custom metric, its last-seen time); the partial one before
    /// the first whole minute.
    pub fn latest(&self) -> Option<Sample> {
        self.samples.back().copied().or(self.partial)
    }

    /// Newest first, only those within the last `minutes` before `now_ms` (`now` counts).
    fn recent(&self, now_ms: i64, minutes: u32) -> impl Iterator<Item = Sample> + '_ {
        let from = now_ms - i64::from(minutes) * MINUTE_MS;
        self.samples
            .iter()
            .rev()
            .copied()
            .filter(move |s| s.at_ms <= now_ms)
            .take_while(move |s| s.at_ms > from)
    }

    /// The value in force at `at_ms` (the newest sample at or before it).
    fn at(&self, at_ms: i64) -> Option<f64> {
        self.samples
            .iter()
            .rev()
            .find(|s| s.at_ms <= at_ms)
            .map(|s| s.value)
    }

    /// How many samples.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }
}

/// Recent samples of every metric a rule may watch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MetricWindows {
    /// Pool GPU utilization, %.
    pub gpu_util: Window,
    /// Pool memory utilization, %.
    pub mem_util: Window,
    /// Busy GPUs (Σ utilization ÷ 100).
    pub busy_gpus: Window,
    /// GPUs ready at each sample (what a utilization was a mean over).
    pub ready_gpus: Window,
    /// The count the pool was asked to hold at each sample (its highest in that minute):
    /// the disruption budget's history. The current count is added to it by `decide`.
    pub desired_gpus: Window,
    /// Custom metrics by name.
    pub custom: Vec<(String, Window)>,
}

impl MetricWindows {
    /// The window of one metric.
    pub fn get(&self, metric: &MetricRef) -> Option<&Window> {
        match metric {
            MetricRef::GpuUtil => Some(&self.gpu_util),
            MetricRef::MemUtil => Some(&self.mem_util),
            MetricRef::BusyGpus => Some(&self.busy_gpus),
            MetricRef::Custom { name } => {
                self.custom.iter().find(|(n, _)| n == name).map(|(_, w)| w)
            }
        }
    }

    /// The window of a custom metric, made when first pushed.
    pub fn custom_mut(&mut self, name: &str) -> &mut Window {
        let index = match self.custom.iter().position(|(n, _)| n == name) {
            Some(index) => index,
            None => {
                self.custom.push((name.to_string(), Window::default()));
                self.custom.len() - 1
            }
        };
        &mut self.custom[index].1
    }

    /// Forgets every sample older than `from_ms`.
    pub fn trim_before(&mut self, from_ms: i64) {
        self.gpu_util.trim_before(from_ms);
        self.mem_util.trim_before(from_ms);
        self.busy_gpus.trim_before(from_ms);
        self.ready_gpus.trim_before(from_ms);
        self.desired_gpus.trim_before(from_ms);
        for (_, window) in &mut self.custom {
            window.trim_before(from_ms);
        }
    }
}

/// The longest look back a rule set needs, in minutes (what a caller keeps of the windows).
pub fn window_minutes(rules: &RuleSet) -> u32 {
    let spec = rules.spec();
    let thresholds = spec.thresholds.iter().map(|r| r.for_minutes);
    let targets = spec.targets.iter().map(|r| {
        r.scale_in_stabilization_minutes
            .max(r.scale_out_sustain_minutes)
    });
    let budget = spec.scale_in.budget_window_minutes.unwrap_or(0);
    thresholds
        .chain(targets)
        .chain([spec.scale_in.deadband_minutes, budget, 1])
        .max()
        .unwrap_or(1)
}

/// How many GPUs the disruption budget lets go below `highest_gpus` (the highest count held
/// over its window): the smaller of `budget_gpus` and `budget_pct` of it (rounded down, at
/// least 1 while the pool holds any); `None` without a budget.
pub fn release_allowance(scale_in: &ScaleIn, highest_gpus: u32) -> Option<u32> {
    let by_pct = scale_in.budget_pct.map(|pct| {
        let share = u64::from(highest_gpus) * u64::from(pct) / 100;
        u32::try_from(share)
            .unwrap_or(u32::MAX)
            .max(u32::from(highest_gpus > 0))
    });
    match (scale_in.budget_gpus, by_pct) {
        (Some(gpus), Some(pct)) => Some(gpus.min(pct)),
        (gpus, pct) => gpus.or(pct),
    }
}

/// One rule's contribution before the clamps.
struct Proposal {
    /// Index into `Decision::rules`.
    outcome: usize,
    /// The count the latest value asks for.
    instant: u32,
    /// After the rule's own window (stabilization / sustain).
    effective: u32,
    /// Cooling down until then.
    cooling_until: Option<i64>,
    /// The window that made `effective` differ, for the clamp.
    window_minutes: u32,
}

/// The decision for one pool at `now_ms`.
#[allow(
    clippy::too_many_lines,
    reason = "the rule engine's stages in their order; to be split into stage functions"
)]
pub fn decide(
    rules: &RuleSet,
    state: &PoolState<'_>,
    metrics: &MetricWindows,
    now_ms: i64,
) -> Decision {
    let spec = rules.spec();
    let current = state.desired_gpus;
    let mut outcomes =
        Vec::with_capacity(spec.thresholds.len() + spec.targets.len() + spec.schedules.len());
    let mut proposals: Vec<Proposal> = Vec::new();

    for (i, rule) in spec.thresholds.iter().enumerate() {
        let (recommended, status, cooling) =
            threshold(rule, rules.threshold_stale_ms[i], state, metrics, now_ms);
        if let Some(gpus) = recommended {
            proposals.push(Proposal {
                outcome: outcomes.len(),
                instant: gpus,
                effective: gpus,
                cooling_until: cooling,
                window_minutes: 0,
            });
        }
        outcomes.push(RuleOutcome {
            rule: rule.name.clone(),
            recommended_gpus: recommended,
            status,
        });
    }
    for (i, rule) in spec.targets.iter().enumerate() {
        let (proposal, status) = target(rule, rules.target_stale_ms[i], state, metrics, now_ms);
        if let Some(mut proposal) = proposal {
            proposal.outcome = outcomes.len();
            outcomes.push(RuleOutcome {
                rule: rule.name.clone(),
                recommended_gpus: Some(proposal.instant),
                status,
            });
            proposals.push(proposal);
        } else {
            outcomes.push(RuleOutcome {
                rule: rule.name.clone(),
                recommended_gpus: None,
                status,
            });
        }
    }

    // Schedules: bounds.
    let mut floor: Option<(u32, usize)> = None;
    let mut ceiling: Option<(u32, usize)> = None;
    for (i, (schedule, compiled)) in spec.schedules.iter().zip(&rules.schedules).enumerate() {
        let status = match active_until(compiled, now_ms) {
            Some(until_ms) => {
                if matches!(schedule.bound, BoundKind::Floor | BoundKind::Exact)
                    && floor.is_none_or(|(gpus, _)| schedule.gpus > gpus)
                {
                    floor = Some((schedule.gpus, i));
                }
                if matches!(schedule.bound, BoundKind::Ceiling | BoundKind::Exact)
                    && ceiling.is_none_or(|(gpus, _)| schedule.gpus < gpus)
                {
                    ceiling = Some((schedule.gpus, i));
                }
                RuleStatus::ScheduleActive {
                    bound: schedule.bound,
                    gpus: schedule.gpus,
                    until_ms,
                }
            }
            None => RuleStatus::ScheduleInactive,
        };
        outcomes.push(RuleOutcome {
            rule: schedule.name.clone(),
            recommended_gpus: None,
            status,
        });
    }

    let budget_gpus = rules.budget_gpus(state.pricing, current);
    let bounds = Bounds {
        rules,
        current,
        floor,
        ceiling,
        budget_gpus,
        has_price: state.pricing.is_some(),
    };

    let best = |pick: &dyn Fn(&Proposal) -> Option<u32>| {
        proposals
            .iter()
            .filter_map(|p| pick(p).map(|gpus| (gpus, p)))
            .max_by_key(|(gpus, _)| *gpus)
    };
    let all = best(&|p| Some(p.instant));
    let recommended = all.map_or(current, |(gpus, _)| gpus);
    let mut clamps = Vec::new();
    let bounded = bounds.apply(recommended, Some(&mut clamps));

    // Cooldown: the same bounds on what the rules not cooling down recommend.
    let active = best(&|p| p.cooling_until.is_none().then_some(p.instant));
    let without_cooling = bounds.apply(active.map_or(current, |(g, _)| g), None);
    let mut desired = bounded;
    if without_cooling != desired {
        let cooling = proposals
            .iter()
            .filter(|p| p.cooling_until.is_some())
            .max_by_key(|p| p.instant)
            .expect("a difference comes from a rule cooling down");
        clamps.push(Clamp::Cooldown {
            rule: outcomes[cooling.outcome].rule.clone(),
            from_gpus: desired,
            to_gpus: without_cooling,
            until_ms: cooling.cooling_until.unwrap_or(now_ms),
        });
        desired = without_cooling;
    }
    // Stabilization: each target's own window.
    let effective = best(&|p| p.cooling_until.is_none().then_some(p.effective));
    let stabilized = bounds.apply(effective.map_or(current, |(g, _)| g), None);
    if stabilized != desired {
        let rule = proposals
            .iter()
            .filter(|p| p.cooling_until.is_none() && p.effective != p.instant)
            .max_by_key(|p| p.instant.abs_diff(p.effective))
            .or(effective.map(|(_, p)| p));
        let (rule, window_minutes) = rule.map_or((String::new(), 0), |p| {
            (outcomes[p.outcome].rule.clone(), p.window_minutes)
        });
        clamps.push(Clamp::Stabilization {
            rule,
            from_gpus: desired,
            to_gpus: stabilized,
            window_minutes,
        });
        desired = stabilized;
    }
    let upper = bounds.upper();

    // Deadband.
    let scale_in = &spec.scale_in;
    if desired < current && (scale_in.deadband_gpus > 0 || scale_in.deadband_minutes > 0) {
        // The least surplus is the one at the highest busy count (⌈⌉ once, not a sample:
        // a long window read each minute made it most of a replay's time).
        let mut seen = false;
        let mut highest = 0.0f64;
        for sample in metrics
            .busy_gpus
            .recent(now_ms, scale_in.deadband_minutes.max(1))
        {
            seen = true;
            if sample.value.is_finite() && sample.value > highest {
                highest = sample.value;
            }
        }
        let surplus = if seen {
            current.saturating_sub(ceil_gpus(highest))
        } else {
            current - desired
        };
        let release = (current - desired).min(surplus);
        let release = if release < scale_in.deadband_gpus {
            0
        } else {
            release
        };
        let held = (current - release).min(desired.max(upper));
        if held != desired {
            clamps.push(Clamp::Deadband {
                from_gpus: desired,
                to_gpus: held,
                surplus_gpus: surplus,
                deadband_gpus: scale_in.deadband_gpus,
                window_minutes: scale_in.deadband_minutes,
            });
            desired = held;
        }
    }

    // Disruption budget: no lower than the window's highest count less the allowance.
    if desired < current
        && let Some(window_minutes) = scale_in.budget_window_minutes
    {
        let highest = metrics
            .desired_gpus
            .recent(now_ms, window_minutes)
            .map(|s| ceil_gpus(s.value))
            .fold(current, u32::max);
        if let Some(allowance) = release_allowance(scale_in, highest) {
            let floor = highest.saturating_sub(allowance);
            let held = floor.max(desired).min(current).min(desired.max(upper));
            if held != desired {
                clamps.push(Clamp::DisruptionBudget {
                    from_gpus: desired,
                    to_gpus: held,
                    allowance_gpus: allowance,
                    highest_gpus: highest,
                    window_minutes,
                });
                desired = held;
            }
        }
    }

    // Quiet windows: the busy GPUs stay; with no reading, every GPU does.
    if desired < current
        && let Some(until_ms) = rules.quiet.on_until(now_ms)
    {
        let busy = metrics.busy_gpus.at(now_ms).map_or(current, ceil_gpus);
        let held = busy.max(desired).min(current).min(desired.max(upper));
        if held != desired {
            clamps.push(Clamp::QuietWindow {
                from_gpus: desired,
                to_gpus: held,
                busy_gpus: busy,
                until_ms,
            });
            desired = held;
        }
    }

    // Paid-unit hold: a GPU goes only near the end of its own paid unit.
    if desired < current && !scale_in.force {
        desired = paid_unit_hold(
            state,
            scale_in,
            (desired, current, upper),
            now_ms,
            &mut clamps,
        );
    }

    // Whole nodes: a part of a node asks for all of it.
    let node = state.node_gpus.max(1);
    if node > 1 && desired != current {
        desired = desired.div_ceil(node) * node;
    }

    // A desire never filled is not priced as a saving: a scale-in counts from the GPUs
    // held, not from the count asked for.
    let (priced_from, priced_to) = if desired < current {
        let held = current.min(state.held_gpus);
        (held, desired.min(held))
    } else {
        (current, desired)
    };
    let cost_delta_per_hour_fen = state.pricing.and_then(|pricing| {
        pricing
            .preview(priced_from, priced_to)
            .ok()
            .map(|preview| preview.delta.per_hour.fen())
    });

    let driver = all.map(|(_, p)| outcomes[p.outcome].rule.clone());
    let reason = if desired != current {
        match driver {
            Some(rule)
                if (recommended > current) == (desired > current) && recommended != current =>
            {
                DecisionReason::Rule {
                    rule,
                    from_gpus: current,
                    to_gpus: desired,
                }
            }
            _ => DecisionReason::Bound {
                clamp: clamps.last().cloned().expect("a bound moved the pool"),
            },
        }
    } else if let Some(sustaining) = all.and_then(|(_, p)| {
        let outcome = &outcomes[p.outcome];
        matches!(outcome.status, RuleStatus::TargetSustaining { .. }).then_some(outcome)
    }) {
        // A target not yet sustained is waiting, as a threshold rule would be.
        DecisionReason::Waiting {
            rule: sustaining.rule.clone(),
            status: sustaining.status.clone(),
        }
    } else if recommended != current
        && let (Some(rule), Some(clamp)) = (driver, clamps.last())
    {
        DecisionReason::Held {
            rule,
            clamp: clamp.clone(),
        }
    } else {
        waiting(&outcomes)
    };

    Decision {
        at_ms: now_ms,
        current_gpus: current,
        rules: outcomes,
        recommended_gpus: recommended,
        clamps,
        desired_gpus: desired,
        cost_delta_per_hour_fen,
        reason,
    }
}

/// The paid-unit hold: the count goes no lower than the GPUs held less those in the last
/// `release_window_minutes` of their paid unit (any of them: the console gives back the
/// GPUs whose unit ends soonest and keeps the others to their unit's end), recorded as a
/// clamp when it holds. `counts` is (desired so far, current, the upper bound).
fn paid_unit_hold(
    state: &PoolState<'_>,
    scale_in: &ScaleIn,
    (desired, current, upper): (u32, u32, u32),
    now_ms: i64,
    clamps: &mut Vec<Clamp>,
) -> u32 {
    let unit_ms = i64::from(
        state
            .pricing
            .map_or(1, |pricing| pricing.plan.overlay.unit_hours()),
    ) * 60
        * MINUTE_MS;
    let window_ms = i64::from(scale_in.release_window_minutes) * MINUTE_MS;
    // The GPUs whose unit is ending may go; of the others, the first to enter the window
    // says when the next may.
    let mut releasable = 0u32;
    let mut next_ms: Option<i64> = None;
    for &since in state.held_since_ms {
        let left = left_in_unit(since, now_ms, unit_ms);
        if left <= window_ms {
            releasable = releasable.saturating_add(1);
        } else {
            let at = now_ms + left - window_ms;
            next_ms = Some(next_ms.map_or(at, |next| next.min(at)));
        }
    }
    let after = state.held_gpus.saturating_sub(releasable);
    let held = after.max(desired).min(current).min(desired.max(upper));
    if held != desired {
        clamps.push(Clamp::PaidUnitHold {
            from_gpus: desired,
            to_gpus: held,
            next_release_ms: next_ms.unwrap_or(now_ms),
        });
    }
    held
}

/// The rule nearest to acting, when nothing changes.
fn waiting(outcomes: &[RuleOutcome]) -> DecisionReason {
    let rank = |status: &RuleStatus| match status {
        RuleStatus::Sustaining { .. } | RuleStatus::TargetSustaining { .. } => 0,
        RuleStatus::Cooldown { .. } => 1,
        RuleStatus::Stale { .. } | RuleStatus::NoData { .. } => 2,
        _ => 3,
    };
    outcomes
        .iter()
        .filter(|o| rank(&o.status) < 3)
        .min_by_key(|o| rank(&o.status))
        .map_or(DecisionReason::Steady, |o| DecisionReason::Waiting {
            rule: o.rule.clone(),
            status: o.status.clone(),
        })
}

fn active_until(schedule: &CompiledSchedule, now_ms: i64) -> Option<i64> {
    schedule.active_until(now_ms)
}

/// Milliseconds left in the paid unit of a run that began at `since_ms` (0 at a unit's end,
/// and for a run that has not begun to pay: released in its first minute, it costs nothing).
fn left_in_unit(since_ms: i64, now_ms: i64, unit_ms: i64) -> i64 {
    let held = now_ms - since_ms;
    if held <= 0 {
        return 0;
    }
    let into = held % unit_ms;
    if into == 0 { 0 } else { unit_ms - into }
}

/// ⌈x⌉ GPUs, forgiving float noise (10.000000001 is 10).
pub(crate) fn ceil_gpus(value: f64) -> u32 {
    if !value.is_finite() || value <= 0.0 {
        return 0;
    }
    let rounded = (value - 1e-9).ceil();
    if rounded >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        rounded as u32
    }
}

/// The bounds and the step cap, in their fixed order.
struct Bounds<'a> {
    rules: &'a RuleSet,
    current: u32,
    floor: Option<(u32, usize)>,
    ceiling: Option<(u32, usize)>,
    budget_gpus: Option<u32>,
    /// Without a price the budget clamp names no amounts (it holds the count).
    has_price: bool,
}

impl Bounds<'_> {
    /// The highest count no bound forbids: min of max, the schedules' ceilings, the budget.
    fn upper(&self) -> u32 {
        let limits = &self.rules.spec().limits;
        let mut upper = limits.max_gpus;
        if let Some((gpus, _)) = self.ceiling {
            let floor = self.floor.map_or(0, |(f, _)| f);
            upper = upper.min(gpus.max(floor).max(limits.min_gpus));
        }
        if let Some(budget) = self.budget_gpus {
            upper = upper.min(budget);
        }
        upper
    }

    fn apply(&self, gpus: u32, mut clamps: Option<&mut Vec<Clamp>>) -> u32 {
        let spec = self.rules.spec();
        let limits = &spec.limits;
        let mut record = |clamp: Clamp| {
            if let Some(clamps) = clamps.as_deref_mut() {
                clamps.push(clamp);
            }
        };
        let mut x = gpus;
        // 1. Schedules: the floor wins when a floor and a ceiling cross.
        if let Some((ceiling, i)) = self.ceiling {
            let ceiling = ceiling.max(self.floor.map_or(0, |(f, _)| f));
            if x > ceiling {
                record(Clamp::Schedule {
                    schedule: spec.schedules[i].name.clone(),
                    bound: spec.schedules[i].bound,
                    from_gpus: x,
                    to_gpus: ceiling,
                });
                x = ceiling;
            }
        }
        if let Some((floor, i)) = self.floor
            && x < floor
        {
            record(Clamp::Schedule {
                schedule: spec.schedules[i].name.clone(),
                bound: spec.schedules[i].bound,
                from_gpus: x,
                to_gpus: floor,
            });
            x = floor;
        }
        // 2. Min and max.
        if x < limits.min_gpus {
            record(Clamp::Min {
                from_gpus: x,
                to_gpus: limits.min_gpus,
            });
            x = limits.min_gpus;
        }
        if x > limits.max_gpus {
            record(Clamp::Max {
                from_gpus: x,
                to_gpus: limits.max_gpus,
            });
            x = limits.max_gpus;
        }
        // 3. The step cap.
        let step = &limits.step;
        if x > self.current
            && let Some(cap) = step_gpus(self.current, step.out_gpus, step.out_pct)
            && x - self.current > cap
        {
            let to = self.current.saturating_add(cap);
            record(Clamp::StepCap {
                from_gpus: x,
                to_gpus: to,
                step_gpus: cap,
            });
            x = to;
        }
        if x < self.current
            && let Some(cap) = step_gpus(self.current, step.in_gpus, step.in_pct)
            && self.current - x > cap
        {
            let to = self.current - cap;
            record(Clamp::StepCap {
                from_gpus: x,
                to_gpus: to,
                step_gpus: cap,
            });
            x = to;
        }
        // 4. The budget.
        if let Some(budget) = self.budget_gpus
            && x > budget
        {
            let has_price = self.has_price;
            record(Clamp::Budget {
                from_gpus: x,
                to_gpus: budget,
                per_hour_fen: has_price.then_some(limits.budget.per_hour_fen).flatten(),
                per_month_fen: has_price.then_some(limits.budget.per_month_fen).flatten(),
            });
            x = budget;
        }
        x
    }
}

/// The larger of a count and a share of `current` (rounded up); `None` when neither is set.
fn step_gpus(current: u32, gpus: Option<u32>, pct: Option<f64>) -> Option<u32> {
    if gpus.is_none() && pct.is_none() {
        return None;
    }
    let by_pct = pct.map_or(0, |pct| ceil_gpus(f64::from(current) * pct / 100.0));
    Some(gpus.unwrap_or(0).max(by_pct))
}

/// Is the metric stale? `Err(status)` says why the rule does nothing.
fn fresh<'w>(
    metric: &MetricRef,
    stale_ms: Option<i64>,
    metrics: &'w MetricWindows,
    now_ms: i64,
) -> Result<(&'w Window, Sample), RuleStatus> {
    let no_data = || RuleStatus::NoData {
        metric: metric.name().to_string(),
    };
    let window = metrics.get(metric).ok_or_else(no_data)?;
    let latest = window.latest().ok_or_else(no_data)?;
    if let Some(stale_ms) = stale_ms
        && now_ms - latest.at_ms > stale_ms
    {
        return Err(RuleStatus::Stale {
            metric: metric.name().to_string(),
            last_seen_ms: latest.at_ms,
            stale_after_minutes: u32::try_from(stale_ms / MINUTE_MS).unwrap_or(u32::MAX),
        });
    }
    Ok((window, latest))
}

fn threshold(
    rule: &ThresholdRule,
    stale_ms: Option<i64>,
    state: &PoolState<'_>,
    metrics: &MetricWindows,
    now_ms: i64,
) -> (Option<u32>, RuleStatus, Option<i64>) {
    let (window, latest) = match fresh(&rule.metric, stale_ms, metrics, now_ms) {
        Ok(found) => found,
        Err(status) => return (None, status, None),
    };
    let holds = |value: f64| rule.comparison.holds(value, rule.threshold);
    let streak = window
        .recent(now_ms, rule.for_minutes)
        .take_while(|s| holds(s.value))
        .count();
    let streak = u32::try_from(streak).unwrap_or(u32::MAX);
    let metric = rule.metric.name().to_string();
    if streak < rule.for_minutes {
        let status = if streak > 0 {
            RuleStatus::Sustaining {
                metric,
                value: latest.value,
                comparison: rule.comparison,
                threshold: rule.threshold,
                minutes_met: streak,
                minutes_needed: rule.for_minutes,
            }
        } else {
            RuleStatus::NotMet {
                metric,
                value: latest.value,
                comparison: rule.comparison,
                threshold: rule.threshold,
            }
        };
        return (None, status, None);
    }
    let current = state.desired_gpus;
    let gpus = apply_action(rule.action, current);
    if rule.cooldown_minutes > 0 && gpus != current {
        let since = if gpus > current {
            state.last_scale_out_ms
        } else {
            state.last_scale_out_ms.max(state.last_scale_in_ms)
        };
        if let Some(since) = since {
            let until_ms = since + i64::from(rule.cooldown_minutes) * MINUTE_MS;
            if now_ms < until_ms {
                return (
                    Some(gpus),
                    RuleStatus::Cooldown {
                        until_ms,
                        would_gpus: gpus,
                    },
                    Some(until_ms),
                );
            }
        }
    }
    (
        Some(gpus),
        RuleStatus::Fired {
            metric,
            value: latest.value,
            comparison: rule.comparison,
            threshold: rule.threshold,
            minutes: rule.for_minutes,
            action: rule.action,
        },
        None,
    )
}

/// An action applied to the current count (a share rounded up, at least one GPU).
pub fn apply_action(action: Action, current: u32) -> u32 {
    let share = |pct: f64| ceil_gpus(f64::from(current) * pct / 100.0).max(1);
    match action {
        Action::AddGpus { gpus } => current.saturating_add(gpus),
        Action::AddPct { pct } => current.saturating_add(share(pct)),
        Action::RemoveGpus { gpus } => current.saturating_sub(gpus),
        Action::RemovePct { pct } => current.saturating_sub(share(pct)),
        Action::Set { gpus } => gpus,
    }
}

/// How a target metric turns into a count.
enum Scale {
    /// A mean over the ready GPUs (utilization, %): `⌈ready · value / target⌉`.
    Mean,
    /// A total: `⌈value / per_gpu⌉`.
    Total { per_gpu: f64 },
}

fn target(
    rule: &TargetRule,
    stale_ms: Option<i64>,
    state: &PoolState<'_>,
    metrics: &MetricWindows,
    now_ms: i64,
) -> (Option<Proposal>, RuleStatus) {
    let (window, latest) = match fresh(&rule.metric, stale_ms, metrics, now_ms) {
        Ok(found) => found,
        Err(status) => return (None, status),
    };
    let scale = match rule.metric {
        MetricRef::GpuUtil | MetricRef::MemUtil => Scale::Mean,
        MetricRef::BusyGpus => Scale::Total {
            per_gpu: rule.target / 100.0,
        },
        MetricRef::Custom { .. } => Scale::Total {
            per_gpu: rule.target,
        },
    };
    let current = state.desired_gpus;
    let ready_at = |at_ms: i64| {
        metrics
            .ready_gpus
            .at(at_ms)
            .map_or(state.ready_gpus, |ready| ready.max(0.0) as u32)
    };
    // The ready count is looked up only for a mean (a total does not need it, and the
    // look-up walks the window: long stabilization windows would be quadratic).
    let count_for = |sample: Sample| -> u32 {
        match scale {
            Scale::Mean => {
                let ready = ready_at(sample.at_ms);
                if ready == 0 {
                    u32::from(sample.value > 0.0)
                } else {
                    ceil_gpus(f64::from(ready) * sample.value / rule.target)
                }
            }
            Scale::Total { per_gpu } => ceil_gpus(sample.value / per_gpu),
        }
    };
    let instant = count_for(latest);
    let metric = rule.metric.name().to_string();
    // Within tolerance: stay (HPA). The ratio is the metric against the target per GPU.
    let ratio = match scale {
        Scale::Mean => latest.value / rule.target,
        Scale::Total { per_gpu } => {
            if current == 0 {
                f64::INFINITY
            } else {
                latest.value / (per_gpu * f64::from(current))
            }
        }
    };
    let within = (ratio - 1.0).abs() <= rule.tolerance + 1e-9 && current > 0;
    if within || instant == current {
        let proposal = Proposal {
            outcome: 0,
            instant: current,
            effective: current,
            cooling_until: None,
            window_minutes: 0,
        };
        return (
            Some(proposal),
            RuleStatus::WithinTolerance {
                metric,
                value: latest.value,
                target: rule.target,
                tolerance: rule.tolerance,
            },
        );
    }
    let mut effective = instant;
    let mut window_minutes = 0;
    let mut status = RuleStatus::Tracking {
        metric: metric.clone(),
        value: latest.value,
        target: rule.target,
        instant_gpus: instant,
    };
    if instant < current && window.is_partial() {
        // Less than a minute read: never a scale-in on it (a GPU just granted reads idle).
        effective = current;
    } else if instant < current && rule.scale_in_stabilization_minutes > 0 {
        // Scale-in: the highest count recommended over the window (no higher than the
        // current count: the walk stops at the first sample that asks for it all).
        let mut highest: Option<u32> = None;
        // A total's count grows with its value: a sample no higher than one already
        // counted cannot raise the highest, so it is not counted again.
        let mut counted = f64::NEG_INFINITY;
        let total = matches!(scale, Scale::Total { .. });
        for sample in window.recent(now_ms, rule.scale_in_stabilization_minutes) {
            if total && highest.is_some() && sample.value <= counted {
                continue;
            }
            if sample.value.is_finite() {
                counted = counted.max(sample.value);
            }
            let gpus = count_for(sample);
            highest = Some(highest.map_or(gpus, |h| h.max(gpus)));
            if gpus >= current {
                break;
            }
        }
        effective = highest.unwrap_or(instant).clamp(instant, current);
        window_minutes = rule.scale_in_stabilization_minutes;
    } else if instant > current && rule.scale_out_sustain_minutes > 0 {
        let overloaded = rule
            .overload_gpus
            .is_some_and(|overload| instant - current >= overload);
        if !overloaded {
            // Scale-out: the lowest count recommended over the window, once it is covered.
            let mut lowest = u32::MAX;
            let mut met = 0u32;
            for s in window.recent(now_ms, rule.scale_out_sustain_minutes) {
                let gpus = count_for(s);
                if gpus <= current {
                    break;
                }
                lowest = lowest.min(gpus);
                met += 1;
            }
            window_minutes = rule.scale_out_sustain_minutes;
            if met >= rule.scale_out_sustain_minutes {
                effective = lowest.min(instant);
            } else {
                effective = current;
                status = RuleStatus::TargetSustaining {
                    metric,
                    value: latest.value,
                    target: rule.target,
                    instant_gpus: instant,
                    minutes_met: met,
                    minutes_needed: rule.scale_out_sustain_minutes,
                };
            }
        }
    }
    (
        Some(Proposal {
            outcome: 0,
            instant,
            effective,
            cooling_until: None,
            window_minutes,
        }),
        status,
    )
}
