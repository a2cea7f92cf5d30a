//! Ebb's cost engine: the price catalog, the slider's live preview, plan comparison over a
//! demand series and the recommended base commitment.
//!
//! Pure: values in, values out. No IO, no clock, no async; money is integer fen
//! ([`Money`]), never a float sum. The billing rules are PRODUCT.md's "billing model";
//! where it is silent, `CATALOG.md` beside this crate says what was decided.
//!
//! - [`parse_catalog`] → [`Catalog`] (+ warnings) or [`InvalidCatalog`] (every problem).
//! - [`preview`] / [`run_rate`]: a pool's cost per hour, day and month at a GPU count;
//!   [`placed_preview`] / [`placed_run_rate`] / [`PricedPool`]: the same with each GPU priced
//!   in its own region (a placement across regions).
//! - [`month_spend`]: a pool's month to date from its lease history, and the projection.
//! - [`DemandSeries::from_csv`] → [`compare_plans`] → [`Comparison`] with its
//!   [`Recommendation`]; [`optimal_base`] alone is the fast exact base optimum.

mod catalog;
mod demand;
mod modes;
mod money;
mod plan;
mod preview;
mod spend;

pub use catalog::{
    CURRENCY, Catalog, DEMO_CATALOG, EntryRef, InvalidCatalog, PriceEntry, Problem, SpotPoint,
    Validated, parse_catalog,
};
pub use demand::{DemandError, DemandSeries, MAX_GPUS, MAX_HOURS, Resolution};
pub use modes::{OverlayMode, PoolPlan, Priced, Term, UnknownMode, subscription_for};
pub use money::Money;
pub use plan::{
    BaseOptimum, BreakEven, CheaperOverlay, Comparison, PaidGpuHours, PlanCost, PlanKind,
    PlanOptions, Recommendation, ReservedWindow, SkipReason, SkippedPlan, compare_plans,
    optimal_base, plan_cost,
};
pub use preview::{
    Preview, PricedPool, Rates, RunRate, placed_preview, placed_run_rate, preview, run_rate,
};
pub use spend::{
    LeaseSpan, Spend, SpendSplit, SpendWindow, SpotSpend, month_spend, placed_month_spend,
    spot_month_spend,
};

pub use ebb_wire::plan::{HOURS_PER_MONTH, HOURS_PER_YEAR};

/// Why a figure could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CostError {
    /// The catalog has no entry for this model and region.
    #[error("no price for `{model}` in `{region}`; the catalog prices: {available}")]
    NoPrice {
        /// As asked.
        model: String,
        /// As asked.
        region: String,
        /// Every "model in region" the catalog has.
        available: String,
    },
    /// The entry exists but has no price for the mode asked for.
    #[error("{model} in {region} has no `{field}` price, so that mode is not offered there")]
    NotOffered {
        /// The entry's model.
        model: String,
        /// The entry's region.
        region: String,
        /// The missing catalog field.
        field: &'static str,
    },
    /// A demand series needs at least one hour.
    #[error("the demand series is empty")]
    EmptyDemand,
    /// A demand series longer than [`MAX_HOURS`].
    #[error("the demand series has {hours} hours, more than the {MAX_HOURS} (ten years) accepted")]
    DemandTooLong {
        /// Its length.
        hours: usize,
    },
    /// An hour needing more than [`MAX_GPUS`].
    #[error("an hour needs {gpus} GPUs, more than the {MAX_GPUS} accepted")]
    DemandTooLarge {
        /// The demand.
        gpus: u32,
    },
    /// A figure does not fit in 64-bit fen.
    #[error("the figures are too large to compute exactly")]
    Overflow,
}
