//! The cost engine through its public API: the catalog, previews, plans, the seed's numbers
//! and the properties the optimizer must keep.

// Fen are written yuan_fen, so `12_50` reads as ¥12.50.
#![allow(clippy::inconsistent_digit_grouping)]

mod catalog;
mod parsers;
mod plans;
mod preview;
mod properties;
mod seed;

use ebb_cost::{Catalog, DemandSeries, PriceEntry};

/// The demo catalog's entry for `model` in `region`.
pub fn demo_entry(model: &str, region: &str) -> PriceEntry {
    Catalog::demo().find(model, region).unwrap().clone()
}

/// A series from GPUs per hour, starting at hour 0.
pub fn hourly(gpus: Vec<u32>) -> DemandSeries {
    DemandSeries::from_hourly(0, gpus).unwrap()
}
