//! The rules as a [`Policy`]: keeps the metric windows and the cooldown state from each
//! minute's [`MinuteView`] and asks [`decide`] — the same decision a live console makes, so
//! a replay shows what the rules would have done. Also the two rule baselines, parsed from
//! the example files.

use crate::decide::{MetricWindows, PoolState, Pricing, decide, window_minutes};
use crate::model::{self, RuleSet};
use crate::policy::{MinuteView, Policy};
use ebb_wire::rules::Decision;

const MINUTE_MS: i64 = 60_000;

/// The seed article's 80/30 rule (`examples/seed-80-30.toml`).
pub const SEED_80_30: &str = include_str!("../examples/seed-80-30.toml");
/// A Kubernetes HPA-style rule (`examples/hpa.toml`).
pub const HPA: &str = include_str!("../examples/hpa.toml");

/// The names [`baseline`] knows.
pub const BASELINES: [&str; 2] = ["seed-80-30", "hpa"];

/// A baseline rule set by name: `seed-80-30` or `hpa`.
pub fn baseline(name: &str) -> Option<RuleSet> {
    let text = match name {
        "seed-80-30" => SEED_80_30,
        "hpa" => HPA,
        _ => return None,
    };
    Some(model::parse(text).expect("the baseline files are valid (a test checks)"))
}

/// A rule set deciding minute by minute.
#[derive(Debug, Clone)]
pub struct RulesPolicy {
    name: String,
    rules: RuleSet,
    pricing: Option<Pricing>,
    windows: MetricWindows,
    keep_minutes: u32,
    last_scale_out_ms: Option<i64>,
    last_scale_in_ms: Option<i64>,
    held_since_ms: Vec<i64>,
    /// What `held_since_ms` was made from: the view's minutes and (minute 0's ms, count).
    held_since_minutes: Vec<u32>,
    held_since_from: (i64, usize),
    last: Option<Decision>,
    node_gpus: u32,
}

impl RulesPolicy {
    /// `rules` under the name results give it, priced by `pricing` when known (for the
    /// budget, the cost delta and the paid unit; without it the paid unit is an hour).
    pub fn new(name: impl Into<String>, rules: RuleSet, pricing: Option<Pricing>) -> RulesPolicy {
        let keep_minutes = window_minutes(&rules) + 1;
        RulesPolicy {
            name: name.into(),
            rules,
            pricing,
            windows: MetricWindows::default(),
            keep_minutes,
            last_scale_out_ms: None,
            last_scale_in_ms: None,
            held_since_ms: Vec::new(),
            held_since_minutes: Vec::new(),
            held_since_from: (i64::MIN, 0),
            last: None,
            node_gpus: 1,
        }
    }

    /// The same, deciding for a pool whose GPUs come and go `node_gpus` at a time (a Slurm
    /// partition's nodes: every count decided is whole nodes, as the console decides for a
    /// bound pool); 1 (the default) for single GPUs.
    pub fn with_node_gpus(mut self, node_gpus: u32) -> RulesPolicy {
        self.node_gpus = node_gpus.max(1);
        self
    }

    /// A baseline by name (see [`baseline`]).
    pub fn baseline(name: &str, pricing: Option<Pricing>) -> Option<RulesPolicy> {
        baseline(name).map(|rules| RulesPolicy::new(name, rules, pricing))
    }

    /// The last minute's decision (for a replay's series and the decision log).
    pub fn last_decision(&self) -> Option<&Decision> {
        self.last.as_ref()
    }

    /// The rules.
    pub fn rules(&self) -> &RuleSet {
        &self.rules
    }
}

impl Policy for RulesPolicy {
    fn name(&self) -> &str {
        &self.name
    }

    fn releases_at_unit_end(&self) -> bool {
        !self.rules.spec().scale_in.force
    }

    fn desired(&mut self, view: &MinuteView<'_>) -> u32 {
        let now_ms = view.now_ms;
        let windows = &mut self.windows;
        windows.gpu_util.push(now_ms, view.util_pct);
        if let Some(mem) = view.mem_pct {
            windows.mem_util.push(now_ms, mem);
        }
        windows.busy_gpus.push(now_ms, view.busy_gpus);
        windows.ready_gpus.push(now_ms, f64::from(view.ready));
        // The count asked for, as the console's pool's `desired`: the last decision's (the
        // replay keeps a GPU given back above it to its unit's end, as the console does),
        // the GPUs held before the first. The disruption budget's history.
        let current = self
            .last
            .as_ref()
            .map_or(view.held, |last| last.desired_gpus.min(view.held));
        windows.desired_gpus.push(now_ms, f64::from(current));
        for (name, value) in view.custom {
            windows.custom_mut(name).push(now_ms, *value);
        }
        windows.trim_before(now_ms - i64::from(self.keep_minutes) * MINUTE_MS);
        // Custom metrics keep their last value however old, for staleness.
        let start_ms = now_ms - i64::from(view.minute) * MINUTE_MS;
        // Rebuilt only when the held GPUs changed (most minutes they do not, and a pool of
        // hundreds made this copy a quarter of a replay's time).
        if self.held_since_from != (start_ms, view.held_since.len())
            || self.held_since_minutes != view.held_since
        {
            self.held_since_from = (start_ms, view.held_since.len());
            self.held_since_minutes.clear();
            self.held_since_minutes.extend_from_slice(view.held_since);
            self.held_since_ms.clear();
            self.held_since_ms.extend(
                view.held_since
                    .iter()
                    .map(|minute| start_ms + i64::from(*minute) * MINUTE_MS),
            );
        }
        let state = PoolState {
            desired_gpus: current,
            ready_gpus: view.ready,
            held_gpus: view.held,
            warming_gpus: view.warming,
            held_since_ms: &self.held_since_ms,
            last_scale_out_ms: self.last_scale_out_ms,
            last_scale_in_ms: self.last_scale_in_ms,
            pricing: self.pricing.as_ref(),
            node_gpus: self.node_gpus,
        };
        let decision = decide(&self.rules, &state, &self.windows, now_ms);
        let desired = decision.desired_gpus;
        if desired > current {
            self.last_scale_out_ms = Some(now_ms);
        } else if desired < current {
            self.last_scale_in_ms = Some(now_ms);
        }
        self.last = Some(decision);
        desired
    }
}
