//! The noise of a trace, measured: how far demand strays from its slow level and how slowly
//! it wanders back, so the rules' deadband and windows can be sized to it rather than to a
//! fixed grid (a noise that wanders for an hour flaps a pool a one-minute blip does not).
//!
//! - The **slow level** is the centred mean over [`LEVEL_MINUTES`]; the **noise** is what is
//!   left, its spread `sd` (GPUs) and its lag-1 autocorrelation;
//! - the **decorrelation time** is the first lag at which the noise's autocorrelation falls
//!   below 1/e (one minute for white noise, about `−1 / ln(phi)` for AR(1));
//! - the load is **steady** when its standard deviation is at most [`STEADY_CV`] of its
//!   mean and its 0.1st and 99.9th percentiles are within [`STEADY_TAIL_SDS`] standard
//!   deviations of the median (no flash crowd, no shape: noise around a flat level). It is
//!   a description only: no classification changes what the search minimises (its flaps
//!   are priced on every trace, see [`super::flaps`]).
//!
//! The levers it proposes on every trace (each still chosen by replay, like the grid's):
//!
//! - scale-in stabilization windows of [`WINDOW_DECORRELATIONS`] decorrelation times
//!   (from 60 minutes to [`MAX_WINDOW_MINUTES`]): the highest of a window that long is a high quantile of
//!   the noise, not one of its wanderings;
//! - deadbands of 1, 2 and 3 noise spreads (whole GPUs): a release waits for a surplus the
//!   noise does not explain;
//! - scale-out sustains of 2 and 3 decorrelation times (5 to 30 minutes) with overloads of
//!   2 and 3 spreads: an excursion shorter than that, and shallower, is waited out.

/// The slow level: the centred mean over this many minutes.
pub const LEVEL_MINUTES: usize = 361;
/// The most a steady load's standard deviation is, as a share of its mean.
pub const STEADY_CV: f64 = 0.12;
/// How far (standard deviations) a steady load's 0.1st and 99.9th percentiles may be from
/// its median.
pub const STEADY_TAIL_SDS: f64 = 5.0;
/// The longest stabilization window proposed: each minute of a replay reads the whole
/// window, so a day-long one made a 30-day search overrun its 10 s, and beyond a few hours
/// the noise's high quantile hardly moves.
pub const MAX_WINDOW_MINUTES: u32 = 480;
/// Stabilization windows proposed, in decorrelation times.
pub const WINDOW_DECORRELATIONS: [u32; 3] = [6, 12, 24];
/// The longest lag looked at.
const MAX_LAG: usize = 720;

/// The noise of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Noise {
    /// The median demand, GPUs.
    pub median_gpus: f64,
    /// The noise's standard deviation around the slow level, GPUs.
    pub sd_gpus: f64,
    /// Its lag-1 autocorrelation.
    pub lag1: f64,
    /// Minutes until its autocorrelation falls below 1/e.
    pub decorrelation_minutes: u32,
    /// Noise around a flat level (see the module).
    pub steady: bool,
}

impl Noise {
    /// The stabilization windows it proposes (minutes, ascending, distinct).
    pub fn windows(&self) -> Vec<u32> {
        let mut out: Vec<u32> = WINDOW_DECORRELATIONS
            .iter()
            .map(|&k| round_to(k * self.decorrelation_minutes, 5).clamp(60, MAX_WINDOW_MINUTES))
            .collect();
        out.dedup();
        out
    }

    /// The deadbands it proposes (GPUs, ascending, distinct, at least 2).
    pub fn deadbands(&self) -> Vec<u32> {
        let mut out: Vec<u32> = [1.0, 2.0, 3.0]
            .iter()
            .map(|k| ((k * self.sd_gpus).ceil() as u32).clamp(2, 10_000))
            .collect();
        out.dedup();
        out
    }

    /// The scale-out sustains it proposes (minutes): 2 and 3 decorrelation times, at least
    /// 5 and 10 minutes, at most 30.
    pub fn sustains(&self) -> Vec<u32> {
        let tau = self.decorrelation_minutes;
        let mut out = vec![(2 * tau).clamp(5, 30), (3 * tau).clamp(10, 30)];
        out.dedup();
        out
    }

    /// The overloads it proposes with them (GPUs): 2 and 3 noise spreads.
    pub fn overloads(&self) -> Vec<u32> {
        let mut out: Vec<u32> = [2.0, 3.0]
            .iter()
            .map(|k| ((k * self.sd_gpus).ceil() as u32).clamp(1, 10_000))
            .collect();
        out.dedup();
        out
    }

    /// What the file's comments say of it.
    pub fn describe(&self) -> String {
        format!(
            "noise around the slow level: sd {:.1} GPUs, lag-1 autocorrelation {:.2}, decorrelates in about {} min",
            self.sd_gpus, self.lag1, self.decorrelation_minutes
        )
    }
}

fn round_to(value: u32, step: u32) -> u32 {
    value.div_ceil(step) * step
}

/// The noise of `demand` (GPUs a minute).
pub fn measure(demand: &[f64]) -> Noise {
    let n = demand.len();
    let mut sorted: Vec<f64> = demand.iter().copied().filter(|v| v.is_finite()).collect();
    sorted.sort_by(f64::total_cmp);
    let quantile = |q: f64| {
        if sorted.is_empty() {
            0.0
        } else {
            sorted[((sorted.len() - 1) as f64 * q).round() as usize]
        }
    };
    let median = quantile(0.5);
    let count = sorted.len().max(1) as f64;
    let mean_gpus = sorted.iter().sum::<f64>() / count;
    let sd_all = (sorted.iter().map(|v| (v - mean_gpus).powi(2)).sum::<f64>() / count).sqrt();
    let steady = n >= 1_440
        && mean_gpus > 0.0
        && sd_all <= STEADY_CV * mean_gpus
        && quantile(0.999) - median <= STEADY_TAIL_SDS * sd_all
        && median - quantile(0.001) <= STEADY_TAIL_SDS * sd_all;
    if n < 3 {
        return Noise {
            median_gpus: median,
            sd_gpus: 0.0,
            lag1: 0.0,
            decorrelation_minutes: 1,
            steady,
        };
    }
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0.0);
    for &gpus in demand {
        prefix.push(prefix.last().copied().unwrap_or(0.0) + gpus);
    }
    let half = LEVEL_MINUTES / 2;
    let residual: Vec<f64> = (0..n)
        .map(|t| {
            let (from, to) = (t.saturating_sub(half), (t + half + 1).min(n));
            demand[t] - (prefix[to] - prefix[from]) / (to - from) as f64
        })
        .collect();
    let mean = residual.iter().sum::<f64>() / n as f64;
    let centred: Vec<f64> = residual.iter().map(|r| r - mean).collect();
    let variance = centred.iter().map(|r| r * r).sum::<f64>() / n as f64;
    let acf = |lag: usize| {
        if variance <= 1e-12 || lag >= n {
            return 0.0;
        }
        let sum: f64 = centred[..n - lag]
            .iter()
            .zip(&centred[lag..])
            .map(|(a, b)| a * b)
            .sum();
        sum / (n - lag) as f64 / variance
    };
    let lag1 = acf(1);
    let threshold = (-1.0f64).exp();
    let decorrelation = (1..=MAX_LAG.min(n - 1))
        .find(|&lag| acf(lag) < threshold)
        .unwrap_or(MAX_LAG);
    Noise {
        median_gpus: median,
        sd_gpus: variance.sqrt(),
        lag1,
        decorrelation_minutes: decorrelation as u32,
        steady,
    }
}
