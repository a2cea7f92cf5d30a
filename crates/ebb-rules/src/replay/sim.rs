//! The minute loop of PRODUCT.md's replay model.
//!
//! Each minute `t`: the orders due become ready; the policy sees the pool
//! ([`MinuteView`]) and answers the count it wants held; a scale-out is ordered at once and
//! is ready at `t + warmup`; a scale-in takes effect at once, cancelling warming orders
//! newest first, then releasing the newest ready GPU first. What is recorded for minute `t`
//! is the pool after that decision: a GPU ordered at `t` is paid from `t`, one released at
//! `t` is not, and utilization and shortfall count the GPUs ready after it.
//!
//! Held GPUs are a stack in order time: with one warmup for all, the warming ones are
//! always the newest, so "cancel warming orders newest first, then release the newest ready
//! GPU" is a pop from the top, and the `L`-th GPU from the bottom is the billing model's
//! layer `L`.

use super::trace::{Trace, whole_gpus};
use crate::policy::{MinuteView, Policy};

/// The most GPUs a replay holds; a policy asking for more gets this many.
pub const MAX_HELD_GPUS: u32 = 1_000_000;

/// How the replay runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// Minutes from a scale-out's order to its GPUs being ready (the seed's 5).
    pub warmup_minutes: u32,
    /// The wall-clock instant of minute 0, for schedules.
    pub start_ms: i64,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            warmup_minutes: 5,
            start_ms: 0,
        }
    }
}

/// The pool minute by minute, after each minute's decision.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// GPUs ready before minute 0: `ceil(demand(0))`.
    pub initial_gpus: u32,
    /// GPUs ready.
    pub ready: Vec<u32>,
    /// GPUs held (paid): ready + warming.
    pub held: Vec<u32>,
    /// Pool utilization `min(100, 100 · demand / ready)` (100 when none is ready and there
    /// is work, 0 when there is neither).
    pub utilization_pct: Vec<f64>,
}

impl Series {
    /// The change of the held count at minute `t` (+ ordered, − released, 0 none).
    pub fn decision(&self, t: usize) -> i64 {
        let before = if t == 0 {
            self.initial_gpus
        } else {
            self.held[t - 1]
        };
        i64::from(self.held[t]) - i64::from(before)
    }
}

/// What a replay's minute loop measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The pool minute by minute.
    pub series: Series,
    /// `sum_t max(0, demand(t) - ready(t))`.
    pub shortfall_gpu_minutes: f64,
    /// `sum_t demand(t)`.
    pub demand_gpu_minutes: f64,
    /// Minutes in which the held count changed.
    pub actions: u32,
    /// The most GPUs held at once.
    pub peak_held_gpus: u32,
}

/// Utilization as the replay model defines it.
pub fn utilization_pct(demand: f64, ready: u32) -> f64 {
    if ready == 0 {
        if demand > 0.0 { 100.0 } else { 0.0 }
    } else {
        (100.0 * demand / f64::from(ready)).min(100.0)
    }
}

/// Runs `policy` over `trace`.
pub fn simulate(trace: &Trace, policy: &mut dyn Policy, options: &SimOptions) -> Outcome {
    let demand = trace.demand();
    let minutes = demand.len();
    let warmup = options.warmup_minutes;
    let initial = whole_gpus(demand[0]).min(MAX_HELD_GPUS);
    // The held stack, oldest first: when each GPU's run began and when it is (was) ready.
    let mut since: Vec<u32> = vec![0; initial as usize];
    let mut ready_at: Vec<u32> = vec![0; initial as usize];
    let mut ready = since.len();
    let mut custom: Vec<(&str, f64)> = Vec::with_capacity(trace.columns().len());
    let mut series = Series {
        initial_gpus: initial,
        ready: Vec::with_capacity(minutes),
        held: Vec::with_capacity(minutes),
        utilization_pct: Vec::with_capacity(minutes),
    };
    let (mut shortfall, mut total) = (0.0, 0.0);
    let mut actions = 0;
    let mut peak = initial;
    for (t, &busy) in demand.iter().enumerate() {
        let minute = t as u32;
        while ready < ready_at.len() && ready_at[ready] <= minute {
            ready += 1;
        }
        custom.clear();
        for column in trace.columns() {
            if let Some(value) = column.values[t] {
                custom.push((column.name.as_str(), value));
            }
        }
        let held = since.len() as u32;
        let view = MinuteView {
            minute,
            now_ms: options
                .start_ms
                .saturating_add(i64::from(minute).saturating_mul(60_000)),
            ready: ready as u32,
            held,
            warming: held - ready as u32,
            busy_gpus: busy,
            util_pct: utilization_pct(busy, ready as u32),
            mem_pct: trace.mem_pct().and_then(|values| values[t]),
            custom: &custom,
            held_since: &since,
        };
        let desired = policy.desired(&view).min(MAX_HELD_GPUS);
        if desired != held {
            actions += 1;
            if desired > held {
                let extra = (desired - held) as usize;
                since.resize(since.len() + extra, minute);
                ready_at.resize(ready_at.len() + extra, minute.saturating_add(warmup));
                while ready < ready_at.len() && ready_at[ready] <= minute {
                    ready += 1;
                }
            } else {
                since.truncate(desired as usize);
                ready_at.truncate(desired as usize);
                ready = ready.min(desired as usize);
            }
        }
        peak = peak.max(desired);
        series.ready.push(ready as u32);
        series.held.push(desired);
        series
            .utilization_pct
            .push(utilization_pct(busy, ready as u32));
        shortfall += (busy - ready as f64).max(0.0);
        total += busy;
    }
    Outcome {
        series,
        shortfall_gpu_minutes: shortfall,
        demand_gpu_minutes: total,
        actions,
        peak_held_gpus: peak,
    }
}
