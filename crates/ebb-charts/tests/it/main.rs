//! The charts: stored series drawn, M4's properties, PNG export's fonts.

mod charts;
mod downsample;
mod export_fonts;

/// The fonts installed on this machine, as the shells hand them to the rasterizer
/// (`ebb_core::system_fonts`).
pub(crate) fn system_fonts() -> ebb_charts::raster::fontdb::Database {
    let mut fonts = ebb_charts::raster::fontdb::Database::new();
    fonts.load_system_fonts();
    fonts
}
