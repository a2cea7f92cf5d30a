//! The machine's fonts for chart export. `ebb-charts` never reads a file, so the shells
//! find the installed fonts here and hand them to its rasterizer.

use ebb_charts::raster::{Rasterizer, fontdb};

/// A rasterizer with the fonts installed on this machine and the shipped ones. Reads the
/// system's font list (the one IO of PNG export): make one and keep it.
pub fn rasterizer() -> Rasterizer {
    Rasterizer::with_installed_fonts(installed())
}

/// The fonts installed on this machine.
pub fn installed() -> fontdb::Database {
    let mut fonts = fontdb::Database::new();
    fonts.load_system_fonts();
    fonts
}
