//! A pool's billing plan: a subscribed base and one overlay mode.

use crate::catalog::PriceEntry;
use crate::money::Money;
use crate::{CostError, HOURS_PER_MONTH, HOURS_PER_YEAR};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The subscription term of a pool's base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Term {
    /// 730 hours at the `month` price.
    #[default]
    Month,
    /// 8,760 hours at the `year` price.
    Year,
}

/// How the GPUs above the base are paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OverlayMode {
    /// On demand, per started hour.
    #[default]
    Hour,
    /// On demand, per started day.
    Day,
    /// On demand, per started week.
    Week,
    /// Spot, per started hour at the price in force; interruptible.
    Spot,
}

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

impl Term {
    /// Hours in one term.
    pub const fn hours(self) -> u32 {
        match self {
            Term::Month => HOURS_PER_MONTH,
            Term::Year => HOURS_PER_YEAR,
        }
    }

    /// The catalog field that prices it.
    pub const fn field(self) -> &'static str {
        match self {
            Term::Month => "month",
            Term::Year => "year",
        }
    }

    /// The price of one GPU for one term.
    pub fn price(self, entry: &PriceEntry) -> Result<Money, CostError> {
        match self {
            Term::Month => Ok(entry.month),
            Term::Year => entry.year.ok_or_else(|| not_offered(entry, "year")),
        }
    }

    /// `sub(H)`: one GPU subscribed over `hours`, whole terms: `price * ceil(H / term)`.
    pub fn subscription_for(self, entry: &PriceEntry, hours: usize) -> Result<Money, CostError> {
        let terms = hours.div_ceil(self.hours() as usize);
        self.price(entry)?
            .checked_mul(i64::try_from(terms).map_err(|_| CostError::Overflow)?)
            .ok_or(CostError::Overflow)
    }
}

impl OverlayMode {
    /// Every overlay mode.
    pub const ALL: [OverlayMode; 4] = [
        OverlayMode::Hour,
        OverlayMode::Day,
        OverlayMode::Week,
        OverlayMode::Spot,
    ];

    /// Hours in one paid unit.
    pub const fn unit_hours(self) -> u32 {
        match self {
            OverlayMode::Hour | OverlayMode::Spot => 1,
            OverlayMode::Day => 24,
            OverlayMode::Week => 168,
        }
    }

    /// The catalog field that prices it.
    pub const fn field(self) -> &'static str {
        match self {
            OverlayMode::Hour => "hour",
            OverlayMode::Day => "day",
            OverlayMode::Week => "week",
            OverlayMode::Spot => "spot_hour",
        }
    }

    /// The price of one unit now (spot: the current `spot_hour`).
    pub fn price(self, entry: &PriceEntry) -> Result<Money, CostError> {
        let price = match self {
            OverlayMode::Hour => Some(entry.hour),
            OverlayMode::Day => entry.day,
            OverlayMode::Week => entry.week,
            OverlayMode::Spot => entry.spot_hour,
        };
        price.ok_or_else(|| not_offered(entry, self.field()))
    }
}

pub(crate) fn not_offered(entry: &PriceEntry, field: &'static str) -> CostError {
    CostError::NotOffered {
        model: entry.model.clone(),
        region: entry.region.clone(),
        field,
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field())
    }
}

impl fmt::Display for OverlayMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OverlayMode::Hour => "hour",
            OverlayMode::Day => "day",
            OverlayMode::Week => "week",
            OverlayMode::Spot => "spot",
        })
    }
}

/// A word that is not a mode.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{given}`: expected {expected}")]
pub struct UnknownMode {
    what: &'static str,
    given: String,
    expected: &'static str,
}

impl FromStr for Term {
    type Err = UnknownMode;
    fn from_str(text: &str) -> Result<Term, UnknownMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "month" | "monthly" => Ok(Term::Month),
            "year" | "yearly" => Ok(Term::Year),
            _ => Err(UnknownMode {
                what: "subscription term",
                given: text.to_string(),
                expected: "month or year",
            }),
        }
    }
}

impl FromStr for OverlayMode {
    type Err = UnknownMode;
    fn from_str(text: &str) -> Result<OverlayMode, UnknownMode> {
        match text.trim().to_ascii_lowercase().as_str() {
            "hour" | "hourly" => Ok(OverlayMode::Hour),
            "day" | "daily" => Ok(OverlayMode::Day),
            "week" | "weekly" => Ok(OverlayMode::Week),
            "spot" | "spot_hour" => Ok(OverlayMode::Spot),
            _ => Err(UnknownMode {
                what: "overlay mode",
                given: text.to_string(),
                expected: "hour, day, week or spot",
            }),
        }
    }
}
