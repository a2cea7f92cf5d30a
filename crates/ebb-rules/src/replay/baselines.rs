//! The policies every replay is read against: `static-peak` (no elasticity), the seed's
//! rule `seed-80-30`, Kubernetes' `hpa`, and the perfect-foresight `oracle`.

use super::billing::unit_minutes;
use super::oracle::Oracle;
use super::trace::Trace;
use crate::policy::{MinuteView, Policy};
use ebb_cost::OverlayMode;

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
    /// A rule-set baseline whose adapter is not built yet.
    #[error(
        "the `{0}` baseline needs the rules engine's policy adapter, which is not available yet"
    )]
    NotAvailable(String),
}

/// The baseline called `name` for `trace` (the oracle looks ahead `warmup_minutes` and pays
/// per started unit of `overlay`).
pub fn baseline(
    name: &str,
    trace: &Trace,
    warmup_minutes: u32,
    overlay: OverlayMode,
) -> Result<Box<dyn Policy>, BaselineError> {
    match name {
        "static-peak" => Ok(Box::new(StaticPeak::new(trace))),
        "oracle" => Ok(Box::new(Oracle::new(
            trace.demand(),
            warmup_minutes,
            unit_minutes(overlay),
        ))),
        "seed-80-30" | "hpa" => Err(BaselineError::NotAvailable(name.to_string())),
        other => Err(BaselineError::Unknown(other.to_string())),
    }
}
