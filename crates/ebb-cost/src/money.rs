//! Money as integer minor units (fen for CNY). Never a float.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An amount in fen (1/100 of a yuan). Serialized as the bare integer: JSON field names
/// carry the unit (`…_fen`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Money(i64);

impl Money {
    /// Nothing.
    pub const ZERO: Money = Money(0);
    /// The largest amount; what saturating arithmetic stops at.
    pub const MAX: Money = Money(i64::MAX);

    /// An amount of fen.
    pub const fn from_fen(fen: i64) -> Money {
        Money(fen)
    }

    /// A whole number of yuan, `None` if it does not fit.
    pub const fn from_yuan(yuan: i64) -> Option<Money> {
        match yuan.checked_mul(100) {
            Some(fen) => Some(Money(fen)),
            None => None,
        }
    }

    /// The amount in fen.
    pub const fn fen(self) -> i64 {
        self.0
    }

    /// `self + other`, `None` on overflow.
    pub const fn checked_add(self, other: Money) -> Option<Money> {
        match self.0.checked_add(other.0) {
            Some(fen) => Some(Money(fen)),
            None => None,
        }
    }

    /// `self - other`, `None` on overflow.
    pub const fn checked_sub(self, other: Money) -> Option<Money> {
        match self.0.checked_sub(other.0) {
            Some(fen) => Some(Money(fen)),
            None => None,
        }
    }

    /// `self * count`, `None` on overflow.
    pub const fn checked_mul(self, count: i64) -> Option<Money> {
        match self.0.checked_mul(count) {
            Some(fen) => Some(Money(fen)),
            None => None,
        }
    }

    /// `self + other`, stopping at the bounds.
    pub const fn saturating_add(self, other: Money) -> Money {
        Money(self.0.saturating_add(other.0))
    }

    /// `self - other`, stopping at the bounds.
    pub const fn saturating_sub(self, other: Money) -> Money {
        Money(self.0.saturating_sub(other.0))
    }

    /// `self * count`, stopping at the bounds.
    pub const fn saturating_mul(self, count: i64) -> Money {
        Money(self.0.saturating_mul(count))
    }

    /// An exact wide intermediate narrowed back, `None` if it does not fit.
    pub(crate) fn from_wide(fen: i128) -> Option<Money> {
        i64::try_from(fen).ok().map(Money)
    }

    /// `self * numerator / denominator`, rounded half away from zero to the fen.
    /// Used for run rates (a month's price per hour is `month / 730`).
    pub(crate) fn scaled(self, numerator: i128, denominator: i128) -> Option<Money> {
        Money::from_wide(div_round(i128::from(self.0) * numerator, denominator))
    }
}

/// `numerator / denominator` rounded half away from zero. `denominator > 0`.
pub(crate) fn div_round(numerator: i128, denominator: i128) -> i128 {
    debug_assert!(denominator > 0);
    let half = denominator / 2;
    if numerator >= 0 {
        (numerator + half) / denominator
    } else {
        -((-numerator + half) / denominator)
    }
}

/// `¥1,234.56`, `-¥0.05`.
impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&ebb_wire::plan::yuan(self.0))
    }
}

#[cfg(test)]
#[allow(clippy::inconsistent_digit_grouping)] // fen written yuan_fen: 12_50 is ¥12.50
mod tests {
    use super::*;

    #[test]
    fn display_groups_thousands_and_keeps_two_decimals() {
        let cases = [
            (0, "¥0.00"),
            (5, "¥0.05"),
            (123_456, "¥1,234.56"),
            (100_000, "¥1,000.00"),
            (12_000_000_00, "¥12,000,000.00"),
            (-5, "-¥0.05"),
            (-250_000_00, "-¥250,000.00"),
            (i64::MIN, "-¥92,233,720,368,547,758.08"),
        ];
        for (fen, text) in cases {
            assert_eq!(Money::from_fen(fen).to_string(), text);
        }
        assert_eq!(format!("{:>10}", Money::from_fen(150)), "     ¥1.50");
    }

    #[test]
    fn arithmetic_is_checked_or_saturating() {
        let max = Money::MAX;
        assert_eq!(max.checked_add(Money::from_fen(1)), None);
        assert_eq!(max.saturating_add(Money::from_fen(1)), max);
        assert_eq!(max.checked_mul(2), None);
        assert_eq!(Money::from_fen(-3).saturating_mul(i64::MAX).fen(), i64::MIN);
        assert_eq!(
            Money::from_fen(7).checked_sub(Money::from_fen(9)),
            Some(Money::from_fen(-2))
        );
        assert_eq!(Money::from_yuan(5_000), Some(Money::from_fen(500_000)));
        assert_eq!(Money::from_yuan(i64::MAX), None);
    }

    #[test]
    fn rounding_is_half_away_from_zero() {
        assert_eq!(div_round(5, 10), 1);
        assert_eq!(div_round(4, 10), 0);
        assert_eq!(div_round(-5, 10), -1);
        assert_eq!(div_round(-4, 10), 0);
        // A 5,000 yuan month is 684.93 fen an hour.
        assert_eq!(
            Money::from_fen(500_000).scaled(1, 730),
            Some(Money::from_fen(685))
        );
    }
}
