//! A pool's own chart: desired as a step line, ready as a step line, the GPUs warming
//! (asked for, not granted yet) as a band above ready, for a pool bound to a Slurm
//! partition its queue (the GPUs its jobs ask for or hold) as a dashed step line beside
//! them, and the held GPUs' mean utilization in a panel of its own below. The legend has its column right of both
//! panels, as the host charts', so it never covers a line. Each rule decision of the range
//! is marked on the utilization panel at its time (▲ out, ▼ in, ◆ held; hollow in shadow
//! mode), and its place in the image is returned beside the SVG for the UI to lay a
//! button over.

use super::*;
use crate::history::PoolSample;
use ebb_wire::pools::{ActivityEntry, Actor, DecisionMark};
use ebb_wire::reasons::ChangeReason;
use std::cmp::Ordering;

/// The legend's words (the viewer's language).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolChartLabels<'a> {
    pub desired: &'a str,
    pub ready: &'a str,
    pub warming: &'a str,
    pub util: &'a str,
    /// The queue's line (shown only when there is a queue).
    pub queue: &'a str,
    /// Spot reclaims' marks (shown only when there is one).
    pub reclaimed: &'a str,
    /// Spot paused and resumed lines (shown only when there is one).
    pub spot_paused: &'a str,
}

/// A spot event on the pool's chart: a reclaim of one of its leases (its replacement
/// ordered at once), or its model's spot paused or resumed in one of its regions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpotMark {
    Reclaimed,
    Paused,
    Resumed,
}

/// The spot events among `entries` in `from_ms..=to_ms`, oldest first (pure).
pub fn spot_marks_in(entries: &[ActivityEntry], from_ms: i64, to_ms: i64) -> Vec<(i64, SpotMark)> {
    let mut out: Vec<(i64, SpotMark)> = entries
        .iter()
        .filter(|entry| (from_ms..=to_ms).contains(&entry.at_ms))
        .filter_map(|entry| {
            let mark = match entry.reason {
                ChangeReason::Reclaimed { .. } => SpotMark::Reclaimed,
                ChangeReason::SpotPaused { .. } => SpotMark::Paused,
                ChangeReason::SpotResumed { .. } => SpotMark::Resumed,
                _ => return None,
            };
            Some((entry.at_ms, mark))
        })
        .collect();
    out.sort_by_key(|(at, _)| *at);
    out
}

/// A count as a step line over `from_ms..=to_ms`: each value holds until the next look,
/// the last until `to_ms` (pure).
pub fn steps(
    samples: &[PoolSample],
    to_ms: i64,
    value: impl Fn(&PoolSample) -> f64,
) -> Vec<(f64, f64)> {
    step_line(
        samples.iter().map(|sample| (sample.at_ms, value(sample))),
        to_ms,
    )
}

/// Timed values as a step line: each holds until the next, the last until `to_ms` (pure).
pub fn step_line(points: impl ExactSizeIterator<Item = (i64, f64)>, to_ms: i64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2 + 1);
    for (n, (at_ms, v)) in points.enumerate() {
        let t = at_ms as f64;
        if n > 0 {
            out.push((t, out.last().map_or(v, |&(_, before)| before)));
        }
        out.push((t, v));
    }
    if let Some(&(t, v)) = out.last()
        && (t as i64) < to_ms
    {
        out.push((to_ms as f64, v));
    }
    out
}

/// A rule decision to mark on the chart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decided<'a> {
    pub entry: &'a ActivityEntry,
    /// Shadow mode: nothing changed.
    pub shadow: bool,
    /// A clamp kept the count.
    pub held: bool,
    /// Which way the rules wanted the count to go (`Equal`: a bound or nothing).
    pub direction: Ordering,
}

/// The rule decisions among `entries` (actor `rule`, reason `rule_decision`) inside
/// `from_ms..=to_ms`, oldest first (pure).
pub fn decisions_in(entries: &[ActivityEntry], from_ms: i64, to_ms: i64) -> Vec<Decided<'_>> {
    let mut out: Vec<Decided<'_>> = entries
        .iter()
        .filter(|entry| entry.actor == Actor::Rule && (from_ms..=to_ms).contains(&entry.at_ms))
        .filter_map(|entry| match &entry.reason {
            ChangeReason::RuleDecision { decision, shadow } => {
                let held = entry.from == entry.to;
                let direction = if held {
                    decision.recommended_gpus.cmp(&decision.current_gpus)
                } else {
                    entry.to.cmp(&entry.from)
                };
                Some(Decided {
                    entry,
                    shadow: *shadow,
                    held,
                    direction,
                })
            }
            _ => None,
        })
        .collect();
    out.sort_by_key(|decided| (decided.entry.at_ms, decided.entry.id));
    out
}

/// The utilization the chart's line shows at `at_ms` (pure): between two looks with a
/// reading, on the straight line joining them; after the last, its reading; in a gap, none.
fn util_at(samples: &[PoolSample], at_ms: i64) -> Option<f64> {
    let after = samples.partition_point(|sample| sample.at_ms <= at_ms);
    let before = samples.get(after.checked_sub(1)?)?;
    let value = |sample: &PoolSample| sample.util_pct.map(|pct| f64::from(pct).clamp(0.0, 100.0));
    let at_before = value(before)?;
    match samples
        .get(after)
        .and_then(|next| Some((next.at_ms, value(next)?)))
    {
        Some((next_ms, at_next)) if next_ms > before.at_ms => {
            let share = (at_ms - before.at_ms) as f64 / (next_ms - before.at_ms) as f64;
            Some(at_before + (at_next - at_before) * share)
        }
        _ => Some(at_before),
    }
}

/// A mark's half size, in pixels.
const MARK_PX: i32 = 6;

/// The pool chart as SVG (no decision marks).
pub fn pool_svg(
    spec: &RangeChartSpec<'_>,
    labels: &PoolChartLabels<'_>,
    samples: &[PoolSample],
) -> Result<String, ChartError> {
    pool_chart(spec, labels, samples, &[], &[]).map(|(svg, _)| svg)
}

/// The pool chart as SVG with the rule decisions among `entries` marked on the utilization
/// panel, and where each mark is in the image (pure). `queue`: a Slurm-bound pool's queue
/// (when, GPUs asked for or held), oldest first; empty for any other pool.
#[allow(
    clippy::too_many_lines,
    reason = "one chart's layers drawn in order; to be split into layer functions"
)]
pub fn pool_chart(
    spec: &RangeChartSpec<'_>,
    labels: &PoolChartLabels<'_>,
    samples: &[PoolSample],
    entries: &[ActivityEntry],
    queue: &[(i64, f64)],
) -> Result<(String, Vec<DecisionMark>), ChartError> {
    spec.validate()?;
    let colors = palette(spec.theme);
    let (desired_color, ready_color, util_color) =
        (colors.lines[1], colors.lines[0], colors.lines[2]);
    let warming_color = colors.lines[6];
    let (from, to) = (spec.from_ms as f64, spec.to_ms as f64);
    let samples: Vec<PoolSample> = samples
        .iter()
        .copied()
        .filter(|s| s.at_ms >= spec.from_ms && s.at_ms <= spec.to_ms)
        .collect();
    let queue: Vec<(i64, f64)> = queue
        .iter()
        .copied()
        .filter(|(at, gpus)| (spec.from_ms..=spec.to_ms).contains(at) && gpus.is_finite())
        .map(|(at, gpus)| (at, gpus.max(0.0)))
        .collect();
    let top = samples
        .iter()
        .map(|s| f64::from(s.desired.max(s.ready + s.warming)))
        .chain(queue.iter().map(|(_, gpus)| *gpus))
        .fold(0.0, f64::max);
    let upper = (top + 1.0).max(2.0).ceil();
    let time = TimeLabels::Clock {
        offset_ms: i64::from(spec.utc_offset_minutes) * 60_000,
    };
    let plot_width_guess = i64::from(spec.width_px.saturating_sub(64)).max(1);
    let (ticks, step_ms) = time_ticks(
        spec.from_ms,
        spec.to_ms,
        time,
        (plot_width_guess / 90).max(2),
    );
    let x_format = |t: &f64| time_label(*t, spec.to_ms, step_ms, time);
    let spot = spot_marks_in(entries, spec.from_ms, spec.to_ms);
    let mut shown = vec![labels.desired, labels.ready, labels.warming, labels.util];
    if !queue.is_empty() {
        shown.push(labels.queue);
    }
    if spot.iter().any(|(_, mark)| *mark == SpotMark::Reclaimed) {
        shown.push(labels.reclaimed);
    }
    if spot.iter().any(|(_, mark)| *mark != SpotMark::Reclaimed) {
        shown.push(labels.spot_paused);
    }
    let chars = shown
        .iter()
        .map(|label| label.chars().count())
        .max()
        .unwrap_or(0);
    // CJK glyphs are about twice as wide as Latin ones.
    let wide = shown
        .iter()
        .any(|label| label.chars().any(|c| c as u32 > 0x2E80));
    let per_char = if wide { 12 } else { 7 };
    let legend_px = (30 + chars as u32 * per_char)
        .clamp(56, 200)
        .min(spec.width_px / 3);

    let ready = steps(&samples, spec.to_ms, |s| f64::from(s.ready));
    let warm_top = steps(&samples, spec.to_ms, |s| f64::from(s.ready + s.warming));
    let desired = steps(&samples, spec.to_ms, |s| f64::from(s.desired));
    let queue_line = step_line(queue.iter().copied(), spec.to_ms);
    let queue_color = colors.lines[5];
    let mut utils: Vec<Vec<(f64, f64)>> = samples
        .chunk_by(|a, b| a.util_pct.is_some() == b.util_pct.is_some())
        .filter(|run| run[0].util_pct.is_some())
        .map(|run| {
            run.iter()
                .map(|s| {
                    (
                        s.at_ms as f64,
                        f64::from(s.util_pct.unwrap_or(0.0)).clamp(0.0, 100.0),
                    )
                })
                .collect()
        })
        .collect();
    // The last reading holds until now, as the counts do.
    if let (Some(last), Some(run)) = (samples.last(), utils.last_mut())
        && last.util_pct.is_some()
        && last.at_ms < spec.to_ms
        && let Some(&(_, value)) = run.last()
    {
        run.push((to, value));
    }

    let mut svg = String::new();
    let mut marks = Vec::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (spec.width_px, spec.height_px)).into_drawing_area();
        root.fill(&colors.background).map_err(draw_error)?;
        let (plots, legend) = root.split_horizontally(spec.width_px - legend_px);
        let (counts_area, util_area) = plots.split_vertically((spec.height_px * 62 / 100).max(60));
        let font = ("sans-serif", 11).into_font().color(&colors.text);

        let mut counts = ChartBuilder::on(&counts_area)
            .caption(
                spec.title,
                ("sans-serif", 15).into_font().color(&colors.text),
            )
            .margin(8)
            .margin_right(20)
            .x_label_area_size(0)
            .y_label_area_size(40)
            .build_cartesian_2d(TickedAxis::new(from..to, ticks.clone()), 0.0..upper)
            .map_err(draw_error)?;
        counts
            .configure_mesh()
            .light_line_style(colors.grid.mix(0.35))
            .bold_line_style(colors.grid)
            .axis_style(colors.text.mix(0.6))
            .label_style(font.clone())
            .y_labels((upper as usize + 1).min(6))
            .y_label_formatter(&|v: &f64| format!("{v:.0}"))
            .draw()
            .map_err(draw_error)?;
        if warm_top.iter().zip(&ready).any(|(w, r)| w.1 > r.1) {
            let band: Vec<(f64, f64)> = warm_top
                .iter()
                .copied()
                .chain(ready.iter().rev().copied())
                .collect();
            counts
                .draw_series(std::iter::once(Polygon::new(band, warming_color.mix(0.35))))
                .map_err(draw_error)?;
        }
        // Desired wide beneath, ready narrow on top: both show where they are equal.
        for (points, color, width) in [(&desired, desired_color, 5), (&ready, ready_color, 2)] {
            if points.len() > 1 {
                counts
                    .draw_series(LineSeries::new(
                        points.iter().copied(),
                        color.stroke_width(width),
                    ))
                    .map_err(draw_error)?;
            }
        }

        // The queue dashed over both, so a count that meets it still shows it.
        if queue_line.len() > 1 {
            counts
                .draw_series(DashedLineSeries::new(
                    queue_line.iter().copied(),
                    6,
                    4,
                    queue_color.stroke_width(2),
                ))
                .map_err(draw_error)?;
        }

        // Spot: a reclaim a downward triangle at the top of the counts (its replacement is
        // ordered at that moment); spot paused and resumed dashed rules across them.
        let (reclaim_color, paused_color, resumed_color) = (
            colors.lines[4],
            colors.lines[7 % colors.lines.len()],
            colors.lines[3],
        );
        for &(at, mark) in &spot {
            let x = at as f64;
            match mark {
                SpotMark::Reclaimed => {
                    let (px, py) = counts.backend_coord(&(x, upper));
                    let r = MARK_PX;
                    let shape = vec![(px - r, py + 1), (px + r, py + 1), (px, py + 2 * r)];
                    counts_area
                        .draw(&Polygon::new(shape, reclaim_color.filled()))
                        .map_err(draw_error)?;
                }
                SpotMark::Paused | SpotMark::Resumed => {
                    let color = if mark == SpotMark::Paused {
                        paused_color
                    } else {
                        resumed_color
                    };
                    counts
                        .draw_series(DashedLineSeries::new(
                            [(x, 0.0), (x, upper)],
                            4,
                            3,
                            color.stroke_width(2),
                        ))
                        .map_err(draw_error)?;
                }
            }
        }

        let mut util = ChartBuilder::on(&util_area)
            .margin(8)
            .margin_right(20)
            .margin_top(4)
            .x_label_area_size(26)
            .y_label_area_size(40)
            .build_cartesian_2d(TickedAxis::new(from..to, ticks), 0.0..100.0)
            .map_err(draw_error)?;
        util.configure_mesh()
            .light_line_style(colors.grid.mix(0.35))
            .bold_line_style(colors.grid)
            .axis_style(colors.text.mix(0.6))
            .label_style(font.clone())
            .y_labels(3)
            .x_label_formatter(&x_format)
            .y_label_formatter(&|v: &f64| format!("{v:.0}%"))
            .draw()
            .map_err(draw_error)?;
        for run in &utils {
            if let [single] = run.as_slice() {
                util.draw_series(std::iter::once(Circle::new(
                    *single,
                    2,
                    util_color.filled(),
                )))
                .map_err(draw_error)?;
            } else {
                util.draw_series(LineSeries::new(
                    run.iter().copied(),
                    util_color.stroke_width(2),
                ))
                .map_err(draw_error)?;
            }
        }

        // The rule decisions, on the utilization at their time (kept inside the panel).
        let (_, rows) = util.plotting_area().get_pixel_range();
        let (top_px, bottom_px) = (rows.start + MARK_PX + 1, rows.end - MARK_PX - 2);
        for decided in decisions_in(entries, spec.from_ms, spec.to_ms) {
            let at = decided.entry.at_ms;
            let (x, y) = util.backend_coord(&(at as f64, util_at(&samples, at).unwrap_or(0.0)));
            let y = y.clamp(top_px, bottom_px.max(top_px));
            let r = MARK_PX;
            let shape: Vec<(i32, i32)> = match (decided.held, decided.direction) {
                (true, _) | (false, Ordering::Equal) => {
                    vec![(x, y - r), (x + r, y), (x, y + r), (x - r, y)]
                }
                (false, Ordering::Greater) => {
                    vec![(x, y - r), (x + r, y + r - 1), (x - r, y + r - 1)]
                }
                (false, Ordering::Less) => vec![(x, y + r), (x + r, y - r + 1), (x - r, y - r + 1)],
            };
            // As the replay chart's marks: out green, in pink; held in the desired colour.
            let color = match (decided.held, decided.direction) {
                (false, Ordering::Greater) => colors.lines[3],
                (false, Ordering::Less) => colors.lines[4],
                _ => desired_color,
            };
            let fill = if decided.shadow {
                colors.background.filled()
            } else {
                color.filled()
            };
            root.draw(&Polygon::new(shape.clone(), fill))
                .map_err(draw_error)?;
            let mut outline = shape;
            outline.push(outline[0]);
            let stroke = if decided.shadow {
                color.stroke_width(2)
            } else {
                colors.background.stroke_width(1)
            };
            root.draw(&PathElement::new(outline, stroke))
                .map_err(draw_error)?;
            let pct =
                |px: i32, whole: u32| (f64::from(px) * 10_000.0 / f64::from(whole)).round() / 100.0;
            marks.push(DecisionMark {
                id: decided.entry.id,
                at_ms: at,
                x_pct: pct(x, spec.width_px),
                y_pct: pct(y, spec.height_px),
                from: decided.entry.from,
                to: decided.entry.to,
                shadow: decided.shadow,
                held: decided.held,
                reason: decided.entry.reason.clone(),
            });
        }

        // The legend, level with the counts' plot top, one entry a row.
        let mut entries = vec![
            (labels.desired, desired_color, false),
            (labels.ready, ready_color, false),
            (labels.warming, warming_color, true),
            (labels.util, util_color, false),
        ];
        if !queue.is_empty() {
            entries.push((labels.queue, queue_color, false));
        }
        if spot.iter().any(|(_, mark)| *mark == SpotMark::Reclaimed) {
            entries.push((labels.reclaimed, reclaim_color, true));
        }
        if spot.iter().any(|(_, mark)| *mark != SpotMark::Reclaimed) {
            entries.push((labels.spot_paused, paused_color, false));
        }
        for (n, (label, color, band)) in entries.into_iter().enumerate() {
            let y = LEGEND_TOP_PX + LEGEND_ROW_PX * n as i32;
            if band {
                legend
                    .draw(&Rectangle::new(
                        [(6, y - 5), (20, y + 5)],
                        color.mix(0.35).filled(),
                    ))
                    .map_err(draw_error)?;
            } else {
                legend
                    .draw(&PathElement::new([(6, y), (20, y)], color.stroke_width(2)))
                    .map_err(draw_error)?;
            }
            legend
                .draw(&Text::new(
                    label.to_string(),
                    (24, y),
                    font.clone().pos(Pos::new(HPos::Left, VPos::Center)),
                ))
                .map_err(draw_error)?;
        }
        root.present().map_err(draw_error)?;
    }
    Ok((svg, marks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chart::svg_probe::text_x;

    const T0: i64 = 1_699_999_200_000;
    const LABELS: PoolChartLabels<'static> = PoolChartLabels {
        desired: "desired",
        ready: "ready",
        warming: "warming",
        util: "utilization",
        queue: "queued + running GPUs",
        reclaimed: "spot reclaimed",
        spot_paused: "spot paused / resumed",
    };

    fn spec(theme: ChartTheme) -> RangeChartSpec<'static> {
        RangeChartSpec {
            title: "render-farm",
            theme,
            width_px: 800,
            height_px: 300,
            from_ms: T0,
            to_ms: T0 + 600_000,
            utc_offset_minutes: 0,
        }
    }

    fn look(minute: i64, desired: u32, ready: u32, warming: u32, util: Option<f32>) -> PoolSample {
        PoolSample {
            at_ms: T0 + minute * 60_000,
            desired,
            ready,
            warming,
            util_pct: util,
        }
    }

    /// A scale-out from 2 to 6: four warming, then ready.
    fn scale_out() -> Vec<PoolSample> {
        vec![
            look(0, 2, 2, 0, Some(97.0)),
            look(1, 6, 2, 4, Some(98.0)),
            look(3, 6, 6, 0, Some(70.0)),
            look(5, 6, 6, 0, Some(99.0)),
        ]
    }

    #[test]
    fn a_count_holds_until_the_next_look() {
        let points = steps(&scale_out()[..3], T0 + 600_000, |s| f64::from(s.desired));
        let at = |minute: i64| (T0 + minute * 60_000) as f64;
        assert_eq!(
            points,
            [
                (at(0), 2.0),
                (at(1), 2.0),
                (at(1), 6.0),
                (at(3), 6.0),
                (at(3), 6.0),
                (at(10), 6.0)
            ]
        );
        assert!(steps(&[], T0, |s| f64::from(s.ready)).is_empty());
    }

    #[test]
    fn it_draws_desired_ready_the_warming_band_and_utilization() {
        for theme in [ChartTheme::Light, ChartTheme::Dark] {
            let svg = pool_svg(&spec(theme), &LABELS, &scale_out()).unwrap();
            for label in [
                "render-farm",
                "desired",
                "ready",
                "warming",
                "utilization",
                "100%",
            ] {
                assert!(svg.contains(label), "{label} in the chart");
            }
            // Ready, desired and utilization lines; the warming band is a polygon.
            assert_eq!(line_xs(&svg).len(), 3, "three lines");
            assert!(svg.contains("<polygon"), "the warming band");
        }
        // Nothing warming: no band.
        let settled = [look(0, 2, 2, 0, Some(50.0)), look(2, 2, 2, 0, None)];
        let svg = pool_svg(&spec(ChartTheme::Light), &LABELS, &settled).unwrap();
        assert!(!svg.contains("<polygon"));
        // No history yet: the axes and the legend, no line.
        let svg = pool_svg(&spec(ChartTheme::Light), &LABELS, &[]).unwrap();
        assert!(line_xs(&svg).is_empty() && svg.contains("desired"));
        assert!(
            pool_svg(
                &RangeChartSpec {
                    to_ms: T0,
                    ..spec(ChartTheme::Light)
                },
                &LABELS,
                &[]
            )
            .is_err()
        );
    }

    /// A rule's activity entry at `minute`: `from` → `to` (held when equal, the rules having
    /// asked for `asked`).
    fn decision(
        id: i64,
        minute: i64,
        from: u32,
        to: u32,
        asked: u32,
        shadow: bool,
    ) -> ActivityEntry {
        use ebb_wire::rules::{Clamp, Decision, DecisionReason};
        let reason = if from == to {
            DecisionReason::Held {
                rule: "busy".into(),
                clamp: Clamp::Max {
                    from_gpus: asked,
                    to_gpus: to,
                },
            }
        } else {
            DecisionReason::Rule {
                rule: "busy".into(),
                from_gpus: from,
                to_gpus: to,
            }
        };
        ActivityEntry {
            id,
            at_ms: T0 + minute * 60_000,
            pool: "render-farm".into(),
            actor: Actor::Rule,
            from,
            to,
            reason: ChangeReason::RuleDecision {
                decision: Box::new(Decision {
                    at_ms: T0 + minute * 60_000,
                    current_gpus: from,
                    rules: Vec::new(),
                    recommended_gpus: asked,
                    clamps: Vec::new(),
                    desired_gpus: to,
                    cost_delta_per_hour_fen: None,
                    reason,
                }),
                shadow,
            },
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
            results: Vec::new(),
            outcome: ebb_wire::pools::Outcome::Done,
            finished_at_ms: None,
            who: String::new(),
            role: String::new(),
        }
    }

    #[test]
    fn decisions_are_marked_on_the_utilization_panel_at_their_time() {
        let operator = ActivityEntry {
            actor: Actor::Operator,
            reason: ChangeReason::Slider,
            ..decision(4, 5, 6, 5, 5, false)
        };
        let entries = [
            decision(9, 6, 6, 4, 4, true),   // shadow, out of order
            decision(1, -1, 1, 2, 2, false), // before the range
            decision(2, 1, 2, 6, 6, false),
            decision(3, 4, 6, 6, 8, false), // held at max
            operator,
            decision(10, 11, 6, 7, 7, false), // after the range
        ];
        let decided = decisions_in(&entries, T0, T0 + 600_000);
        let ids: Vec<i64> = decided.iter().map(|d| d.entry.id).collect();
        assert_eq!(
            ids,
            [2, 3, 9],
            "in the range, rule decisions only, oldest first"
        );
        assert_eq!(
            decided
                .iter()
                .map(|d| (d.held, d.shadow, d.direction))
                .collect::<Vec<_>>(),
            [
                (false, false, Ordering::Greater),
                (true, false, Ordering::Greater),
                (false, true, Ordering::Less)
            ]
        );

        let plain = pool_svg(&spec(ChartTheme::Light), &LABELS, &scale_out()).unwrap();
        let (svg, marks) = pool_chart(
            &spec(ChartTheme::Light),
            &LABELS,
            &scale_out(),
            &entries,
            &[],
        )
        .unwrap();
        assert_eq!(
            svg.matches("<polygon").count(),
            plain.matches("<polygon").count() + 3,
            "one shape a mark"
        );
        assert_eq!(marks.iter().map(|m| m.id).collect::<Vec<_>>(), [2, 3, 9]);
        assert_eq!(
            marks
                .iter()
                .map(|m| (m.from, m.to, m.held, m.shadow))
                .collect::<Vec<_>>(),
            [
                (2, 6, false, false),
                (6, 6, true, false),
                (6, 4, false, true)
            ]
        );
        assert!(matches!(marks[1].reason, ChangeReason::RuleDecision { .. }));
        // Inside the utilization panel's plot area: right of the y labels (40 px), left
        // of the legend, below the counts (62 % of the height), above the time labels.
        let legend_left = 100.0 * f64::from(800 - 56) / 800.0;
        for mark in &marks {
            assert!(
                mark.x_pct > 100.0 * 40.0 / 800.0 && mark.x_pct < legend_left,
                "x {} in the plot",
                mark.x_pct
            );
            assert!(
                mark.y_pct > 62.0 && mark.y_pct < 100.0 * (300.0 - 26.0) / 300.0,
                "y {} in the utilization panel",
                mark.y_pct
            );
        }
        // At their time: minute 1, 4 and 6 of ten.
        let (x1, x4, x6) = (marks[0].x_pct, marks[1].x_pct, marks[2].x_pct);
        assert!(x1 < x4 && x4 < x6);
        assert!(
            ((x6 - x1) / (x4 - x1) - 5.0 / 3.0).abs() < 0.05,
            "proportional to time: {x1} {x4} {x6}"
        );
        // On the utilization line then: 98 % at minute 1 stands above the 84.5 % of
        // minute 4 (half-way from 70 % to 99 %).
        assert!(marks[0].y_pct < marks[1].y_pct);
        assert_eq!(util_at(&scale_out(), T0 + 4 * 60_000), Some(84.5));
        assert_eq!(util_at(&scale_out(), T0 + 9 * 60_000), Some(99.0));
        assert_eq!(util_at(&scale_out(), T0 - 1), None);
        let gap = [look(0, 2, 2, 0, None), look(2, 2, 2, 0, Some(50.0))];
        assert_eq!(util_at(&gap, T0 + 60_000), None);
        // Nothing in the range: nothing marked.
        let (_, none) = pool_chart(
            &spec(ChartTheme::Dark),
            &LABELS,
            &scale_out(),
            &entries[1..2],
            &[],
        )
        .unwrap();
        assert!(none.is_empty());
    }

    /// The x of every point of every `<polyline>` of more than two points (a legend
    /// swatch has two), one list a line.
    fn line_xs(svg: &str) -> Vec<Vec<f64>> {
        svg.split("<polyline")
            .skip(1)
            .map(|element| {
                let points = element.split("points=\"").nth(1).unwrap_or("");
                let points = &points[..points.find('"').unwrap_or(0)];
                points
                    .split_whitespace()
                    .filter_map(|pair| pair.split(',').next()?.parse::<f64>().ok())
                    .collect::<Vec<_>>()
            })
            .filter(|xs| xs.len() > 2)
            .collect()
    }

    #[test]
    fn the_legend_stands_beside_the_lines_never_on_them() {
        let zh = PoolChartLabels {
            desired: "期望",
            ready: "就绪",
            warming: "预热中",
            util: "利用率",
            queue: "排队与运行的 GPU",
            reclaimed: "抢占式 GPU 被收回",
            spot_paused: "抢占式暂停/恢复",
        };
        for labels in [LABELS, zh] {
            let svg = pool_svg(&spec(ChartTheme::Dark), &labels, &scale_out()).unwrap();
            let right = line_xs(&svg).into_iter().flatten().fold(f64::MIN, f64::max);
            assert!(right > 600.0, "the lines reach the right edge: {right}");
            for label in [labels.desired, labels.ready, labels.warming, labels.util] {
                let x = text_x(&svg, label).unwrap_or_else(|| panic!("{label} in the legend"));
                assert!(
                    x > right,
                    "{label} at {x} stands right of the lines (to {right})"
                );
            }
        }
    }

    #[test]
    fn a_queue_is_a_dashed_line_with_its_legend_and_the_axis_reaches_its_top() {
        let queue = [
            (T0 - 60_000, 40.0),
            (T0 + 60_000, 4.0),
            (T0 + 2 * 60_000, 9.0),
            (T0 + 4 * 60_000, 2.0),
        ];
        let with = pool_chart(&spec(ChartTheme::Light), &LABELS, &scale_out(), &[], &queue)
            .unwrap()
            .0;
        let without = pool_svg(&spec(ChartTheme::Light), &LABELS, &scale_out()).unwrap();
        assert!(
            text_x(&with, LABELS.queue).is_some(),
            "the queue in the legend"
        );
        assert!(
            text_x(&without, LABELS.queue).is_none(),
            "no queue, no legend row"
        );
        // Dashes: many short segments the plain chart does not have.
        let segments = |svg: &str| svg.matches("<polyline").count();
        assert!(segments(&with) > segments(&without) + 5);
        // The axis reaches the queue's 9 (not the out-of-range 40).
        assert!(text_x(&with, "10").is_some(), "the axis reaches 10");
        assert!(
            text_x(&without, "10").is_none(),
            "the plain chart's axis stops lower"
        );
        assert!(
            text_x(&with, "40").is_none(),
            "a reading before the range is not drawn"
        );
    }

    #[test]
    fn spot_reclaims_and_breaker_switches_are_marked_with_their_legend() {
        let entry = |minute: i64, reason: ChangeReason| ActivityEntry {
            id: minute,
            at_ms: T0 + minute * 60_000,
            pool: "render".into(),
            actor: Actor::Failover,
            from: 2,
            to: 2,
            reason,
            delta_per_hour_fen: None,
            delta_per_month_fen: None,
            results: Vec::new(),
            outcome: ebb_wire::pools::Outcome::Done,
            finished_at_ms: None,
            who: String::new(),
            role: String::new(),
        };
        let entries = [
            entry(
                2,
                ChangeReason::Reclaimed {
                    host: "h1".into(),
                    gpus: 1,
                    until_ms: T0 + 3 * 60_000,
                },
            ),
            entry(
                3,
                ChangeReason::SpotPaused {
                    model: "H800".into(),
                    region: "cn-east".into(),
                    interruptions: 4,
                    window_minutes: 30,
                    until_ms: T0 + 63 * 60_000,
                },
            ),
            // Outside the range: not drawn.
            entry(
                20,
                ChangeReason::SpotResumed {
                    model: "H800".into(),
                    region: "cn-east".into(),
                    quiet_minutes: 30,
                },
            ),
        ];
        let marks = spot_marks_in(&entries, T0, T0 + 600_000);
        assert_eq!(
            marks,
            vec![
                (T0 + 120_000, SpotMark::Reclaimed),
                (T0 + 180_000, SpotMark::Paused)
            ]
        );
        let (svg, decisions) = pool_chart(
            &spec(ChartTheme::Light),
            &LABELS,
            &scale_out(),
            &entries,
            &[],
        )
        .unwrap();
        assert!(decisions.is_empty(), "spot events are not rule decisions");
        assert!(svg.contains("spot reclaimed") && svg.contains("spot paused / resumed"));
        let (plain, _) =
            pool_chart(&spec(ChartTheme::Light), &LABELS, &scale_out(), &[], &[]).unwrap();
        assert!(!plain.contains("spot reclaimed"));
    }
}
