//! Seeded demand traces of the shapes the seed describes, for tests, benchmarks and
//! `suggest`'s development: parameters and a seed in, demand in GPUs per minute out. The
//! same parameters and seed give the same trace on every machine (a splitmix64 generator,
//! no global randomness).

use super::spot::SpotModel;
use super::trace::Trace;
use ebb_cost::{Money, OverlayMode};
use std::f64::consts::TAU;

const MINUTES_PER_DAY: usize = 1440;

/// A shape of demand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Family {
    /// A daily cycle (evening peak) with one festival day at the peak (the seed's Double 11,
    /// ×8).
    DailyFestival,
    /// A steady base and a two-week burst that drops by a third after day 10 (the seed's
    /// fine-tune).
    TwoWeekBurst,
    /// A low base and a few flash crowds: up in minutes, decaying over an hour or so.
    FlashCrowd,
    /// Load oscillating with a 10–20 minute period.
    Oscillation,
    /// A few GPUs day to day and a 15-day render at the peak, billed by the day.
    RenderBatch,
    /// Flat load with noise.
    Steady,
    /// A live-streaming daily cycle growing from the base to the peak over the trace.
    GrowingStreaming,
    /// Office hours on weekdays, low nights and weekends.
    Weekly,
    /// A batch of about `peak` GPUs from 09:00 to 17:00 on Monday to Friday (UTC, the
    /// trace's zone; minute 0 is 1970-01-01 00:00 UTC, a Thursday, as a replay's default
    /// start), a few (`base`) otherwise.
    WeekdayBatch,
    /// Flat load with AR(1) noise of lag-1 correlation 0.5 (forgets in minutes).
    Ar1Steady50,
    /// Flat load with AR(1) noise of lag-1 correlation 0.9 (about 10 minutes' memory).
    Ar1Steady90,
    /// Flat load with AR(1) noise of lag-1 correlation 0.98 (about an hour's wander).
    Ar1Steady98,
    /// A serving fleet's request rate: a level that steps every 10 minutes to a new value
    /// within ±30% of it.
    Steps10m,
    /// A large training cluster: 400–800 busy GPUs drifting slowly over days, jobs
    /// starting and ending in chunks of 8 and 64 GPUs.
    LargePool,
    /// Not tuned to ([`Family::UNSEEN`]): a weekday batch whose start and end each drift
    /// by up to ±30 minutes from 09:00 and 17:00, day to day, its size ±10%.
    WeekdayBatchDrift,
    /// Not tuned to: a training cluster of about 700 GPUs, jobs of 8 to 128 GPUs running
    /// hours to days, started to follow a level that drifts slowly (a random walk of
    /// hours) between `base` and `peak`.
    TrainingCluster,
    /// Not tuned to: a small Slurm queue, idle (a GPU or none) for long stretches, with
    /// sudden bursts of 8-GPU jobs (one to three at once) running 30 minutes to 6 hours;
    /// whole GPUs asked and used (a queue trace, nodes of 8 GPUs).
    QueueBursts,
    /// Not tuned to (added last, measured once): a serving fleet's daily cycle peaking in
    /// the afternoon (UTC), its height changing week to week (60 to 100% of `peak` over the
    /// `base`), weekends at 70%, and 20-minute dips of a third (deploys) a few times a week.
    DiurnalServing,
}

/// A family's knobs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FamilyParams {
    /// Days of minutes.
    pub days: u32,
    /// The low level, in GPUs.
    pub base_gpus: f64,
    /// The high level (the festival, the burst, the crowd, the render), in GPUs.
    pub peak_gpus: f64,
    /// Noise, as a fraction of the level (0.05: ±5%).
    pub noise: f64,
}

impl Family {
    /// Every family.
    pub const ALL: [Family; 14] = [
        Family::DailyFestival,
        Family::TwoWeekBurst,
        Family::FlashCrowd,
        Family::Oscillation,
        Family::RenderBatch,
        Family::Steady,
        Family::GrowingStreaming,
        Family::Weekly,
        Family::WeekdayBatch,
        Family::Ar1Steady50,
        Family::Ar1Steady90,
        Family::Ar1Steady98,
        Family::Steps10m,
        Family::LargePool,
    ];

    /// Families added after the search was developed, never tuned to: reported apart.
    pub const UNSEEN: [Family; 4] = [
        Family::WeekdayBatchDrift,
        Family::TrainingCluster,
        Family::QueueBursts,
        Family::DiurnalServing,
    ];

    /// A queue trace's node (GPUs per node) when the family is one: its demand is the
    /// queue's (`slurm_demand_gpus`), whole GPUs.
    pub fn queue_node_gpus(self) -> Option<u32> {
        match self {
            Family::QueueBursts => Some(8),
            _ => None,
        }
    }

    /// Whether it is flat load (noise only): the ≤ 3 actions a day goal applies.
    pub fn is_steady(self) -> bool {
        matches!(
            self,
            Family::Steady | Family::Ar1Steady50 | Family::Ar1Steady90 | Family::Ar1Steady98
        )
    }

    /// Its name in tables and flags.
    pub fn name(self) -> &'static str {
        match self {
            Family::DailyFestival => "daily-festival",
            Family::TwoWeekBurst => "two-week-burst",
            Family::FlashCrowd => "flash-crowd",
            Family::Oscillation => "oscillation",
            Family::RenderBatch => "render-batch",
            Family::Steady => "steady",
            Family::GrowingStreaming => "growing-streaming",
            Family::Weekly => "weekly",
            Family::WeekdayBatch => "weekday-batch",
            Family::Ar1Steady50 => "ar1-steady-0.5",
            Family::Ar1Steady90 => "ar1-steady-0.9",
            Family::Ar1Steady98 => "ar1-steady-0.98",
            Family::Steps10m => "steps-10m",
            Family::LargePool => "large-pool",
            Family::WeekdayBatchDrift => "weekday-drift",
            Family::TrainingCluster => "training-cluster",
            Family::QueueBursts => "queue-bursts",
            Family::DiurnalServing => "diurnal-serving",
        }
    }

    /// The family called `name`.
    pub fn parse(name: &str) -> Option<Family> {
        Family::ALL
            .into_iter()
            .chain(Family::UNSEEN)
            .find(|family| family.name() == name)
    }

    /// 30 days at the seed's scale.
    pub fn default_params(self) -> FamilyParams {
        let (base_gpus, peak_gpus, noise) = match self {
            Family::DailyFestival => (10.0, 80.0, 0.05),
            Family::TwoWeekBurst => (5.0, 30.0, 0.03),
            Family::FlashCrowd => (8.0, 40.0, 0.05),
            Family::Oscillation => (6.0, 14.0, 0.03),
            Family::RenderBatch => (5.0, 100.0, 0.02),
            Family::Steady => (20.0, 20.0, 0.03),
            Family::GrowingStreaming => (2.0, 30.0, 0.05),
            Family::Weekly => (4.0, 24.0, 0.05),
            Family::WeekdayBatch => (3.0, 50.0, 0.05),
            // The AR(1) families: `noise` is the noise's standard deviation.
            Family::Ar1Steady50 | Family::Ar1Steady90 | Family::Ar1Steady98 => (40.0, 40.0, 0.08),
            // `noise` is the step's reach (±30%).
            Family::Steps10m => (30.0, 30.0, 0.3),
            Family::LargePool => (400.0, 800.0, 0.01),
            Family::WeekdayBatchDrift => (3.0, 50.0, 0.05),
            Family::TrainingCluster => (620.0, 780.0, 0.005),
            Family::QueueBursts => (0.0, 24.0, 0.0),
            Family::DiurnalServing => (40.0, 150.0, 0.04),
        };
        FamilyParams {
            days: 30,
            base_gpus,
            peak_gpus,
            noise,
        }
    }

    /// How its GPUs above the base are naturally paid (the render by the day, the rest by
    /// the hour).
    pub fn overlay(self) -> OverlayMode {
        match self {
            Family::RenderBatch => OverlayMode::Day,
            _ => OverlayMode::Hour,
        }
    }
}

impl FamilyParams {
    /// The same shape at `peak_gpus` high: the base and the peak scaled by one factor (the
    /// noise is a share of the level, so it scales with them). A large stand-in of a shape
    /// first drawn at a few tens of GPUs (a pool of hundreds, for the levers in proportion
    /// to the pool). Unchanged when the peak is not above 0.
    pub fn at_peak(self, peak_gpus: f64) -> FamilyParams {
        if self.peak_gpus <= 0.0 || !peak_gpus.is_finite() || peak_gpus <= 0.0 {
            return self;
        }
        let factor = peak_gpus / self.peak_gpus;
        FamilyParams {
            base_gpus: self.base_gpus * factor,
            peak_gpus,
            ..self
        }
    }
}

/// splitmix64: small, fast, and the same everywhere.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> SplitMix64 {
        SplitMix64(seed)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[low, high)`.
    pub fn range(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// A whole number in `low..=high`.
    pub fn pick(&mut self, low: u32, high: u32) -> u32 {
        low + (self.next_u64() % u64::from(high - low + 1)) as u32
    }
}

/// The evening-peaked daily cycle: 0 at 05:00, 1 at 21:00, smooth between.
fn daily_cycle(minute_of_day: usize) -> f64 {
    let hours = minute_of_day as f64 / 60.0;
    let phase = (hours - 21.0) / 24.0 * TAU;
    (1.0 + phase.cos()) / 2.0
}

/// `family`'s trace: `params.days` days of minutes from `seed`.
pub fn generate(family: Family, params: &FamilyParams, seed: u64) -> Vec<f64> {
    let mut rng = SplitMix64::new(seed ^ (family as u64).wrapping_mul(0xA076_1D64_78BD_642F));
    let minutes = params.days as usize * MINUTES_PER_DAY;
    let days = params.days.max(1);
    let (base, peak) = (params.base_gpus, params.peak_gpus.max(params.base_gpus));
    let mut level = vec![0.0; minutes];
    let noise = match family {
        Family::Ar1Steady50 => return ar1(&mut rng, minutes, base, params.noise, 0.5),
        Family::Ar1Steady90 => return ar1(&mut rng, minutes, base, params.noise, 0.9),
        Family::Ar1Steady98 => return ar1(&mut rng, minutes, base, params.noise, 0.98),
        // Whole GPUs asked by jobs: no noise on top.
        Family::QueueBursts => return queue_bursts(&mut rng, minutes, peak),
        // The steps are the family; a little jitter on top.
        Family::Steps10m => 0.02,
        _ => params.noise,
    };
    match family {
        Family::DailyFestival => {
            let festival =
                rng.pick(days * 2 / 3, days.saturating_sub(3).max(days * 2 / 3)) as usize;
            for (m, gpus) in level.iter_mut().enumerate() {
                *gpus = base * (0.6 + 0.4 * daily_cycle(m % MINUTES_PER_DAY));
                if m / MINUTES_PER_DAY == festival {
                    // Up over the first hour of the day, down within the hour after it.
                    let ramp = ((m % MINUTES_PER_DAY) as f64 / 60.0).min(1.0);
                    *gpus = gpus.max(peak * ramp);
                }
            }
        }
        Family::TwoWeekBurst => {
            let start = rng.pick(1, days.saturating_sub(15).max(1)) as usize * MINUTES_PER_DAY
                + rng.pick(0, 23) as usize * 60;
            for (m, gpus) in level.iter_mut().enumerate() {
                *gpus = base;
                if m >= start && m < start + 14 * MINUTES_PER_DAY {
                    let into = m - start;
                    let burst = if into < 10 * MINUTES_PER_DAY {
                        peak - base
                    } else {
                        (peak - base) * 0.6
                    };
                    *gpus += burst;
                }
            }
        }
        Family::FlashCrowd => {
            level.fill(base);
            let crowds = rng.pick(3, 6);
            for _ in 0..crowds {
                let at = rng.pick(0, (minutes - 1) as u32) as usize;
                let rise = rng.range(2.0, 6.0);
                let decay = rng.range(30.0, 90.0);
                let height = (peak - base) * rng.range(0.6, 1.0);
                for (m, gpus) in level.iter_mut().enumerate().skip(at).take(6 * 90) {
                    let since = (m - at) as f64;
                    let shape = if since < rise {
                        since / rise
                    } else {
                        (-(since - rise) / decay).exp()
                    };
                    *gpus += height * shape;
                }
            }
        }
        Family::Oscillation => {
            let mid = (base + peak) / 2.0;
            let amplitude = (peak - base) / 2.0;
            let mut phase = rng.range(0.0, TAU);
            let mut period = rng.range(10.0, 20.0);
            for (m, gpus) in level.iter_mut().enumerate() {
                if m % 120 == 0 {
                    period = rng.range(10.0, 20.0);
                }
                phase += TAU / period;
                *gpus = mid + amplitude * phase.sin();
            }
        }
        Family::RenderBatch => {
            let start = rng.pick(2, days.saturating_sub(16).max(2)) as usize * MINUTES_PER_DAY
                + rng.pick(8, 11) as usize * 60;
            for (m, gpus) in level.iter_mut().enumerate() {
                let rendering = m >= start && m < start + 15 * MINUTES_PER_DAY;
                *gpus = if rendering { peak } else { base };
            }
        }
        Family::Steady => level.fill(base),
        Family::GrowingStreaming => {
            for (m, gpus) in level.iter_mut().enumerate() {
                let grown = m as f64 / minutes.max(1) as f64;
                let top = base + (peak - base) * grown;
                *gpus = top * (0.3 + 0.7 * daily_cycle(m % MINUTES_PER_DAY));
            }
        }
        Family::Weekly => {
            for (m, gpus) in level.iter_mut().enumerate() {
                let weekday = (m / MINUTES_PER_DAY) % 7 < 5;
                let hour = (m % MINUTES_PER_DAY) / 60;
                let office = weekday && (9..18).contains(&hour);
                *gpus = if office { peak } else { base };
            }
        }
        Family::WeekdayBatch => {
            for (m, gpus) in level.iter_mut().enumerate() {
                // Minute 0 is a Thursday (1970-01-01); 0 = Sunday.
                let weekday = (m / MINUTES_PER_DAY + 4) % 7;
                let hour = (m % MINUTES_PER_DAY) / 60;
                let office = (1..=5).contains(&weekday) && (9..17).contains(&hour);
                *gpus = if office { peak } else { base };
            }
        }
        Family::Steps10m => {
            let mut step = 1.0;
            for (m, gpus) in level.iter_mut().enumerate() {
                if m % 10 == 0 {
                    step = 1.0 + rng.range(-params.noise, params.noise);
                }
                *gpus = base * step;
            }
        }
        Family::LargePool => {
            // A slow drift between base and peak (periods of days), followed by whole jobs.
            let phase = rng.range(0.0, TAU);
            let period = rng.range(4.0, 9.0) * MINUTES_PER_DAY as f64;
            let mid = (base + peak) / 2.0;
            let reach = (peak - base) / 2.0 * 0.8;
            let mut running = mid;
            for (m, gpus) in level.iter_mut().enumerate() {
                let goal = mid + reach * (TAU * m as f64 / period + phase).sin();
                // About a job event every 10 minutes; starts when below the drift, ends above.
                if rng.unit() < 0.1 {
                    let chunk = if rng.unit() < 0.15 { 64.0 } else { 8.0 };
                    let start = rng.unit() < 0.5 + (goal - running) / (2.0 * reach).max(1.0);
                    running = if start {
                        running + chunk
                    } else {
                        (running - chunk).max(base * 0.5)
                    };
                }
                *gpus = running;
            }
        }
        Family::WeekdayBatchDrift => weekday_drift(&mut rng, &mut level, base, peak),
        Family::TrainingCluster => training_cluster(&mut rng, &mut level, base, peak),
        Family::DiurnalServing => diurnal_serving(&mut rng, &mut level, base, peak),
        Family::Ar1Steady50 | Family::Ar1Steady90 | Family::Ar1Steady98 | Family::QueueBursts => {
            unreachable!("returned above")
        }
    }
    // Noise: a slow wander (AR(1), about an hour's memory) plus a little per-minute jitter.
    let mut wander = 0.0;
    for gpus in &mut level {
        wander = 0.98 * wander + 0.2 * rng.range(-1.0, 1.0);
        let jitter = rng.range(-0.3, 0.3);
        *gpus = (*gpus * (1.0 + noise * (wander + jitter).clamp(-1.5, 1.5))).max(0.0);
    }
    level
}

/// [`Family::WeekdayBatchDrift`]'s level.
fn weekday_drift(rng: &mut SplitMix64, level: &mut [f64], base: f64, peak: f64) {
    for (day, minutes) in level.chunks_mut(MINUTES_PER_DAY).enumerate() {
        let start = (9 * 60 + rng.pick(0, 60) as usize).saturating_sub(30);
        let end = (17 * 60 + rng.pick(0, 60) as usize).saturating_sub(30);
        let size = peak * rng.range(0.9, 1.1);
        // Minute 0 is a Thursday (1970-01-01); 0 = Sunday.
        let weekday = (1..=5).contains(&((day + 4) % 7));
        for (m, gpus) in minutes.iter_mut().enumerate() {
            *gpus = if weekday && (start..end).contains(&m) {
                size
            } else {
                base
            };
        }
    }
}

/// [`Family::TrainingCluster`]'s level.
fn training_cluster(rng: &mut SplitMix64, level: &mut [f64], base: f64, peak: f64) {
    let mid = (base + peak) / 2.0;
    let reach = (peak - base) / 2.0;
    let (mut drift, mut velocity) = (0.0f64, 0.0f64);
    let mut jobs: Vec<(usize, f64)> = Vec::new();
    let mut running = 0.0;
    for (m, gpus) in level.iter_mut().enumerate() {
        if m % 60 == 0 {
            // A random walk of hours, its pace itself wandering, kept within the reach.
            velocity = (0.9 * velocity + 0.02 * rng.range(-1.0, 1.0)).clamp(-0.05, 0.05);
            drift = (drift + velocity).clamp(-1.0, 1.0);
        }
        jobs.retain(|&(end, size)| {
            if end <= m {
                running -= size;
            }
            end > m
        });
        let goal = mid + reach * drift;
        if m % 15 == 0 {
            while running < goal - 8.0 {
                let size = [8.0, 8.0, 16.0, 32.0, 64.0, 128.0][rng.pick(0, 5) as usize];
                let hours = rng.range(2.0, 48.0);
                jobs.push((m + (hours * 60.0) as usize, size));
                running += size;
            }
        }
        *gpus = running;
    }
}

/// [`Family::DiurnalServing`]'s level.
fn diurnal_serving(rng: &mut SplitMix64, level: &mut [f64], base: f64, peak: f64) {
    let mut height = rng.range(0.6, 1.0);
    let mut dip_left = 0usize;
    for (m, gpus) in level.iter_mut().enumerate() {
        let day = m / MINUTES_PER_DAY;
        if m % (7 * MINUTES_PER_DAY) == 0 {
            height = rng.range(0.6, 1.0);
        }
        // Minute 0 is a Thursday (1970-01-01): days 2 and 3 of each week are the weekend.
        let weekend = matches!(day % 7, 2 | 3);
        let hours = (m % MINUTES_PER_DAY) as f64 / 60.0;
        let cycle = (1.0 + ((hours - 14.0) / 24.0 * TAU).cos()) / 2.0;
        let mut value = base + (peak - base) * height * cycle;
        if weekend {
            value *= 0.7;
        }
        if dip_left == 0 && rng.unit() < 3.0 / (7.0 * MINUTES_PER_DAY as f64) {
            dip_left = 20;
        }
        if dip_left > 0 {
            dip_left -= 1;
            value *= 2.0 / 3.0;
        }
        *gpus = value;
    }
}

/// [`Family::QueueBursts`]: whole GPUs, idle for long stretches, bursts of 8-GPU jobs.
fn queue_bursts(rng: &mut SplitMix64, minutes: usize, peak: f64) -> Vec<f64> {
    let mut level = vec![0.0f64; minutes];
    let mut m = 0;
    while m < minutes {
        // Idle for 2 to 30 hours (a GPU kept busy by a small job now and then).
        let idle = (rng.range(2.0, 30.0) * 60.0) as usize;
        let small = rng.unit() < 0.3;
        for gpus in level.iter_mut().skip(m).take(idle) {
            *gpus = gpus.max(if small { 1.0 } else { 0.0 });
        }
        m += idle;
        let jobs = rng.pick(1, 3);
        for _ in 0..jobs {
            let at = m + rng.pick(0, 20) as usize;
            let length = (rng.range(0.5, 6.0) * 60.0) as usize;
            for gpus in level.iter_mut().skip(at).take(length) {
                *gpus = (*gpus + 8.0).min(peak.max(8.0));
            }
        }
        m += rng.pick(30, 180) as usize;
    }
    level
}

/// Flat load at `level` with AR(1) noise: `x(t) = phi · x(t−1) + e(t)`, its standard
/// deviation `sd` of the level whatever `phi` (the innovations scaled by √(1 − phi²); each
/// a sum of four uniforms, near normal), starting in its stationary spread.
fn ar1(rng: &mut SplitMix64, minutes: usize, level: f64, sd: f64, phi: f64) -> Vec<f64> {
    // A sum of four uniforms in [-1, 1) has variance 4/3.
    let normal = |rng: &mut SplitMix64| {
        (0..4).map(|_| rng.range(-1.0, 1.0)).sum::<f64>() / (4.0f64 / 3.0).sqrt()
    };
    let innovation = (1.0 - phi * phi).sqrt();
    let mut x = normal(rng);
    (0..minutes)
        .map(|_| {
            x = phi * x + innovation * normal(rng);
            (level * (1.0 + sd * x)).max(0.0)
        })
        .collect()
}

/// `demand` as a trace carrying a spot market from `model`: the spot price each minute
/// (from `hour`, the hour price) and the spot GPUs taken back, as if `spot_pct` percent of
/// the GPUs it needs were on spot. `None` as [`Trace::from_demand`].
pub fn with_spot_market(
    demand: Vec<f64>,
    model: &SpotModel,
    spot_pct: u32,
    hour: Money,
) -> Option<Trace> {
    let interrupted = model.interrupted_for(&demand, spot_pct);
    let prices = model.spot_prices_fen(demand.len(), hour);
    Trace::from_demand(demand)?.with_spot(Some(prices), Some(interrupted))
}
