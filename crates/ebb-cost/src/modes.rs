//! A pool's billing plan: a subscribed base and one overlay mode.

use crate::CostError;
use crate::catalog::PriceEntry;
use crate::money::Money;
pub use ebb_wire::plan::{OverlayMode, Term, UnknownMode};
use serde::{Deserialize, Serialize};

/// A pool's plan: `base_gpus` on subscription for `term`, the rest on `overlay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct PoolPlan {
    /// GPUs on subscription, paid whether used or not.
    pub base_gpus: u32,
    /// The base's term.
    pub term: Term,
    /// How GPUs above the base are paid.
    pub overlay: OverlayMode,
}

/// What a term or an overlay mode costs under a catalog entry.
pub trait Priced: Copy {
    /// The price of one unit (a term; an overlay's paid unit, spot at the current
    /// `spot_hour`).
    fn price(self, entry: &PriceEntry) -> Result<Money, CostError>;
}

impl Priced for Term {
    fn price(self, entry: &PriceEntry) -> Result<Money, CostError> {
        match self {
            Term::Month => Ok(entry.month),
            Term::Year => entry.year.ok_or_else(|| not_offered(entry, "year")),
        }
    }
}

impl Priced for OverlayMode {
    fn price(self, entry: &PriceEntry) -> Result<Money, CostError> {
        let price = match self {
            OverlayMode::Hour => Some(entry.hour),
            OverlayMode::Day => entry.day,
            OverlayMode::Week => entry.week,
            OverlayMode::Spot => entry.spot_hour,
        };
        price.ok_or_else(|| not_offered(entry, self.field()))
    }
}

/// `sub(H)`: one GPU subscribed for `term` over `hours`, whole terms: `price * ceil(H / term)`.
pub fn subscription_for(term: Term, entry: &PriceEntry, hours: usize) -> Result<Money, CostError> {
    let terms = hours.div_ceil(term.hours() as usize);
    term.price(entry)?
        .checked_mul(i64::try_from(terms).map_err(|_| CostError::Overflow)?)
        .ok_or(CostError::Overflow)
}

pub(crate) fn not_offered(entry: &PriceEntry, field: &'static str) -> CostError {
    CostError::NotOffered {
        model: entry.model.clone(),
        region: entry.region.clone(),
        field,
    }
}
