//! Rules enforced live: the shell around `ebb_rules::decide`. After each enforcer pass it
//! takes a sample of every ruled pool (GPU and memory utilization and busy GPUs over the
//! pool's leased GPUs, from what the agents just reported), keeps a few minutes of them,
//! reads the custom metrics pushed for the pool, and asks the pure engine for a decision:
//!
//! - **enabled**: a new count is set through the same path as the slider
//!   (`PoolStore::set_desired`, one transaction with its activity entry, actor `rule`), and
//!   the reconcile loop does the rest on the next pass (woken at once);
//! - **shadow**: the count the rules would hold is kept here, not in the pool; each change
//!   of it is logged (done at once) and nothing else moves;
//! - a tick where a rule wanted a change that a clamp stopped is logged once per reason
//!   (rule and clamp), not every second; "no change" ticks are not logged, the latest
//!   decision is kept on the rules (`record_decision`) for the Rules view and the CLI.
//!
//! Samples are one a tick; the engine counts minutes, so each tick it is handed sliding
//! minute means ending now, now − 1 min, … (a custom metric's at its last push in each
//! minute): a breach sustained for N minutes fills N of them exactly when the N-th minute
//! closes, and the decision comes in that same tick. The count the pool was asked to hold
//! is kept the same way, as each minute's highest (the disruption budget counts releases
//! from it); a pool's rules loaded afresh (a new version, a restart) start that history
//! from the activity log, so a budget is not spent twice by an edit.

use crate::pools::rules::StoredRules;
use crate::pools::teams::TeamLimit;
use crate::pools::{NewActivity, Pool, PoolError, PoolStore};
use ebb_cost::Catalog;
use ebb_reconcile::reconcile::{HostObs, PoolStatus};
use ebb_rules::decide::{MetricWindows, PoolState, Pricing, Window, decide, window_minutes};
use ebb_rules::model::RuleSet;
use ebb_wire::pools::{Actor, PoolLeaseState};
use ebb_wire::reasons::ChangeReason;
use ebb_wire::rules::{Clamp, Decision, DecisionReason, RulesMode};
use std::collections::{HashMap, VecDeque};

const MINUTE_MS: i64 = 60_000;
/// The latest decision is written at least this often (and whenever its reason changes).
const RECORD_EVERY_MS: i64 = 5_000;
/// How far after a minute's start the first tick may come and the minute still count.
const TICK_SLACK_MS: i64 = 2_000;

/// One tick's sample of a pool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    pub at_ms: i64,
    /// Mean GPU utilization over the pool's leased GPUs with a reading, %.
    pub gpu_util: Option<f64>,
    /// Mean memory used over those GPUs, % of their memory.
    pub mem_util: Option<f64>,
    /// Σ utilization ÷ 100; `None` when GPUs are held and none has a reading (a host or
    /// the metrics back end not answering: unknown, not idle).
    pub busy_gpus: Option<f64>,
    /// GPUs ready (leased and answering).
    pub ready_gpus: f64,
}

/// Every observed GPU by host and UUID, built once a tick.
pub type GpuIndex<'a> = HashMap<(&'a str, &'a str), &'a ebb_wire::agent::Gpu>;

/// Indexes the pass's observations.
pub fn gpu_index(hosts: &[HostObs]) -> GpuIndex<'_> {
    hosts
        .iter()
        .filter_map(|host| host.seen.as_ref().map(|seen| (host.name.as_str(), seen)))
        .flat_map(|(host, seen)| {
            seen.gpus
                .iter()
                .map(move |gpu| ((host, gpu.uuid.as_str()), gpu))
        })
        .collect()
}

/// What the pool's ready GPUs show now, from the pass's observations: a lease still
/// starting (its workload not up) is warming, not ready, and its idle GPUs are not read.
/// Pure.
pub fn sample(status: &PoolStatus, gpus: &GpuIndex<'_>, now_ms: i64) -> Tick {
    let mut util = Vec::new();
    let mut mem = Vec::new();
    let mut ready = 0u32;
    for lease in status
        .leases
        .iter()
        .filter(|lease| lease.state == PoolLeaseState::Active && !lease.starting)
    {
        ready += 1;
        for uuid in &lease.gpu_uuids {
            let Some(gpu) = gpus.get(&(lease.host.as_str(), uuid.as_str())) else {
                continue;
            };
            if let Some(u) = gpu.gpu_util_pct {
                util.push(f64::from(u));
            }
            let used = gpu
                .memory_used_mib
                .zip(gpu.memory_total_mib.filter(|&total| total > 0))
                .map(|(used, total)| f64::from(used) * 100.0 / f64::from(total));
            if let Some(m) = used.or(gpu.memory_util_pct.map(f64::from)) {
                mem.push(m);
            }
        }
    }
    let mean = |values: &[f64]| {
        (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
    };
    Tick {
        at_ms: now_ms,
        gpu_util: mean(&util),
        mem_util: mean(&mem),
        busy_gpus: (ready == 0 || !util.is_empty()).then(|| util.iter().sum::<f64>() / 100.0),
        ready_gpus: f64::from(ready),
    }
}

/// Sliding minute means of `samples` (oldest first) for the `minutes` minutes before
/// `now_ms`: one sample per minute that has any, at the minute's end (`at_end`) or at its
/// last sample. A minute counts only when the series reaches back to its start (within
/// `slack_ms`): a metric first seen 70 s ago has one whole minute, not two, so "for 2
/// minutes" means two. Before the first whole minute, the readings so far are the
/// window's partial value. Pure.
pub fn minute_means(
    samples: impl Iterator<Item = (i64, f64)> + Clone,
    now_ms: i64,
    minutes: u32,
    slack_ms: i64,
    at_end: bool,
) -> Window {
    let mut window = Window::default();
    let Some(first) = samples.clone().map(|(at, _)| at).min() else {
        return window;
    };
    let slots = usize::try_from(minutes).unwrap_or(0);
    // Per minute back from now (0 = the latest): sum, count, last sample's time.
    let mut sums = vec![(0.0f64, 0u32, i64::MIN); slots];
    for (at, value) in samples {
        let back = now_ms - at;
        if back < 0 {
            continue;
        }
        let Ok(k) = usize::try_from(back / MINUTE_MS) else {
            continue;
        };
        if let Some(slot) = sums.get_mut(k) {
            slot.0 += value;
            slot.1 += 1;
            slot.2 = slot.2.max(at);
        }
    }
    for (k, (sum, count, last)) in sums.iter().enumerate().rev() {
        let end = now_ms - i64::try_from(k).unwrap_or(0) * MINUTE_MS;
        if *count == 0 || first > end - MINUTE_MS + slack_ms {
            continue;
        }
        window.push(if at_end { end } else { *last }, sum / f64::from(*count));
    }
    // Less than a minute of readings: their mean, the latest value until a minute is whole
    // (a target rule scales out on it; no rule counts it as a minute).
    if window.is_empty()
        && let Some((sum, count, last)) = sums.first().filter(|slot| slot.1 > 0)
    {
        window.set_partial(if at_end { now_ms } else { *last }, sum / f64::from(*count));
    }
    window
}

/// Each minute's highest of `counts` (oldest first) for the `minutes` minutes before
/// `now_ms`, at the minute's end. A highest over part of a minute is still a floor under
/// the count held then, so every minute with a sample counts. Pure.
pub fn minute_highs(counts: impl Iterator<Item = (i64, u32)>, now_ms: i64, minutes: u32) -> Window {
    let slots = usize::try_from(minutes).unwrap_or(0);
    let mut highs: Vec<Option<u32>> = vec![None; slots];
    for (at, count) in counts {
        let back = now_ms - at;
        if back < 0 {
            continue;
        }
        let Ok(k) = usize::try_from(back / MINUTE_MS) else {
            continue;
        };
        if let Some(slot) = highs.get_mut(k) {
            *slot = Some(slot.map_or(count, |high| high.max(count)));
        }
    }
    let mut window = Window::default();
    for (k, high) in highs.iter().enumerate().rev() {
        if let Some(high) = high {
            let end = now_ms - i64::try_from(k).unwrap_or(0) * MINUTE_MS;
            window.push(end, f64::from(*high));
        }
    }
    window
}

/// A ruled pool as the runner keeps it between ticks.
#[derive(Debug)]
struct Live {
    version: u32,
    mode: RulesMode,
    rules: RuleSet,
    ticks: VecDeque<Tick>,
    /// The count the pool was asked to hold at each tick, before deciding (and before
    /// the rules were loaded, from the activity log): (at, count).
    counts: VecDeque<(i64, u32)>,
    last_out_ms: Option<i64>,
    last_in_ms: Option<i64>,
    /// Shadow mode: the count the rules would hold.
    shadow_desired: Option<u32>,
    /// The held decision last logged (rule and clamp), so it is logged once.
    held_logged: Option<String>,
    recorded: Option<(i64, String)>,
    /// GPUs a node of the pool's Slurm partition holds (1: single GPUs).
    node_gpus: u32,
}

/// What one tick of the rules did, for the enforcer's report and tests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RulesTick {
    /// Pools whose desired count a rule changed: (pool name, from, to).
    pub changed: Vec<(String, u32, u32)>,
    /// Decisions made (one per pool with enabled or shadowed rules).
    pub decisions: usize,
    /// Pools whose latest decision was recorded this tick (the Rules view shows it).
    pub recorded: Vec<String>,
}

/// The rules of every pool, evaluated once per enforcer pass.
#[derive(Debug, Default)]
pub struct RulesRunner {
    live: HashMap<String, Live>,
    /// GPUs per node of each pool bound to a partition Ebb sizes, by pool id.
    node_gpus: HashMap<String, u32>,
}

impl RulesRunner {
    /// The pools that move in whole Slurm nodes (pool id → GPUs a node), from the binding.
    pub fn set_node_gpus(&mut self, node_gpus: HashMap<String, u32>) {
        self.node_gpus = node_gpus;
    }

    /// One tick: a decision for each pool with enabled or shadowed rules.
    /// The pools' counts are read at the tick (the slider may have moved one since the
    /// pass began); only pools with rules are looked at.
    pub async fn tick(
        &mut self,
        store: &PoolStore,
        statuses: &[PoolStatus],
        hosts: &[HostObs],
        catalog: &Catalog,
        now_ms: i64,
    ) -> Result<RulesTick, PoolError> {
        let mut out = RulesTick::default();
        let stored = store.all_rules().await?;
        if stored.is_empty() {
            self.live.clear();
            return Ok(out);
        }
        // The counts as they are now, not as the pass read them when it began: the slider
        // may have moved one since.
        let pools = store.list().await?;
        let gpus = gpu_index(hosts);
        self.live
            .retain(|id, _| stored.iter().any(|rules| &rules.pool_id == id));
        for rules in stored {
            let Some(pool) = pools.iter().find(|pool| pool.id == rules.pool_id) else {
                continue;
            };
            let Some(status) = statuses.iter().find(|s| s.pool_id == pool.id) else {
                continue;
            };
            if rules.mode == RulesMode::Disabled {
                self.live.remove(&pool.id);
                continue;
            }
            let live = match self.live.get_mut(&pool.id) {
                Some(live) if live.version == rules.version => live,
                _ => match Self::load(store, pool, &rules).await? {
                    Some(live) => self
                        .live
                        .entry(pool.id.clone())
                        .insert_entry(live)
                        .into_mut(),
                    None => continue,
                },
            };
            if live.mode != rules.mode {
                // What shadow mode would have done never happened: cooldowns count from
                // the pool's real changes again.
                live.mode = rules.mode;
                live.shadow_desired = None;
                live.held_logged = None;
                (live.last_out_ms, live.last_in_ms) = last_changes(store, pool).await?;
            }
            out.decisions += 1;
            live.node_gpus = self.node_gpus.get(&pool.id).copied().unwrap_or(1);
            let recorded = live.recorded.clone();
            if let Some((from, to)) =
                step(live, store, pool, status, &gpus, catalog, now_ms).await?
            {
                out.changed.push((pool.name.clone(), from, to));
            }
            if live.recorded != recorded {
                out.recorded.push(pool.name.clone());
            }
        }
        Ok(out)
    }

    async fn load(
        store: &PoolStore,
        pool: &Pool,
        stored: &StoredRules,
    ) -> Result<Option<Live>, PoolError> {
        let rules = match ebb_rules::model::parse(&stored.source) {
            Ok(rules) => rules,
            Err(error) => {
                tracing::warn!(pool = %pool.name, %error, "stored rules do not parse; not enforced");
                return Ok(None);
            }
        };
        let (last_out_ms, last_in_ms) = last_changes(store, pool).await?;
        let counts = if rules.spec().scale_in.budget_window_minutes.is_some() {
            recent_counts(store, pool).await?
        } else {
            VecDeque::new()
        };
        Ok(Some(Live {
            version: stored.version,
            mode: stored.mode,
            rules,
            ticks: VecDeque::new(),
            counts,
            last_out_ms,
            last_in_ms,
            shadow_desired: None,
            held_logged: None,
            recorded: None,
            node_gpus: 1,
        }))
    }
}

/// The pool's last scale-out and scale-in, whoever made them (cooldowns count from these);
/// what shadow mode would have done does not count.
async fn last_changes(
    store: &PoolStore,
    pool: &Pool,
) -> Result<(Option<i64>, Option<i64>), PoolError> {
    let log = store.activity(Some(&pool.name), 500).await?;
    let real = |e: &&ebb_wire::pools::ActivityEntry| {
        !matches!(e.reason, ChangeReason::RuleDecision { shadow: true, .. })
    };
    let out = log
        .iter()
        .filter(real)
        .find(|e| e.to > e.from)
        .map(|e| e.at_ms);
    let r#in = log
        .iter()
        .filter(real)
        .find(|e| e.to < e.from)
        .map(|e| e.at_ms);
    Ok((out, r#in))
}

/// The counts the pool held before each of its real changes in the activity log's latest
/// entries, oldest first: a budget's history when the rules are loaded (the first tick
/// drops what is older than the window).
async fn recent_counts(store: &PoolStore, pool: &Pool) -> Result<VecDeque<(i64, u32)>, PoolError> {
    let log = store.activity(Some(&pool.name), 500).await?;
    let mut counts: Vec<(i64, u32)> = log
        .iter()
        .filter(|e| !matches!(e.reason, ChangeReason::RuleDecision { shadow: true, .. }))
        .filter(|e| e.from != e.to)
        .map(|e| (e.at_ms, e.from))
        .collect();
    counts.sort_unstable_by_key(|(at, _)| *at);
    Ok(counts.into())
}

/// The pool's price ([`crate::pools::priced_pool`]): its base at its cheapest priced
/// region, the GPUs of `status` at their hosts' regions, the next where placement would
/// put it.
pub fn pricing(pool: &Pool, status: Option<&PoolStatus>, catalog: &Catalog) -> Option<Pricing> {
    crate::pools::priced_pool(pool, status, catalog).ok()
}

/// One pool's tick; answers (from, to) when the pool's desired count was changed.
#[allow(clippy::too_many_arguments)]
#[allow(
    clippy::too_many_lines,
    reason = "one pool's tick: windows, decision, clamps and its log; to be split"
)]
async fn step(
    live: &mut Live,
    store: &PoolStore,
    pool: &Pool,
    status: &PoolStatus,
    gpus: &GpuIndex<'_>,
    catalog: &Catalog,
    now_ms: i64,
) -> Result<Option<(u32, u32)>, PoolError> {
    // Everything below is on the rules' clock (the console's but in the demo).
    let minutes = window_minutes(&live.rules);
    live.ticks.push_back(sample(status, gpus, now_ms));
    let keep_from = now_ms - i64::from(minutes + 1) * MINUTE_MS;
    while live.ticks.front().is_some_and(|t| t.at_ms <= keep_from) {
        live.ticks.pop_front();
    }
    let mut windows = MetricWindows::default();
    let series = |pick: fn(&Tick) -> Option<f64>| {
        live.ticks
            .iter()
            .filter_map(move |t| pick(t).map(|v| (t.at_ms, v)))
    };
    windows.gpu_util = minute_means(series(|t| t.gpu_util), now_ms, minutes, TICK_SLACK_MS, true);
    windows.mem_util = minute_means(series(|t| t.mem_util), now_ms, minutes, TICK_SLACK_MS, true);
    windows.busy_gpus = minute_means(
        series(|t| t.busy_gpus),
        now_ms,
        minutes,
        TICK_SLACK_MS,
        true,
    );
    windows.ready_gpus = minute_means(
        series(|t| Some(t.ready_gpus)),
        now_ms,
        minutes,
        TICK_SLACK_MS,
        true,
    );
    for metric in &live.rules.spec().metrics {
        // One minute more than the window, to know whether the series reaches back to it.
        let since = now_ms - i64::from(minutes + 1) * MINUTE_MS;
        let samples: Vec<(i64, f64)> = store
            .metric_samples(&metric.name, &pool.name, since)
            .await?
            .into_iter()
            .collect();
        let window = windows.custom_mut(&metric.name);
        if samples
            .iter()
            .any(|(at, _)| *at > now_ms - i64::from(minutes) * MINUTE_MS)
        {
            *window = minute_means(samples.iter().copied(), now_ms, minutes, 0, false);
        } else if let Some((at, value)) = store.latest_metric(&metric.name, &pool.name).await? {
            // Older than the window: still said, so the rule can say since when it is stale.
            window.push(at, value);
        }
    }

    // One entry a GPU: a node's lease holds all of the node's.
    let mut held_since: Vec<i64> = status
        .leases
        .iter()
        .filter(|lease| lease.state == PoolLeaseState::Active)
        .flat_map(|lease| std::iter::repeat_n(lease.granted_at_ms, lease.gpu_uuids.len().max(1)))
        .collect();
    held_since.sort_unstable();
    let price = pricing(pool, Some(status), catalog);
    let shadow = live.mode == RulesMode::Shadow;
    let current = if shadow {
        *live.shadow_desired.get_or_insert(pool.desired)
    } else {
        pool.desired
    };
    live.counts.push_back((now_ms, current));
    while live.counts.front().is_some_and(|(at, _)| *at <= keep_from) {
        live.counts.pop_front();
    }
    windows.desired_gpus = minute_highs(live.counts.iter().copied(), now_ms, minutes);
    let state = PoolState {
        desired_gpus: current,
        ready_gpus: status.actual,
        held_gpus: status.actual + status.pending,
        warming_gpus: status.pending,
        held_since_ms: &held_since,
        last_scale_out_ms: live.last_out_ms,
        last_scale_in_ms: live.last_in_ms,
        pricing: price.as_ref(),
        node_gpus: live.node_gpus,
    };
    let mut decision = decide(&live.rules, &state, &windows, now_ms);
    decision.at_ms = now_ms;
    // The pool's own range bounds every count (the rules' limits are saved within it).
    decision.desired_gpus = decision.desired_gpus.clamp(pool.min, pool.max);
    // So do the team's quotas (its model's GPUs, then its spend), on a scale-out.
    let clamps = store
        .team_clamps(
            pool,
            current,
            decision.desired_gpus,
            catalog,
            price.as_ref(),
        )
        .await?;
    for clamp in clamps {
        let to = clamp.to;
        let named = match clamp.limit {
            TeamLimit::Gpus(ceiling) => Clamp::Quota {
                from_gpus: clamp.asked,
                to_gpus: to,
                team: ceiling.team,
                model: ceiling.model,
                quota_gpus: ceiling.quota_gpus,
            },
            TeamLimit::Spend {
                team,
                per_month_fen,
            } => Clamp::TeamSpend {
                from_gpus: clamp.asked,
                to_gpus: to,
                team,
                per_month_fen,
            },
        };
        apply_clamp(&mut decision, current, to, named);
    }

    let key = reason_key(&decision);
    let due = live
        .recorded
        .as_ref()
        .is_none_or(|(at, had)| *had != key || now_ms - at >= RECORD_EVERY_MS);
    if due {
        store.record_decision(&pool.id, &decision).await?;
        live.recorded = Some((now_ms, key.clone()));
    }

    let to = decision.desired_gpus;
    if to != current {
        let change = entry(&decision, shadow);
        if shadow {
            live.shadow_desired = Some(to);
            store.log_done(pool, &change).await?;
        } else {
            // Compare-and-set from the count the rule decided on: when the operator, an
            // edit or another console moved the pool since this tick read it, theirs
            // stands, and the rule decides again on the next tick from what is there.
            let spend = crate::pools::teams::SpendCheck {
                catalog,
                pricing: price.as_ref(),
            };
            match store
                .set_desired(&pool.name, to, &[], &change, Some(&spend))
                .await
            {
                Ok(_) => {}
                // A quota's room was taken by another of the team's pools since this tick
                // clamped: the next tick clamps again on what is there.
                Err(PoolError::Invalid {
                    field: "to",
                    problem,
                    ..
                }) => {
                    tracing::info!(pool = %pool.name, wanted = to, %problem, "a rule stood down: the team's quota has no room");
                    return Ok(None);
                }
                Err(PoolError::Moved {
                    expected, actual, ..
                }) => {
                    tracing::info!(
                        pool = %pool.name,
                        decided_from = expected,
                        now = actual,
                        wanted = to,
                        "a rule stood down: the pool moved under it"
                    );
                    return Ok(None);
                }
                Err(error) => return Err(error),
            }
            tracing::info!(pool = %pool.name, from = current, to, reason = %decision.reason, "a rule scaled the pool");
        }
        // A cooldown starts only on a change actually made (or, in shadow mode, logged).
        live.held_logged = None;
        if to > current {
            live.last_out_ms = Some(now_ms);
        } else {
            live.last_in_ms = Some(now_ms);
        }
        return Ok((!shadow).then_some((current, to)));
    }
    // A rule wanted a change and a clamp kept the count: said once per rule and clamp.
    if matches!(decision.reason, DecisionReason::Held { .. }) {
        if live.held_logged.as_deref() != Some(key.as_str()) {
            store.log_done(pool, &entry(&decision, shadow)).await?;
            live.held_logged = Some(key);
        }
    } else {
        live.held_logged = None;
    }
    Ok(None)
}

/// Sets the decision's count to `to` for `clamp`, named among its clamps; a rule that then
/// changes nothing is held by it.
fn apply_clamp(decision: &mut Decision, current: u32, to: u32, clamp: Clamp) {
    decision.clamps.push(clamp.clone());
    decision.desired_gpus = to;
    decision.reason = match std::mem::replace(&mut decision.reason, DecisionReason::Steady) {
        DecisionReason::Rule { rule, .. } if to == current => DecisionReason::Held { rule, clamp },
        DecisionReason::Rule {
            rule, from_gpus, ..
        } => DecisionReason::Rule {
            rule,
            from_gpus,
            to_gpus: to,
        },
        DecisionReason::Bound { .. } if to == current => DecisionReason::Steady,
        DecisionReason::Bound { .. } => DecisionReason::Bound { clamp },
        other => other,
    };
}

/// The activity entry of a decision.
fn entry(decision: &Decision, shadow: bool) -> NewActivity {
    let per_hour = decision.cost_delta_per_hour_fen;
    NewActivity {
        actor: Actor::Rule,
        from: decision.current_gpus,
        to: decision.desired_gpus,
        reason: ChangeReason::RuleDecision {
            decision: Box::new(decision.clone()),
            shadow,
        },
        delta_per_hour_fen: per_hour,
        delta_per_month_fen: per_hour.map(|fen| fen.saturating_mul(730)),
    }
}

/// What makes two decisions "the same reason": its kind, the rule, and the clamp's kind.
fn reason_key(decision: &Decision) -> String {
    let clamp_kind = |clamp: &ebb_wire::rules::Clamp| {
        serde_json::to_value(clamp)
            .ok()
            .and_then(|v| v.get("kind").and_then(|k| k.as_str().map(str::to_string)))
            .unwrap_or_default()
    };
    match &decision.reason {
        DecisionReason::Rule { rule, to_gpus, .. } => format!("rule:{rule}:{to_gpus}"),
        DecisionReason::Bound { clamp } => format!("bound:{}", clamp_kind(clamp)),
        DecisionReason::Held { rule, clamp } => format!("held:{rule}:{}", clamp_kind(clamp)),
        DecisionReason::Waiting { rule, status } => {
            let kind = serde_json::to_value(status)
                .ok()
                .and_then(|v| v.get("kind").and_then(|k| k.as_str().map(str::to_string)))
                .unwrap_or_default();
            format!("waiting:{rule}:{kind}")
        }
        DecisionReason::Steady => "steady".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn busy_gpus_are_unknown_when_held_gpus_have_no_reading() {
        let lease = ebb_wire::pools::PoolLeaseView {
            lease_id: "l".into(),
            host: "h".into(),
            region: "r".into(),
            gpu_uuids: vec!["GPU-0".into()],
            gpu_indexes: vec![0],
            fencing_token: 1,
            granted_at_ms: 0,
            state: PoolLeaseState::Active,
            util_pct: None,
            checkpoint_at_ms: None,
            release_grace_s: None,
            reclaim_deadline_ms: None,
            spot: false,
            starting: false,
        };
        let holding = PoolStatus {
            leases: vec![lease],
            ..PoolStatus::default()
        };
        // No reading (the host or Prometheus silent): unknown, not idle.
        let tick = sample(&holding, &GpuIndex::new(), 0);
        assert_eq!(
            (tick.busy_gpus, tick.gpu_util, tick.ready_gpus),
            (None, None, 1.0)
        );
        // Nothing held: none busy.
        let empty = sample(&PoolStatus::default(), &GpuIndex::new(), 0);
        assert_eq!(empty.busy_gpus, Some(0.0));
    }

    #[test]
    fn minute_means_slide_with_now() {
        // 1 Hz at 90 for the last 150 s, 10 before.
        let now = 1_000_000;
        let samples: Vec<(i64, f64)> = (0..300)
            .map(|s| {
                (
                    now - 299_000 + s * 1_000,
                    if s >= 150 { 90.0 } else { 10.0 },
                )
            })
            .collect();
        let window = minute_means(samples.iter().copied(), now, 3, 0, true);
        assert_eq!(window.len(), 3);
        let latest = window.latest().unwrap();
        assert_eq!((latest.at_ms, latest.value), (now, 90.0));
        // The minute 2..3 ago is half and half.
        let means: Vec<f64> = (0..3)
            .map(|k| {
                minute_means(samples.iter().copied(), now - k * MINUTE_MS, 1, 0, true)
                    .latest()
                    .unwrap()
                    .value
            })
            .collect();
        assert_eq!(means[0], 90.0);
        assert_eq!(means[1], 90.0);
        assert!((means[2] - 50.0).abs() < 2.0, "{means:?}");
    }

    #[test]
    fn minute_highs_keep_each_minutes_highest_count_at_its_end() {
        let now = 1_000_000;
        // 10 for a tick 3 min 30 s ago, 9 after, 8 from 50 s ago; a tick in the future
        // and one past the window are left out.
        let counts = [
            (now - 11 * MINUTE_MS, 20),
            (now - 210_000, 10),
            (now - 200_000, 9),
            (now - 100_000, 9),
            (now - 50_000, 8),
            (now, 8),
            (now + 1_000, 30),
        ];
        let window = minute_highs(counts.iter().copied(), now, 10);
        let samples: Vec<(i64, f64)> = (0..4)
            .map(|k| {
                let end = now - k * MINUTE_MS;
                (
                    end,
                    minute_highs(counts.iter().copied(), end, 1)
                        .latest()
                        .map_or(-1.0, |s| s.value),
                )
            })
            .collect();
        assert_eq!(window.len(), 3, "{window:?}");
        assert_eq!(
            window.latest().map(|s| (s.at_ms, s.value)),
            Some((now, 8.0))
        );
        // Minute 0 (now − 60 s, now]: 8; minute 1: 9; minute 2: nothing; minute 3: 10.
        assert_eq!(samples[0].1, 8.0);
        assert_eq!(samples[1].1, 9.0);
        assert_eq!(samples[2].1, -1.0);
        assert_eq!(samples[3].1, 10.0);
    }

    #[test]
    fn a_minute_counts_only_when_the_series_reaches_back_to_its_start() {
        let now = 600_000;
        // Pushed every 10 s for the last 70 s: one whole minute, not two.
        let pushes: Vec<(i64, f64)> = (0..8).map(|i| (now - 70_000 + i * 10_000, 7.0)).collect();
        let window = minute_means(pushes.iter().copied(), now, 5, 0, false);
        assert_eq!(window.len(), 1);
        assert_eq!(window.latest().unwrap().at_ms, now);
        // From 130 s ago: two.
        let pushes: Vec<(i64, f64)> = (0..14).map(|i| (now - 130_000 + i * 10_000, 7.0)).collect();
        assert_eq!(
            minute_means(pushes.iter().copied(), now, 5, 0, false).len(),
            2
        );
        // A push keeps its own time.
        let window = minute_means(
            [(now - 90_000, 1.0), (now - 30_000, 7.0)].into_iter(),
            now,
            5,
            0,
            false,
        );
        assert_eq!(window.latest().unwrap().at_ms, now - 30_000);
    }
}
