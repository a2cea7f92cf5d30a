//! Ebb's charts: what the console draws, as values in and an SVG (or PNG) out.
//!
//! Pure: no IO, no clock, no async. Time is a parameter (`now_ms`, a range's bounds), and
//! the fonts PNG export draws with are handed in ([`raster::Rasterizer`]); only the two
//! shipped faces are compiled in.
//!
//! - [`series`]: recent points per GPU for the live charts; [`history`]: stored per-GPU
//!   series, aggregates, the heatmap grid and a pool's samples, as the stores answer.
//! - [`downsample`]: M4, which every chart line goes through.
//! - [`chart`]: plotters → SVG (live and stored lines, aggregates, the heatmap, the pool
//!   chart, the replay chart); [`cost_view`]: the plan comparison as a DTO with its chart.
//! - [`raster`]: SVG → PNG with resvg; [`calendar`]: the UTC calendar for labels.

pub mod calendar;
pub mod chart;
pub mod cost_view;
pub mod downsample;
pub mod history;
pub mod raster;
pub mod series;
