//! The perfect-foresight limit every result is read against.
//!
//! Each minute the oracle needs `need(t) = ceil(max demand[t ..= t + warmup])`: what it
//! orders now is ready at `t + warmup`, so it is never short after the first `warmup`
//! minutes. Above that it keeps a surplus GPU only when keeping it is free: when its layer
//! is needed again before the unit it has already paid for ends (its hourly, daily or weekly
//! units bridge the gap rather than paying a new run). It reads the held GPUs oldest first
//! as layers (keeping layer `L` keeps every layer below it), keeps the highest layer whose
//! keep is free and asks for no more (a surplus GPU whose layer is not needed again within
//! its paid unit may go now: the replay keeps it to its unit's end, as the console does,
//! which costs the same and blocks nothing). With a perfect view of when each layer is next needed this is the classic
//! greedy cover of each layer's busy minutes by paid units, which is optimal layer by layer;
//! the only slack is a lower layer held a little past its own unit because a higher one is
//! kept. Subscribed layers are billed whole whatever is held, so their runs do not matter.

use super::trace::whole_gpus;
use crate::policy::{MinuteView, Policy};

/// The oracle over one trace's demand.
#[derive(Debug, Clone)]
pub struct Oracle {
    need: Vec<u32>,
    unit_minutes: u32,
    /// `max_table[k][t]`: the most needed over `need[t .. t + 2^k]`.
    max_table: Vec<Vec<u32>>,
}

impl Oracle {
    /// The oracle for `demand`, ordering `warmup_minutes` ahead, paying per started unit of
    /// `unit_minutes` (60 for hourly or spot overlays, 1,440 daily, 10,080 weekly).
    pub fn new(demand: &[f64], warmup_minutes: u32, unit_minutes: u32) -> Oracle {
        let gpus: Vec<u32> = demand.iter().map(|&busy| whole_gpus(busy)).collect();
        let need = sliding_max(&gpus, warmup_minutes as usize + 1);
        let mut max_table = vec![need.clone()];
        let mut width = 1;
        while width * 2 <= need.len() {
            let last = max_table.last().expect("starts with one row");
            let row: Vec<u32> = (0..=need.len() - width * 2)
                .map(|t| last[t].max(last[t + width]))
                .collect();
            max_table.push(row);
            width *= 2;
        }
        Oracle {
            need,
            unit_minutes: unit_minutes.max(1),
            max_table,
        }
    }

    /// What the oracle needs at each minute (before any free keep).
    pub fn need(&self) -> &[u32] {
        &self.need
    }

    /// The most needed over minutes `from..to` (0 when empty).
    fn max_need(&self, from: usize, to: usize) -> u32 {
        let to = to.min(self.need.len());
        if from >= to {
            return 0;
        }
        let k = (usize::BITS - 1 - (to - from).leading_zeros()) as usize;
        self.max_table[k][from].max(self.max_table[k][to - (1 << k)])
    }
}

/// `out[t] = max(values[t .. t + window])`, clipped at the end (a monotone deque).
fn sliding_max(values: &[u32], window: usize) -> Vec<u32> {
    let mut out = vec![0; values.len()];
    let mut deque: std::collections::VecDeque<usize> = std::collections::VecDeque::new();
    for t in (0..values.len()).rev() {
        while deque.back().is_some_and(|&i| values[i] <= values[t]) {
            deque.pop_back();
        }
        deque.push_back(t);
        while deque.front().is_some_and(|&i| i >= t + window) {
            deque.pop_front();
        }
        out[t] = values[*deque.front().expect("holds t")];
    }
    out
}

impl Policy for Oracle {
    fn name(&self) -> &str {
        "oracle"
    }

    fn desired(&mut self, view: &MinuteView<'_>) -> u32 {
        let t = view.minute as usize;
        let need = self.need.get(t).copied().unwrap_or(0);
        let unit = self.unit_minutes;
        // The highest surplus layer that is needed again before its paid unit ends.
        for layer in (need + 1..=view.held).rev() {
            let since = view.held_since[layer as usize - 1];
            let held_for = view.minute - since;
            if held_for == 0 {
                continue;
            }
            let paid_until = since + held_for.div_ceil(unit) * unit;
            if self.max_need(t + 1, paid_until as usize) >= layer {
                return layer;
            }
        }
        need
    }
}
