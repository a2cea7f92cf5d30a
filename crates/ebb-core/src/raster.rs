//! Chart export as PNG: the chart's SVG rasterized with resvg, which is pure Rust (no
//! system graphics or font libraries to install). Text needs fonts: the system's are
//! found once, when a [`Rasterizer`] is made (the one IO here), and kept for every chart.

use resvg::{tiny_skia, usvg};
use std::sync::Arc;

/// The largest PNG side we draw, in pixels.
pub const MAX_PNG_SIDE_PX: u32 = 8192;

#[derive(Debug, thiserror::Error)]
pub enum RasterError {
    #[error("the chart's SVG cannot be read: {0}")]
    Svg(#[from] usvg::Error),
    #[error("scale must be between 0.25 and 4, got {0}")]
    Scale(f32),
    #[error("the PNG would be {width_px}×{height_px} pixels; at most {MAX_PNG_SIDE_PX} a side")]
    TooLarge { width_px: u32, height_px: u32 },
    #[error("cannot encode the PNG: {0}")]
    Encode(String),
}

/// Families tried, in order, for the charts' `sans-serif` text.
const SANS_SERIF: [&str; 9] = [
    "DejaVu Sans",
    "Liberation Sans",
    "Noto Sans",
    "Arial",
    "Helvetica",
    "Segoe UI",
    "Noto Sans CJK SC",
    "Microsoft YaHei",
    "PingFang SC",
];

/// Turns chart SVGs into PNGs. Making one reads the system's font list; keep it.
pub struct Rasterizer {
    fonts: Arc<usvg::fontdb::Database>,
}

impl std::fmt::Debug for Rasterizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rasterizer")
            .field("font_faces", &self.fonts.len())
            .finish()
    }
}

impl Rasterizer {
    /// With the fonts installed on this machine. Without any, a chart's lines and colours
    /// still come out; its text does not.
    pub fn with_system_fonts() -> Self {
        let mut fonts = usvg::fontdb::Database::new();
        fonts.load_system_fonts();
        let installed = |family: &str| {
            fonts.faces().any(|face| {
                face.families
                    .iter()
                    .any(|(name, _)| name.eq_ignore_ascii_case(family))
            })
        };
        let sans = SANS_SERIF
            .iter()
            .find(|family| installed(family))
            .map(|family| family.to_string())
            .or_else(|| {
                fonts
                    .faces()
                    .find_map(|face| face.families.first().map(|(name, _)| name.clone()))
            });
        if let Some(sans) = sans {
            fonts.set_sans_serif_family(sans);
        }
        Self {
            fonts: Arc::new(fonts),
        }
    }

    /// How many font faces were found.
    pub fn font_faces(&self) -> usize {
        self.fonts.len()
    }

    /// The PNG of `svg`, `scale` times its size (2 for a high-density screen).
    pub fn png(&self, svg: &str, scale: f32) -> Result<Vec<u8>, RasterError> {
        if !(0.25..=4.0).contains(&scale) {
            return Err(RasterError::Scale(scale));
        }
        let options = usvg::Options {
            fontdb: Arc::clone(&self.fonts),
            ..usvg::Options::default()
        };
        let tree = usvg::Tree::from_str(svg, &options)?;
        let size = tree
            .size()
            .to_int_size()
            .scale_by(scale)
            .ok_or(RasterError::Scale(scale))?;
        let (width_px, height_px) = (size.width(), size.height());
        if width_px > MAX_PNG_SIDE_PX || height_px > MAX_PNG_SIDE_PX {
            return Err(RasterError::TooLarge {
                width_px,
                height_px,
            });
        }
        let mut pixmap =
            tiny_skia::Pixmap::new(width_px, height_px).ok_or(RasterError::TooLarge {
                width_px,
                height_px,
            })?;
        resvg::render(
            &tree,
            tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|error| RasterError::Encode(error.to_string()))
    }
}
