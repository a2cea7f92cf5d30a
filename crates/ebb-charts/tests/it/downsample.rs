//! M4 keeps every spike a chart must show, within its budget.

use ebb_charts::downsample::{Point, column_of, m4};
use proptest::prelude::*;

/// Time-ordered points (repeated times allowed) with values in 0-100 and the odd spike.
fn series() -> impl Strategy<Value = Vec<Point>> {
    prop::collection::vec(
        (
            0i64..50,
            prop_oneof![8 => 0f32..100.0, 1 => Just(1e6f32), 1 => Just(-1e6f32)],
            0f32..20.0,
        ),
        0..2_000,
    )
    .prop_map(|steps| {
        let mut t_ms = 1_700_000_000_000i64;
        steps
            .into_iter()
            .map(|(step, value, spread)| {
                t_ms += step;
                Point {
                    t_ms,
                    min: value - spread,
                    avg: value,
                    max: value + spread,
                }
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn every_column_keeps_its_extremes_first_and_last(
        points in series(),
        columns in 1u32..300,
        from_cut in 0usize..100,
        to_cut in 0usize..100,
    ) {
        let (from_ms, to_ms) = match (points.first(), points.last()) {
            (Some(first), Some(last)) => (
                first.t_ms + from_cut as i64,
                (last.t_ms - to_cut as i64).max(first.t_ms + from_cut as i64),
            ),
            _ => (0, 1_000),
        };
        let kept = m4(&points, from_ms, to_ms, columns);
        let in_range = points.iter().filter(|p| p.t_ms >= from_ms && p.t_ms <= to_ms).count();
        if in_range <= 4 * columns as usize {
            prop_assert_eq!(kept.len(), in_range, "a series within budget is kept whole");
        }
        prop_assert!(kept.len() <= 4 * columns as usize, "{} > 4 × {columns}", kept.len());
        prop_assert!(kept.is_sorted_by_key(|point| point.t_ms));
        // Every kept point is an input point in range.
        for point in &kept {
            prop_assert!(points.contains(point));
            prop_assert!(point.t_ms >= from_ms && point.t_ms <= to_ms);
        }
        // Per column: the highest max, the lowest min, the first and last time survive.
        let mut by_column: std::collections::BTreeMap<u32, Vec<&Point>> = Default::default();
        for point in &points {
            if let Some(column) = column_of(point.t_ms, from_ms, to_ms, columns) {
                by_column.entry(column).or_default().push(point);
            }
        }
        for (column, inputs) in by_column {
            let outputs: Vec<&Point> = kept
                .iter()
                .filter(|point| column_of(point.t_ms, from_ms, to_ms, columns) == Some(column))
                .collect();
            let top = inputs.iter().map(|p| p.max).fold(f32::MIN, f32::max);
            let bottom = inputs.iter().map(|p| p.min).fold(f32::MAX, f32::min);
            prop_assert!(outputs.iter().any(|p| p.max == top), "column {column} lost its max {top}");
            prop_assert!(outputs.iter().any(|p| p.min == bottom), "column {column} lost its min {bottom}");
            prop_assert_eq!(outputs.first().map(|p| p.t_ms), inputs.first().map(|p| p.t_ms));
            prop_assert_eq!(outputs.last().map(|p| p.t_ms), inputs.last().map(|p| p.t_ms));
            prop_assert!(outputs.len() <= 4 || in_range <= 4 * columns as usize);
        }
    }
}

#[test]
fn a_day_of_seconds_fits_a_chart_and_keeps_its_one_second_spike() {
    let from_ms = 1_700_000_000_000;
    let points: Vec<Point> = (0..86_400)
        .map(|second| {
            let value = if second == 51_234 {
                100.0
            } else {
                10.0 + (second % 7) as f32
            };
            Point::single(from_ms + second * 1000, value)
        })
        .collect();
    let kept = m4(&points, from_ms, from_ms + 86_400_000 - 1, 800);
    assert!(kept.len() <= 3_200);
    assert!(kept.iter().any(|point| point.max == 100.0));
}
