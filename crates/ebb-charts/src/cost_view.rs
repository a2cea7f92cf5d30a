//! The Costs view's data: `ebb_cost` results as IPC DTOs, and the plan comparison as a
//! plotters bar chart. Pure: values in, values out. (The active catalog's view, which
//! knows where the catalog came from, is `ebb_core::cost_view`.)

use ebb_cost::{Comparison, PlanKind, Problem};
use ebb_wire::ipc::{
    CatalogProblem, ChartTheme, CheaperOverlayView, PlanComparisonView, PlanRow,
    RecommendationView, SkippedPlanRow,
};
use plotters::prelude::*;

/// A plan's short name on the chart's axis, in the operator's language (the shell words it
/// from the UI's catalog).
pub type PlanLabel<'a> = &'a dyn Fn(PlanKind) -> String;

/// The short English names, for tests and tools without a catalog.
pub fn english_plan_label(kind: PlanKind) -> String {
    english_label(kind).to_string()
}

fn english_label(kind: PlanKind) -> &'static str {
    match kind {
        PlanKind::AllSubscribed => "all monthly",
        PlanKind::AllHourly => "all hourly",
        PlanKind::AllOnDemandBestUnit => "on demand",
        PlanKind::BaseHourly => "base+hour",
        PlanKind::BaseDaily => "base+day",
        PlanKind::BaseWeekly => "base+week",
        PlanKind::BaseReserved => "base+reserved",
        PlanKind::BaseSpot => "base+spot",
    }
}

pub fn problem(problem: &Problem) -> CatalogProblem {
    CatalogProblem {
        entry: problem.entry.as_ref().map(ToString::to_string),
        field: problem.field.clone(),
        message: problem.message.clone(),
    }
}

/// How the comparison's bar chart is drawn.
#[derive(Clone, Copy)]
pub struct PlanChart<'a> {
    pub theme: ChartTheme,
    pub width_px: u32,
    pub plan_label: PlanLabel<'a>,
}

impl std::fmt::Debug for PlanChart<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PlanChart")
            .field("theme", &self.theme)
            .field("width_px", &self.width_px)
            .finish_non_exhaustive()
    }
}

/// The comparison as every front shows it (the Costs view, `ebb cost plan --json`), with
/// its bar chart when `chart` says how to draw it.
pub fn comparison_view(
    entry: &ebb_cost::PriceEntry,
    currency: &str,
    comparison: &Comparison,
    chart: Option<PlanChart<'_>>,
) -> Result<PlanComparisonView, crate::chart::ChartError> {
    let recommendation = &comparison.recommendation;
    let plans: Vec<PlanRow> = comparison
        .plans
        .iter()
        .map(|plan| PlanRow {
            kind: plan.kind,
            base_gpus: plan.base_gpus,
            base_fen: plan.base_cost.fen(),
            overlay_fen: plan.overlay_cost.fen(),
            total_fen: plan.total_cost.fen(),
            saving_fen: plan.saving_vs_all_subscribed.fen(),
            saving_pct: plan.saving_pct,
            term: plan.term,
            paid_gpu_hours: plan.paid_gpu_hours.total(),
            paid_by_unit: plan.paid_gpu_hours,
            idle_paid_gpu_hours: plan.idle_paid_gpu_hours,
            recommended: plan.kind == recommendation.best,
        })
        .collect();
    let chart_svg = chart
        .map(|chart| plan_chart_svg(comparison, chart.theme, chart.width_px, chart.plan_label))
        .transpose()?;
    Ok(PlanComparisonView {
        model: entry.model.clone(),
        region: entry.region.clone(),
        currency: currency.into(),
        hours: comparison.hours,
        first_hour: comparison.first_hour,
        peak_gpus: comparison.peak_gpus,
        used_gpu_hours: comparison.used_gpu_hours,
        term: comparison.term,
        subscription_per_gpu_fen: comparison.subscription_per_gpu.fen(),
        hour_fen: entry.hour.fen(),
        plans,
        skipped: comparison
            .skipped
            .iter()
            .map(|skipped| SkippedPlanRow {
                kind: skipped.kind,
                reason: skipped.reason.clone(),
            })
            .collect(),
        recommendation: RecommendationView {
            kind: recommendation.best,
            base_gpus: recommendation.best_base_gpus,
            cost_fen: recommendation.best_cost.fen(),
            saving_fen: recommendation.saving_vs_all_subscribed.fen(),
            saving_pct: recommendation.saving_pct,
            hourly_base_gpus: recommendation.base.base_gpus,
            hourly_cost_fen: recommendation.base.cost.fen(),
            break_even_hours: recommendation.base.break_even_hours,
            hours_at_base: recommendation.base.hours_at_base,
            hours_above_base: recommendation.base.hours_above_base,
            cheaper_overlay: recommendation
                .cheaper_overlay
                .map(|cheaper| CheaperOverlayView {
                    overlay: cheaper.overlay,
                    base_gpus: cheaper.base_gpus,
                    cost_fen: cheaper.cost.fen(),
                    saving_vs_hourly_fen: cheaper.saving_vs_hourly.fen(),
                }),
        },
        chart_svg,
    })
}

/// Each plan's total as a horizontal bar; the recommended one highlighted.
pub fn plan_chart_svg(
    comparison: &Comparison,
    theme: ChartTheme,
    width_px: u32,
    plan_label: PlanLabel<'_>,
) -> Result<String, crate::chart::ChartError> {
    use crate::chart::{ChartError, MAX_SIZE_PX, MIN_SIZE_PX};
    if !(MIN_SIZE_PX..=MAX_SIZE_PX).contains(&width_px) {
        return Err(ChartError::Size {
            field: "width_px",
            value: width_px,
        });
    }
    let (background, text, bar, best) = match theme {
        ChartTheme::Light => (
            RGBColor(255, 255, 255),
            RGBColor(40, 48, 60),
            RGBColor(148, 163, 184),
            RGBColor(14, 116, 144),
        ),
        ChartTheme::Dark => (
            RGBColor(22, 27, 34),
            RGBColor(214, 221, 230),
            RGBColor(71, 85, 105),
            RGBColor(45, 212, 191),
        ),
    };
    let plans = &comparison.plans;
    let rows = plans.len().max(1);
    let height_px = (40 + rows as u32 * 34).clamp(MIN_SIZE_PX, MAX_SIZE_PX);
    let max_yuan = plans
        .iter()
        .map(|plan| plan.total_cost.fen() as f64 / 100.0)
        .fold(1.0, f64::max)
        * 1.15;
    let draw = |error: &dyn std::fmt::Display| ChartError::Draw(error.to_string());
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width_px, height_px)).into_drawing_area();
        root.fill(&background).map_err(|e| draw(&e))?;
        // Rows top to bottom in the table's order: row r sits at y = rows - 1 - r.
        let top = rows as f64 - 0.5;
        let mut chart = ChartBuilder::on(&root)
            .margin(8)
            .x_label_area_size(24)
            .y_label_area_size(110)
            .build_cartesian_2d(0.0..max_yuan, -0.5..top)
            .map_err(|e| draw(&e))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(background)
            .bold_line_style(bar.mix(0.3))
            .axis_style(text.mix(0.6))
            .label_style(("sans-serif", 11).into_font().color(&text))
            .x_labels(5)
            .y_labels(rows)
            .x_label_formatter(&|yuan| format!("¥{}", compact(*yuan)))
            .y_label_formatter(&|y| {
                let slot = y.round();
                if (y - slot).abs() > 0.01 || slot < 0.0 {
                    return String::new();
                }
                let row = rows as i64 - 1 - slot as i64;
                usize::try_from(row)
                    .ok()
                    .and_then(|row| plans.get(row))
                    .map_or(String::new(), |plan| plan_label(plan.kind))
            })
            .draw()
            .map_err(|e| draw(&e))?;
        chart
            .draw_series(plans.iter().enumerate().map(|(row, plan)| {
                let color = if plan.kind == comparison.recommendation.best {
                    best
                } else {
                    bar
                };
                let yuan = plan.total_cost.fen() as f64 / 100.0;
                let y = (rows - 1 - row) as f64;
                Rectangle::new([(0.0, y - 0.32), (yuan, y + 0.32)], color.filled())
            }))
            .map_err(|e| draw(&e))?;
        root.present().map_err(|e| draw(&e))?;
    }
    Ok(svg)
}

fn compact(yuan: f64) -> String {
    if yuan >= 1_000_000.0 {
        format!("{:.1}M", yuan / 1_000_000.0)
    } else if yuan >= 1_000.0 {
        format!("{:.0}k", yuan / 1_000.0)
    } else {
        format!("{yuan:.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ebb_cost::{Catalog, DemandSeries, PlanOptions, compare_plans};

    #[test]
    fn the_faq_4_comparison_becomes_a_view_with_a_chart() {
        let catalog = Catalog::demo();
        let entry = catalog.find("A100", "cn-north").unwrap();
        let mut hourly = vec![10u32; 730];
        for day in 0..28 {
            for hour in 19..24 {
                hourly[day * 24 + hour] = 50;
            }
        }
        let demand = DemandSeries::from_hourly(0, hourly).unwrap();
        let comparison = compare_plans(entry, &demand, &PlanOptions::default()).unwrap();
        let chart = PlanChart {
            theme: ChartTheme::Light,
            width_px: 640,
            plan_label: &english_plan_label,
        };
        let view = comparison_view(entry, "CNY", &comparison, Some(chart)).unwrap();
        assert_eq!(view.recommendation.hourly_cost_fen, 12_000_000);
        assert_eq!(view.subscription_per_gpu_fen, 500_000);
        assert!(
            comparison_view(entry, "CNY", &comparison, None)
                .unwrap()
                .chart_svg
                .is_none()
        );
        let chart_svg = view.chart_svg.clone().unwrap();
        assert_eq!(view.recommendation.hourly_base_gpus, 10);
        let subscribed = view
            .plans
            .iter()
            .find(|plan| plan.kind == PlanKind::AllSubscribed)
            .unwrap();
        assert_eq!(subscribed.total_fen, 25_000_000);
        assert_eq!(view.plans.iter().filter(|plan| plan.recommended).count(), 1);
        assert!(chart_svg.starts_with("<svg") && chart_svg.contains("base+hour"));
        let dark = plan_chart_svg(&comparison, ChartTheme::Dark, 640, &english_plan_label).unwrap();
        assert_ne!(dark, chart_svg);
        assert!(plan_chart_svg(&comparison, ChartTheme::Dark, 10, &english_plan_label).is_err());
    }
}
