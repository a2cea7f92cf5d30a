//! The UTC calendar, pure: days since 1970-01-01 to and from (year, month, day), a
//! month's bounds, a timestamp in words. One copy for the charts' labels and the pools'
//! spend months. Time is a parameter; the clock is read in `ebb_core::clock`.

/// The UTC calendar month holding `now_ms`: its name and its bounds.
pub fn utc_month(now_ms: i64) -> (String, i64, i64) {
    let days = now_ms.div_euclid(86_400_000);
    let (year, month, _) = civil_from_days(days);
    let start = days_from_civil(year, month, 1) * 86_400_000;
    let (next_year, next_month) = if month == 12 {
        (year + 1, 1)
    } else {
        (year, month + 1)
    };
    let end = days_from_civil(next_year, next_month, 1) * 86_400_000;
    (format!("{year:04}-{month:02}"), start, end)
}

/// The UTC calendar month named `YYYY-MM` (`2026-11`): its bounds; `None` for anything
/// else.
pub fn utc_month_named(month: &str) -> Option<(i64, i64)> {
    let (year, number) = month.split_once('-')?;
    let digits =
        |text: &str, len: usize| text.len() == len && text.bytes().all(|b| b.is_ascii_digit());
    if !digits(year, 4) || !digits(number, 2) {
        return None;
    }
    let year: i64 = year.parse().ok()?;
    let number: u32 = number.parse().ok()?;
    if !(1..=12).contains(&number) {
        return None;
    }
    let (_, start, end) = utc_month(days_from_civil(year, number, 1) * 86_400_000);
    Some((start, end))
}

/// `2026-12-03 06:40:12Z`.
pub fn utc_time(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let second = ms.rem_euclid(86_400_000) / 1000;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}Z",
        second / 3600,
        second / 60 % 60,
        second % 60
    )
}

/// (year, month, day) of a count of days since 1970-01-01 (Howard Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Days since 1970-01-01 of a (year, month, day).
pub fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let month = i64::from(month);
    let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_round_trip_known_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_675), (2023, 11, 14));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn months_and_times_in_utc() {
        // 2026-12-03 06:40:12 UTC.
        let ms = 1_796_280_012_000;
        assert_eq!(utc_time(ms), "2026-12-03 06:40:12Z");
        let (name, start, end) = utc_month(ms);
        assert_eq!(name, "2026-12");
        assert_eq!(utc_time(start), "2026-12-01 00:00:00Z");
        assert_eq!(utc_time(end), "2027-01-01 00:00:00Z");
        for days in [-800_000, -1, 0, 11_016, 19_675, 800_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn a_month_by_its_name() {
        let (start, end) = utc_month_named("2026-11").unwrap();
        assert_eq!(utc_time(start), "2026-11-01 00:00:00Z");
        assert_eq!(utc_time(end), "2026-12-01 00:00:00Z");
        let (start, end) = utc_month_named("2024-02").unwrap();
        assert_eq!((end - start) / 86_400_000, 29, "a leap February");
        for bad in [
            "",
            "2026",
            "2026-13",
            "2026-00",
            "2026-1",
            "26-11",
            "2026/11",
            "2026-11-01",
            "２０２６-11",
        ] {
            assert_eq!(utc_month_named(bad), None, "{bad}");
        }
    }
}
