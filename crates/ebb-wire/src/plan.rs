//! The billing vocabulary's closed sets: a base's term, the overlay modes, the plans the
//! comparison prices. Defined here once; `ebb-cost` prices them, the UI words them.

use serde::{Deserialize, Serialize};
use specta::Type;
use std::fmt;
use std::str::FromStr;

/// Hours in a billing month.
pub const HOURS_PER_MONTH: u32 = 730;
/// Hours in a billing year.
pub const HOURS_PER_YEAR: u32 = 8_760;

/// The subscription term of a pool's base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum Term {
    /// 730 hours at the `month` price.
    #[default]
    Month,
    /// 8,760 hours at the `year` price.
    Year,
}

/// How the GPUs above the base are paid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, Type)]
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

/// The plans compared, in the order they are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum PlanKind {
    /// Every GPU up to the peak on subscription.
    AllSubscribed,
    /// Every GPU-hour on demand by the hour.
    AllHourly,
    /// Every GPU on demand, each GPU's busy hours paid in the cheapest mix of hour, day and
    /// week units.
    AllOnDemandBestUnit,
    /// The optimal base on subscription, the rest by the hour.
    BaseHourly,
    /// The best base for a day overlay, the rest by the day.
    BaseDaily,
    /// The best base for a week overlay, the rest by the week.
    BaseWeekly,
    /// The hourly optimum's base, and the rest reserved for the window in which demand
    /// exceeds it.
    BaseReserved,
    /// The best base for a spot overlay, the rest at spot prices (interruptible pools).
    BaseSpot,
}

impl Term {
    /// Every term, in the order a form offers them.
    pub const ALL: [Term; 2] = [Term::Month, Term::Year];

    /// Hours in one term.
    pub const fn hours(self) -> u32 {
        match self {
            Term::Month => HOURS_PER_MONTH,
            Term::Year => HOURS_PER_YEAR,
        }
    }

    /// The catalog field that prices it (also its wire word).
    pub const fn field(self) -> &'static str {
        match self {
            Term::Month => "month",
            Term::Year => "year",
        }
    }
}

impl OverlayMode {
    /// Every overlay mode, in the order a form offers them.
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

    /// Its wire word.
    pub const fn word(self) -> &'static str {
        match self {
            OverlayMode::Hour => "hour",
            OverlayMode::Day => "day",
            OverlayMode::Week => "week",
            OverlayMode::Spot => "spot",
        }
    }
}

impl PlanKind {
    /// Shown in this order.
    pub const ALL: [PlanKind; 8] = [
        PlanKind::AllSubscribed,
        PlanKind::AllHourly,
        PlanKind::AllOnDemandBestUnit,
        PlanKind::BaseHourly,
        PlanKind::BaseDaily,
        PlanKind::BaseWeekly,
        PlanKind::BaseReserved,
        PlanKind::BaseSpot,
    ];

    /// Its wire word.
    pub const fn word(self) -> &'static str {
        match self {
            PlanKind::AllSubscribed => "all_subscribed",
            PlanKind::AllHourly => "all_hourly",
            PlanKind::AllOnDemandBestUnit => "all_on_demand_best_unit",
            PlanKind::BaseHourly => "base_hourly",
            PlanKind::BaseDaily => "base_daily",
            PlanKind::BaseWeekly => "base_weekly",
            PlanKind::BaseReserved => "base_reserved",
            PlanKind::BaseSpot => "base_spot",
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.field())
    }
}

impl fmt::Display for OverlayMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

impl fmt::Display for PlanKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// Fen in yuan with two decimals and thousands grouped, e.g. `¥1,234.50` (the one money
/// format of logs and the CLI).
pub fn yuan(fen: i64) -> String {
    let sign = if fen < 0 { "-" } else { "" };
    let fen = fen.unsigned_abs();
    let whole = (fen / 100).to_string();
    let mut grouped = String::with_capacity(whole.len() + whole.len() / 3);
    for (i, digit) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("{sign}¥{grouped}.{:02}", fen % 100)
}

/// A word that is not a mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownMode {
    what: &'static str,
    given: String,
    expected: &'static str,
}

impl fmt::Display for UnknownMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown {} `{}`: expected {}",
            self.what, self.given, self.expected
        )
    }
}

impl std::error::Error for UnknownMode {}

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

/// GPU-hours paid for, by mode. Subscriptions count the series' hours; day and week units
/// count their full 24 or 168 hours (a unit bought near the end may run past the series).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, Type)]
pub struct PaidGpuHours {
    /// Subscribed GPUs times the series' hours.
    pub subscribed: u64,
    /// Hour units bought.
    pub hour: u64,
    /// Day units bought, times 24.
    pub day: u64,
    /// Week units bought, times 168.
    pub week: u64,
    /// Spot hours bought.
    pub spot: u64,
    /// Reserved GPUs times the window's hours.
    pub reserved: u64,
}

impl PaidGpuHours {
    /// Every paid GPU-hour.
    pub fn total(&self) -> u64 {
        self.subscribed + self.hour + self.day + self.week + self.spot + self.reserved
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_through_serde_and_from_str() {
        for term in Term::ALL {
            let json = serde_json::to_string(&term).unwrap();
            assert_eq!(json, format!("\"{term}\""));
            assert_eq!(term.to_string().parse::<Term>().unwrap(), term);
        }
        for mode in OverlayMode::ALL {
            let json = serde_json::to_string(&mode).unwrap();
            assert_eq!(json, format!("\"{mode}\""));
            assert_eq!(mode.to_string().parse::<OverlayMode>().unwrap(), mode);
        }
        for kind in PlanKind::ALL {
            assert_eq!(serde_json::to_string(&kind).unwrap(), format!("\"{kind}\""));
        }
        assert_eq!(
            "fortnight".parse::<OverlayMode>().unwrap_err().to_string(),
            "unknown overlay mode `fortnight`: expected hour, day, week or spot"
        );
    }
}

/// Why the comparison could not price a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SkipReason {
    /// Spot GPUs can be taken back, and the pool is not marked interruptible.
    NotInterruptible,
    /// The catalog entry has no price for the mode (`field` names the price it lacks).
    NotOffered {
        model: String,
        region: String,
        field: String,
    },
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::NotInterruptible => {
                f.write_str("the pool is not marked interruptible: spot GPUs can be taken back")
            }
            SkipReason::NotOffered {
                model,
                region,
                field,
            } => write!(f, "{model} in {region} has no `{field}` price"),
        }
    }
}
