//! The minute loop of PRODUCT.md's replay model.
//!
//! Each minute `t`: the orders due become ready; the policy sees the pool
//! ([`MinuteView`]) and answers the count it wants held; a scale-out is ordered at once and
//! is ready at `t + warmup`; a scale-in gives back GPUs as the console's placement does
//! for a pool that releases at the end of the paid unit (`ebb_reconcile::placement::
//! choose_release` with `at_unit_end`, the pool's default; [`Policy::releases_at_unit_end`]
//! false, rules whose scale-in is `force`: at once, newest first, warming orders first):
//! of the GPUs held, those whose
//! paid unit (the overlay's hour, day or week, from each one's own rental) ends soonest are
//! chosen, the newest of equals, and a chosen GPU goes only within the console's margin of
//! its unit's end (`UNIT_END_MARGIN_MS`, a minute); the others stay held, ready and paid,
//! and are chosen again the next minute while the pool is above the policy's count. So no
//! GPU is released with paid time left, and a GPU kept is there if the policy wants it
//! back. What is recorded for minute `t` is the pool after that minute's changes: a GPU
//! ordered at `t` is paid from `t`, one released at `t` is not, and utilization and
//! shortfall count the GPUs ready after it.
//!
//! Each GPU is one paid run (`[rented, released)`) in a place of the pool: a GPU rented
//! takes the lowest place free, which the bill's base covers from the bottom
//! ([`super::billing::bill_runs_base`]). Flaps are counted from those runs
//! ([`flapped_runs`]).

use super::billing::PaidRun;
use super::trace::{Trace, whole_gpus};
use crate::policy::{MinuteView, Policy};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The most GPUs a replay holds; a policy asking for more gets this many.
pub const MAX_HELD_GPUS: u32 = 1_000_000;

/// How the replay runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SimOptions {
    /// Minutes from a scale-out's order to its GPUs being ready (the seed's 5).
    pub warmup_minutes: u32,
    /// The wall-clock instant of minute 0, for schedules.
    pub start_ms: i64,
    /// Minutes in the overlay's paid unit (60 by the hour): a GPU is released at its end.
    pub unit_minutes: u32,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            warmup_minutes: 5,
            start_ms: 0,
            unit_minutes: 60,
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
    /// Each GPU's paid run, in the order rented (the GPUs held before minute 0 first).
    pub runs: Vec<PaidRun>,
    /// Whether each run was rented by the replay (false for the GPUs held before minute 0).
    pub rented: Vec<bool>,
    /// The GPUs undone inside their paid unit ([`flapped_runs`]).
    pub flapped: Vec<(u32, u32)>,
}

/// Utilization as the replay model defines it.
pub fn utilization_pct(demand: f64, ready: u32) -> f64 {
    if ready == 0 {
        if demand > 0.0 { 100.0 } else { 0.0 }
    } else {
        (100.0 * demand / f64::from(ready)).min(100.0)
    }
}

/// How a GPU rented at `since` stands at `minute` for a release at its unit's end:
/// `Some(0)` when its paid unit ends now, `Some(1)` when it ends within the console's
/// margin (the next minute), `None` when it has more left (or was rented this minute).
pub fn due_at_unit_end(since: u32, minute: u32, unit_minutes: u32) -> Option<u8> {
    let unit = unit_minutes.max(1);
    if minute <= since {
        return None;
    }
    let into = (minute - since) % unit;
    if into == 0 {
        Some(0)
    } else if into == unit - 1 {
        Some(1)
    } else {
        None
    }
}

/// The held GPUs: their runs, places, readiness, and which are due at each minute.
struct Pool {
    minutes: u32,
    unit: u32,
    runs: Vec<PaidRun>,
    rented: Vec<bool>,
    ready_at: Vec<u32>,
    /// The held GPUs by their rental minute modulo the unit: those due at a minute are in
    /// two buckets.
    buckets: Vec<Vec<u32>>,
    /// Each held GPU's rental minute, oldest first (what the policy sees), and its run in
    /// the same order (the newest last).
    since: Vec<u32>,
    order: Vec<u32>,
    held: u32,
    ready: u32,
    /// Changes of the ready count at future minutes.
    delta: Vec<u32>,
    free_places: BinaryHeap<Reverse<u32>>,
    next_place: u32,
    chosen: Vec<(u8, Reverse<u32>, Reverse<u32>)>,
}

impl Pool {
    fn rent(&mut self, minute: u32, ready_at: u32, rented: bool) {
        let position = match self.free_places.pop() {
            Some(Reverse(place)) => place,
            None => {
                self.next_place += 1;
                self.next_place - 1
            }
        };
        let id = self.runs.len() as u32;
        self.runs.push(PaidRun {
            start_minute: minute,
            end_minute: self.minutes,
            position,
        });
        self.rented.push(rented);
        self.ready_at.push(ready_at);
        self.buckets[(minute % self.unit) as usize].push(id);
        self.since.push(minute);
        self.order.push(id);
        self.held += 1;
        if ready_at <= minute {
            self.ready += 1;
        } else if let Some(change) = self.delta.get_mut(ready_at as usize) {
            *change += 1;
        }
    }

    /// Gives back up to `count` GPUs at `minute`, those whose paid unit ends soonest (now,
    /// then within the margin), the newest of equals; returns how many went.
    fn release_due(&mut self, minute: u32, count: u32) -> u32 {
        let unit = self.unit;
        self.chosen.clear();
        let residues = if unit == 1 {
            vec![0]
        } else {
            vec![minute % unit, (minute + 1) % unit]
        };
        for residue in residues {
            for &id in &self.buckets[residue as usize] {
                let since = self.runs[id as usize].start_minute;
                if let Some(rank) = due_at_unit_end(since, minute, unit) {
                    self.chosen.push((rank, Reverse(since), Reverse(id)));
                }
            }
        }
        self.chosen.sort_unstable();
        let going = (count as usize).min(self.chosen.len());
        for k in 0..going {
            let (_, _, Reverse(id)) = self.chosen[k];
            self.release(minute, id);
        }
        going as u32
    }

    /// Gives back `count` GPUs at once, the newest first (warming orders first).
    fn release_newest(&mut self, minute: u32, count: u32) {
        for _ in 0..count {
            match self.order.last() {
                Some(&id) => self.release(minute, id),
                None => break,
            }
        }
    }

    fn release(&mut self, minute: u32, id: u32) {
        let since = self.runs[id as usize].start_minute;
        let bucket = &mut self.buckets[(since % self.unit) as usize];
        if let Some(at) = bucket.iter().position(|&held| held == id) {
            bucket.swap_remove(at);
        }
        // `order` is sorted by (rental minute, run): find the run among its minute's.
        let from = self.since.partition_point(|&held| held < since);
        if let Some(at) = self.order[from..].iter().position(|&held| held == id) {
            self.since.remove(from + at);
            self.order.remove(from + at);
        }
        let run = &mut self.runs[id as usize];
        run.end_minute = minute;
        self.free_places.push(Reverse(run.position));
        self.held -= 1;
        let ready_at = self.ready_at[id as usize];
        if ready_at <= minute {
            self.ready -= 1;
        } else if let Some(change) = self.delta.get_mut(ready_at as usize) {
            *change -= 1;
        }
    }
}

/// Runs `policy` over `trace`.
pub fn simulate(trace: &Trace, policy: &mut dyn Policy, options: &SimOptions) -> Outcome {
    let demand = trace.demand();
    let minutes = demand.len();
    let warmup = options.warmup_minutes;
    let unit = options.unit_minutes.max(1);
    let at_unit_end = policy.releases_at_unit_end();
    let initial = whole_gpus(demand[0]).min(MAX_HELD_GPUS);
    let mut pool = Pool {
        minutes: minutes as u32,
        unit,
        runs: Vec::with_capacity(initial as usize),
        rented: Vec::new(),
        ready_at: Vec::new(),
        buckets: vec![Vec::new(); unit as usize],
        since: Vec::with_capacity(initial as usize),
        order: Vec::with_capacity(initial as usize),
        held: 0,
        ready: 0,
        delta: vec![0; minutes + 1],
        free_places: BinaryHeap::new(),
        next_place: 0,
        chosen: Vec::new(),
    };
    for _ in 0..initial {
        pool.rent(0, 0, false);
    }
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
        pool.ready += pool.delta[t];
        custom.clear();
        for column in trace.columns() {
            if let Some(value) = column.values[t] {
                custom.push((column.name.as_str(), value));
            }
        }
        let held = pool.held;
        let view = MinuteView {
            minute,
            now_ms: options
                .start_ms
                .saturating_add(i64::from(minute).saturating_mul(60_000)),
            ready: pool.ready,
            held,
            warming: held - pool.ready,
            busy_gpus: busy,
            util_pct: utilization_pct(busy, pool.ready),
            mem_pct: trace.mem_pct().and_then(|values| values[t]),
            custom: &custom,
            held_since: &pool.since,
        };
        let desired = policy.desired(&view).min(MAX_HELD_GPUS);
        if desired > held {
            for _ in held..desired {
                pool.rent(minute, minute.saturating_add(warmup), true);
            }
        } else if desired < held && at_unit_end {
            pool.release_due(minute, held - desired);
        } else if desired < held {
            pool.release_newest(minute, held - desired);
        }
        if pool.held != held {
            actions += 1;
        }
        peak = peak.max(pool.held);
        series.ready.push(pool.ready);
        series.held.push(pool.held);
        series
            .utilization_pct
            .push(utilization_pct(busy, pool.ready));
        shortfall += (busy - f64::from(pool.ready)).max(0.0);
        total += busy;
    }
    let flapped = flapped_runs(&pool.runs, &pool.rented, minutes as u32, unit);
    Outcome {
        series,
        shortfall_gpu_minutes: shortfall,
        demand_gpu_minutes: total,
        actions,
        peak_held_gpus: peak,
        runs: pool.runs,
        rented: pool.rented,
        flapped,
    }
}

/// The GPUs undone inside their paid unit, from each GPU's run over a trace of `minutes`:
/// `(the minute of the action undone, the run's index)`, sorted. Two ways:
///
/// - a GPU **rented and released** before its first paid unit ended (with more than the
///   console's margin, a minute, of it left): the scale-out that rented it is undone
///   (`rented` says which runs the replay rented; the GPUs held before minute 0 were not);
/// - a GPU **released** while its paid unit still ran, and the pool **rents another**
///   before that unit would have ended (PRODUCT's paid churn): the scale-in is undone. Each
///   GPU rented is matched to one such release, the one whose paid time runs out first.
pub fn flapped_runs(
    runs: &[PaidRun],
    rented: &[bool],
    minutes: u32,
    unit_minutes: u32,
) -> Vec<(u32, u32)> {
    let unit = unit_minutes.max(1);
    let mut out = Vec::new();
    // Releases with paid time left: (released at, paid until, run).
    let mut left: Vec<(u32, u32, u32)> = Vec::new();
    let mut rents: Vec<u32> = Vec::new();
    for (id, run) in runs.iter().enumerate() {
        let id = id as u32;
        let was_rented = rented.get(id as usize).copied().unwrap_or(true);
        if was_rented {
            rents.push(run.start_minute);
        }
        if run.end_minute >= minutes || run.end_minute < run.start_minute {
            continue;
        }
        let held_for = (run.end_minute - run.start_minute).max(1);
        // Released in the last minute of its unit (the console's margin) it used the unit.
        if was_rented && held_for.saturating_add(1) < unit {
            out.push((run.start_minute, id));
        }
        let paid_until = run.start_minute + held_for.div_ceil(unit) * unit;
        if paid_until > run.end_minute {
            left.push((run.end_minute, paid_until, id));
        }
    }
    left.sort_unstable();
    rents.sort_unstable();
    let mut open: BinaryHeap<Reverse<(u32, u32, u32)>> = BinaryHeap::new();
    let mut next = 0;
    for &at in &rents {
        while next < left.len() && left[next].0 < at {
            let (released, paid_until, id) = left[next];
            open.push(Reverse((paid_until, released, id)));
            next += 1;
        }
        while open
            .peek()
            .is_some_and(|Reverse((paid_until, _, _))| *paid_until <= at)
        {
            open.pop();
        }
        if let Some(Reverse((_, released, id))) = open.pop() {
            out.push((released, id));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}
