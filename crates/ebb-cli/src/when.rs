//! Times and durations as `ebb` prints them: RFC 3339 in the operator's local time (or UTC
//! with `--utc`), durations in words. `--json` keeps epoch milliseconds.

use chrono::{Local, SecondsFormat, TimeZone, Utc};
use std::sync::atomic::{AtomicBool, Ordering};

static UTC: AtomicBool = AtomicBool::new(false);

/// `--utc`: print times in UTC rather than local time.
pub fn set_utc(utc: bool) {
    UTC.store(utc, Ordering::Relaxed);
}

/// Epoch milliseconds as RFC 3339 to the second: `2026-12-04T23:11:48+08:00`, or
/// `2026-12-04T15:11:48Z` with `--utc`.
pub fn time(ms: i64) -> String {
    format_time(ms, UTC.load(Ordering::Relaxed))
}

/// [`time`], UTC or local as asked.
fn format_time(ms: i64, in_utc: bool) -> String {
    if in_utc {
        return utc(ms);
    }
    match Local.timestamp_millis_opt(ms).single() {
        Some(at) => at.to_rfc3339_opts(SecondsFormat::Secs, true),
        None => utc(ms),
    }
}

fn utc(ms: i64) -> String {
    Utc.timestamp_millis_opt(ms).single().map_or_else(
        || format!("{ms} ms"),
        |at| at.to_rfc3339_opts(SecondsFormat::Secs, true),
    )
}

/// A duration in words: `45 s`, `3 min 20 s`, `2 h 5 min`, `3 d 4 h`.
pub fn duration(ms: i64) -> String {
    let s = ms.max(0) / 1_000;
    let (d, h, m, s) = (s / 86_400, s / 3_600 % 24, s / 60 % 60, s % 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{s} s"),
        (0, 0, _) if s == 0 => format!("{m} min"),
        (0, 0, _) => format!("{m} min {s} s"),
        (0, _, 0) => format!("{h} h"),
        (0, _, _) => format!("{h} h {m} min"),
        (_, 0, _) => format!("{d} d"),
        _ => format!("{d} d {h} h"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_rfc_3339_and_durations_words() {
        assert_eq!(format_time(1_796_280_012_000, true), "2026-12-03T06:40:12Z");
        let local = format_time(1_796_280_012_000, false);
        assert!(
            chrono::DateTime::parse_from_rfc3339(&local).is_ok(),
            "{local} is RFC 3339"
        );
        assert_eq!(duration(45_000), "45 s");
        assert_eq!(duration(200_000), "3 min 20 s");
        assert_eq!(duration(180_000), "3 min");
        assert_eq!(duration(7_500_000), "2 h 5 min");
        assert_eq!(duration(3 * 86_400_000 + 4 * 3_600_000 + 1_000), "3 d 4 h");
        assert_eq!(duration(-5), "0 s");
    }
}
