//! Long series cut down to what a chart can show. Pure: values in, values out.
//!
//! The method is M4 (Jugel et al., VLDB 2014): split the time range into pixel columns and
//! keep, per column, the first, the last, the lowest and the highest point. A line drawn
//! through them covers the same pixels as the line through every point, so every spike
//! survives; LTTB, which picks points by triangle area, may drop one.

use serde::Serialize;

/// One point of a chart series: one reading (`min == avg == max`) or a bucket of readings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Point {
    pub t_ms: i64,
    pub min: f32,
    pub avg: f32,
    pub max: f32,
}

impl Point {
    /// A single reading.
    pub fn single(t_ms: i64, value: f32) -> Self {
        Self {
            t_ms,
            min: value,
            avg: value,
            max: value,
        }
    }
}

/// The column of `t_ms` when `[from_ms, to_ms]` is split into `columns` equal columns:
/// `floor((t - from) * columns / (to - from + 1))`. `None` outside the range.
pub fn column_of(t_ms: i64, from_ms: i64, to_ms: i64, columns: u32) -> Option<u32> {
    if columns == 0 || t_ms < from_ms || t_ms > to_ms {
        return None;
    }
    let offset = i128::from(t_ms) - i128::from(from_ms);
    let span = i128::from(to_ms) - i128::from(from_ms) + 1;
    Some((offset * i128::from(columns) / span) as u32)
}

/// M4: at most `4 * columns` points of `points` in `[from_ms, to_ms]`, in time order: per
/// column the first and last point, the one with the lowest `min` and the one with the
/// highest `max` (a point that is several of these is kept once). Points outside the range
/// are left out. Input in time order is read in one pass; other input is sorted first.
pub fn m4(points: &[Point], from_ms: i64, to_ms: i64, columns: u32) -> Vec<Point> {
    if columns == 0 || from_ms > to_ms {
        return Vec::new();
    }
    if !points.is_sorted_by_key(|point| point.t_ms) {
        let mut sorted = points.to_vec();
        sorted.sort_by_key(|point| point.t_ms);
        return m4(&sorted, from_ms, to_ms, columns);
    }
    let start = points.partition_point(|point| point.t_ms < from_ms);
    let end = points.partition_point(|point| point.t_ms <= to_ms);
    let in_range = &points[start..end];
    if in_range.len() <= 4 * columns as usize {
        return in_range.to_vec();
    }
    let span = i128::from(to_ms) - i128::from(from_ms) + 1;
    // The first time of column `c` is `from + ceil(c * span / columns)`, which makes a
    // point's column exactly `column_of`; walking the boundaries avoids a division a point.
    let column_start = |column: u32| -> i128 {
        let scaled = i128::from(column) * span;
        i128::from(from_ms) + (scaled + i128::from(columns) - 1) / i128::from(columns)
    };
    let mut kept = Vec::with_capacity(4 * columns as usize);
    let mut column = 0u32;
    let mut next_start = column_start(1);
    let mut first = 0usize;
    while first < in_range.len() {
        let t_ms = i128::from(in_range[first].t_ms);
        while t_ms >= next_start {
            column += 1;
            next_start = column_start(column + 1);
        }
        // The points of this column are first..last (inclusive).
        let mut last = first;
        let (mut lowest, mut highest) = (first, first);
        let mut index = first + 1;
        while index < in_range.len() && i128::from(in_range[index].t_ms) < next_start {
            let point = &in_range[index];
            if point.min < in_range[lowest].min {
                lowest = index;
            }
            if point.max > in_range[highest].max {
                highest = index;
            }
            last = index;
            index += 1;
        }
        let mut picked = [first, lowest, highest, last];
        picked.sort_unstable();
        let mut previous = None;
        for index in picked {
            if previous != Some(index) {
                kept.push(in_range[index]);
                previous = Some(index);
            }
        }
        first = last + 1;
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(points: &[Point]) -> Vec<f32> {
        points.iter().map(|point| point.avg).collect()
    }

    #[test]
    fn short_series_pass_through() {
        let points: Vec<Point> = (0..8).map(|t| Point::single(t, t as f32)).collect();
        assert_eq!(m4(&points, 0, 7, 2), points);
    }

    #[test]
    fn keeps_first_lowest_highest_last_of_each_column() {
        // Two columns of five points each over 0..=9.
        let series = [5.0, 1.0, 9.0, 4.0, 6.0, 3.0, 3.0, -2.0, 8.0, 3.5];
        let points: Vec<Point> = series
            .iter()
            .enumerate()
            .map(|(t, value)| Point::single(t as i64, *value))
            .collect();
        let kept = m4(&points, 0, 9, 1);
        assert_eq!(values(&kept), vec![5.0, 9.0, -2.0, 3.5]);
        let kept = m4(&points, 0, 9, 2);
        assert_eq!(values(&kept), vec![5.0, 1.0, 9.0, 6.0, 3.0, -2.0, 8.0, 3.5]);
    }

    #[test]
    fn buckets_keep_their_envelope() {
        let points: Vec<Point> = (0..100)
            .map(|t| Point {
                t_ms: t,
                min: 40.0,
                avg: 50.0,
                max: if t == 37 { 99.0 } else { 60.0 },
            })
            .collect();
        let kept = m4(&points, 0, 99, 1);
        assert!(kept.iter().any(|point| point.max == 99.0));
        assert!(kept.len() <= 4);
    }

    #[test]
    fn leaves_out_points_outside_the_range_and_sorts_unsorted_input() {
        let points = [
            Point::single(30, 3.0),
            Point::single(-5, 9.0),
            Point::single(10, 1.0),
            Point::single(20, 2.0),
        ];
        assert_eq!(values(&m4(&points, 0, 25, 10)), vec![1.0, 2.0]);
        assert!(m4(&points, 0, 25, 0).is_empty());
        assert!(m4(&points, 30, 0, 4).is_empty());
    }

    #[test]
    fn column_of_splits_the_range_evenly() {
        assert_eq!(column_of(0, 0, 99, 4), Some(0));
        assert_eq!(column_of(24, 0, 99, 4), Some(0));
        assert_eq!(column_of(25, 0, 99, 4), Some(1));
        assert_eq!(column_of(99, 0, 99, 4), Some(3));
        assert_eq!(column_of(100, 0, 99, 4), None);
        assert_eq!(column_of(i64::MAX, i64::MIN, i64::MAX, 3), Some(2));
    }
}
