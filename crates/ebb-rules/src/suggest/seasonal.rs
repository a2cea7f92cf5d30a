//! Seasonal pre-scaling, gated: a schedule floor only for a step up that recurs at the same
//! time of day (or of the week) in the trace itself, and that is faster than a GPU warms
//! up. "Yesterday's max" is not a pattern: a one-off peak (a festival, a flash crowd) or a
//! fast oscillation never recurs at the same minute on every day, so it gets no schedule.
//!
//! A **step** at minute `t` of a day: the mean of the next 30 minutes is at least `J` above
//! the mean of the 30 before (`J` = the larger of 2 GPUs and a quarter of the level before),
//! and half of that rise happens within 5 minutes (the 5-minute means on either side). Per
//! cluster of neighbouring candidate minutes, the onset is the sharpest.
//!
//! **Recurring**: onsets on different days at about the same minute of the day (UTC: within
//! [`MAX_DRIFT_MINUTES`] of the earliest, so a start that drifts day to day is one step), either on every full day of the trace (at least [`MIN_DAILY_DAYS`]), or on
//! every occurrence of some days of the week, each of those days occurring at least twice,
//! and no other day. The floor is the lowest level reached after the step on those days
//! (so it never holds more than any of them needed), from `warmup` minutes before the
//! earliest onset to [`HOLD_MINUTES`] after the latest, when the target rule has caught up.

use crate::replay::trace::whole_gpus;

const MINUTES_PER_DAY: i64 = 1_440;
/// Onsets on different days within this of the earliest (minutes of the day) are the same
/// step: a batch whose start drifts by up to half an hour either way is one step, its floor
/// from before the earliest onset to after the latest.
pub const MAX_DRIFT_MINUTES: u32 = 60;
/// A daily step must be seen on at least this many days.
pub const MIN_DAILY_DAYS: usize = 3;
/// How long the floor stays after the latest onset.
pub const HOLD_MINUTES: u32 = 15;

/// A step up that recurs, as a schedule floor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecurringStep {
    /// The earliest onset, minutes after midnight UTC.
    pub onset_minute_of_day: u32,
    /// Days of the week it recurs on (0 = Sunday), or `None`: every day.
    pub weekdays: Option<Vec<u32>>,
    /// Full days of the trace it was seen on.
    pub days_seen: u32,
    /// The lowest level after the step on those days (the floor).
    pub floor_gpus: u32,
    /// The typical rise, GPUs (the smallest seen).
    pub rise_gpus: u32,
    /// When the floor starts (minutes after midnight UTC): `warmup` before the onset.
    pub start_minute_of_day: u32,
    /// How long the floor lasts.
    pub duration_minutes: u32,
}

impl RecurringStep {
    /// Its cron expression (UTC): `M H * * *`, or with its days of the week, three or more
    /// in a row as a range: `M H * * 1-5`, `M H * * 0,3`.
    pub fn cron(&self) -> String {
        let (hour, minute) = (self.start_minute_of_day / 60, self.start_minute_of_day % 60);
        let days = match &self.weekdays {
            None => "*".to_string(),
            Some(days) => {
                let mut parts: Vec<String> = Vec::new();
                let mut i = 0;
                while i < days.len() {
                    let mut j = i;
                    while j + 1 < days.len() && days[j + 1] == days[j] + 1 {
                        j += 1;
                    }
                    if j >= i + 2 {
                        parts.push(format!("{}-{}", days[i], days[j]));
                    } else {
                        parts.extend(days[i..=j].iter().map(u32::to_string));
                    }
                    i = j + 1;
                }
                parts.join(",")
            }
        };
        format!("{minute} {hour} * * {days}")
    }

    /// `HH:MM` of the onset.
    pub fn onset_hh_mm(&self) -> String {
        format!(
            "{:02}:{:02}",
            self.onset_minute_of_day / 60,
            self.onset_minute_of_day % 60
        )
    }
}

/// The recurring steps of `demand` (minute 0 at `start_ms`), for a pool that takes
/// `warmup_minutes` to get a GPU ready.
pub fn recurring_steps(demand: &[f64], start_ms: i64, warmup_minutes: u32) -> Vec<RecurringStep> {
    let start_minute = start_ms.div_euclid(60_000);
    let n = demand.len() as i64;
    // Prefix sums for window means.
    let mut prefix = Vec::with_capacity(demand.len() + 1);
    prefix.push(0.0);
    for &gpus in demand {
        prefix.push(prefix.last().copied().unwrap_or(0.0) + gpus);
    }
    let mean =
        |from: i64, to: i64| (prefix[to as usize] - prefix[from as usize]) / (to - from) as f64;

    // Full days: every minute of them in the trace.
    let first_day = (start_minute + MINUTES_PER_DAY - 1).div_euclid(MINUTES_PER_DAY);
    let last_day_end = (start_minute + n).div_euclid(MINUTES_PER_DAY);
    let full_days: Vec<i64> = (first_day..last_day_end).collect();
    if full_days.len() < MIN_DAILY_DAYS {
        return Vec::new();
    }

    struct Onset {
        day: i64,
        minute_of_day: u32,
        level_after: f64,
        rise: f64,
    }
    let mut onsets: Vec<Onset> = Vec::new();
    for &day in &full_days {
        let day_start = day * MINUTES_PER_DAY - start_minute;
        let mut best: Option<(f64, i64, f64, f64)> = None;
        let flush = |best: &mut Option<(f64, i64, f64, f64)>, onsets: &mut Vec<Onset>| {
            if let Some((_, t, level_after, rise)) = best.take() {
                onsets.push(Onset {
                    day,
                    minute_of_day: (t - day_start) as u32,
                    level_after,
                    rise,
                });
            }
        };
        for t in day_start..day_start + MINUTES_PER_DAY {
            if t < 30 || t + 30 > n {
                flush(&mut best, &mut onsets);
                continue;
            }
            let before = mean(t - 30, t);
            let after = mean(t, t + 30);
            let needed = (0.25 * before).max(2.0);
            let sharp = mean(t, t + 5) - mean(t - 5, t);
            if after - before >= needed && sharp >= needed / 2.0 {
                let level_after = mean(t + 1, t + 16);
                if best.is_none_or(|(s, ..)| sharp > s) {
                    best = Some((sharp, t, level_after, after - before));
                }
            } else {
                flush(&mut best, &mut onsets);
            }
        }
        flush(&mut best, &mut onsets);
    }

    onsets.sort_by_key(|o| (o.minute_of_day, o.day));
    let weekday = |day: i64| (day + 4).rem_euclid(7) as u32; // 1970-01-01 was a Thursday.
    let mut steps = Vec::new();
    let mut used = vec![false; onsets.len()];
    for i in 0..onsets.len() {
        if used[i] {
            continue;
        }
        let first = onsets[i].minute_of_day;
        let group: Vec<usize> = (i..onsets.len())
            .filter(|&j| !used[j] && onsets[j].minute_of_day <= first + MAX_DRIFT_MINUTES)
            .collect();
        for &j in &group {
            used[j] = true;
        }
        let mut days: Vec<i64> = group.iter().map(|&j| onsets[j].day).collect();
        days.sort_unstable();
        days.dedup();
        let weekdays = if days.len() == full_days.len() {
            None
        } else {
            let mut seen: Vec<u32> = days.iter().map(|&d| weekday(d)).collect();
            seen.sort_unstable();
            seen.dedup();
            let every_occurrence = seen.iter().all(|&w| {
                let occurrences: Vec<i64> = full_days
                    .iter()
                    .copied()
                    .filter(|&d| weekday(d) == w)
                    .collect();
                occurrences.len() >= 2 && occurrences.iter().all(|d| days.contains(d))
            });
            if !every_occurrence || seen.len() == 7 {
                continue;
            }
            Some(seen)
        };
        if days.len() < 2 || (weekdays.is_none() && days.len() < MIN_DAILY_DAYS) {
            continue;
        }
        let last = group
            .iter()
            .map(|&j| onsets[j].minute_of_day)
            .max()
            .unwrap_or(first);
        if first < warmup_minutes || last + HOLD_MINUTES > MINUTES_PER_DAY as u32 {
            // Across midnight: the weekday sets would shift; left out.
            continue;
        }
        let floor = group
            .iter()
            .map(|&j| onsets[j].level_after)
            .fold(f64::INFINITY, f64::min);
        let rise = group
            .iter()
            .map(|&j| onsets[j].rise)
            .fold(f64::INFINITY, f64::min);
        steps.push(RecurringStep {
            onset_minute_of_day: first,
            weekdays,
            days_seen: days.len() as u32,
            floor_gpus: whole_gpus(floor),
            rise_gpus: rise.floor().max(0.0) as u32,
            start_minute_of_day: first - warmup_minutes,
            duration_minutes: warmup_minutes + (last - first) + HOLD_MINUTES,
        });
    }
    steps
}
