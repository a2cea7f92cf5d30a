//! Chart export as PNG: the chart's SVG rasterized with resvg, which is pure Rust (no
//! system graphics or font libraries to install). Text needs fonts: the caller hands a
//! [`Rasterizer`] the fonts it found installed (`ebb_core::system_fonts` reads the
//! system's once), and this module never reads a file; the rasterizer keeps them for
//! every chart.
//!
//! Two fonts ship inside the binary so that a zh-CN chart reads the same on a machine with
//! no CJK font, or none at all: subsets of DejaVu Sans (Latin; Bitstream Vera licence) and
//! of Droid Sans Fallback (simplified Chinese: GB2312 level 1 and every character of the
//! UI's zh-CN catalog; Apache-2.0), about 0.7 MB together. `fonts/README.md` says what they
//! hold and how `fonts/make_subsets.py` makes them again. A character the chosen sans
//! family lacks is drawn by the shipped faces first (simplified forms, the same on every
//! machine), then by any other face that has it.

use resvg::{tiny_skia, usvg};
use std::sync::Arc;

/// The font database a [`Rasterizer`] is made from (resvg's own).
pub use resvg::usvg::fontdb;

/// DejaVu Sans, subset to Latin text and the symbols charts draw (see `fonts/README.md`).
pub const SHIPPED_LATIN_FONT: &[u8] = include_bytes!("../fonts/DejaVuSans-subset.ttf");
/// Droid Sans Fallback, subset to common simplified Chinese (see `fonts/README.md`).
pub const SHIPPED_CJK_FONT: &[u8] = include_bytes!("../fonts/DroidSansFallback-subset.ttf");

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

/// Turns chart SVGs into PNGs. Making one sorts the fonts it is given; keep it. Beside the
/// installed fonts it holds the shipped subsets of DejaVu Sans and Droid Sans Fallback, so
/// that Chinese labels are drawn where no installed font has them (see the module docs).
pub struct Rasterizer {
    fonts: Arc<fontdb::Database>,
    /// The faces tried first for a character the chosen family lacks.
    fallback_first: Arc<[fontdb::ID]>,
}

impl std::fmt::Debug for Rasterizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rasterizer")
            .field("font_faces", &self.fonts.len())
            .finish()
    }
}

impl Rasterizer {
    /// With `fonts`, those the caller found installed on this machine (fontdb's
    /// `load_system_fonts`, done by the shell), and the shipped ones (Latin and simplified
    /// Chinese), which draw whatever the installed ones lack. DejaVu Sans heads the
    /// sans-serif list, so where none is installed the shipped one draws the Latin text too.
    pub fn with_installed_fonts(mut fonts: fontdb::Database) -> Self {
        let mut shipped = Vec::new();
        for data in [SHIPPED_CJK_FONT, SHIPPED_LATIN_FONT] {
            shipped.extend(fonts.load_font_source(fontdb::Source::Binary(Arc::new(data))));
        }
        let mut rasterizer = Self::with_fonts(fonts);
        rasterizer.fallback_first = shipped.into();
        rasterizer
    }

    /// With the shipped fonts alone: what export draws on a machine without any font.
    pub fn with_shipped_fonts_only() -> Self {
        Self::with_installed_fonts(fontdb::Database::new())
    }

    /// With exactly the faces of `fonts` (a test's choice: say, none with CJK).
    pub fn with_fonts(mut fonts: fontdb::Database) -> Self {
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
            fallback_first: Arc::new([]),
        }
    }

    /// How many font faces were found.
    pub fn font_faces(&self) -> usize {
        self.fonts.len()
    }

    /// How usvg reads a chart here: these fonts, and for a character the chosen face lacks
    /// the shipped faces first, then usvg's own choice (any face that has it, in database
    /// order, with a warning in the log).
    pub fn options(&self) -> usvg::Options<'static> {
        let first = Arc::clone(&self.fallback_first);
        let others = usvg::FontResolver::default_fallback_selector();
        usvg::Options {
            fontdb: Arc::clone(&self.fonts),
            font_resolver: usvg::FontResolver {
                select_font: usvg::FontResolver::default_font_selector(),
                // usvg shapes the text again with the face returned, keeps the glyphs it
                // found, and asks again, without the faces tried, for what is still missing.
                select_fallback: Box::new(move |c, tried, fonts| {
                    let untried = first.iter().copied().find(|id| !tried.contains(id));
                    untried.or_else(|| others(c, tried, fonts))
                }),
            },
            ..usvg::Options::default()
        }
    }

    /// The PNG of `svg`, `scale` times its size (2 for a high-density screen).
    pub fn png(&self, svg: &str, scale: f32) -> Result<Vec<u8>, RasterError> {
        if !(0.25..=4.0).contains(&scale) {
            return Err(RasterError::Scale(scale));
        }
        let tree = usvg::Tree::from_str(svg, &self.options())?;
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

/// Height of the title band [`titled`] adds, in the chart's pixels.
pub const TITLE_BAND_PX: u32 = 32;

/// The chart `svg` with `title` in a band above it (an exported chart says what it is:
/// host, metric, range), in the chart's own background; the chart is nested unchanged.
/// `None` when `svg` has no root `<svg>` with a numeric width and height. Pure.
pub fn titled(svg: &str, title: &str) -> Option<String> {
    let open_at = svg.find("<svg")?;
    let open_end = open_at + svg[open_at..].find('>')?;
    let root = &svg[open_at..open_end];
    let number = |name: &str| -> Option<f64> {
        let key = format!(" {name}=\"");
        let start = root.find(&key)? + key.len();
        let end = start + root[start..].find('"')?;
        root[start..end].trim_end_matches("px").parse().ok()
    };
    let (width, height) = (number("width")?, number("height")?);
    // The chart's background: the first rectangle's fill (plotters paints it first).
    let background = svg[open_end..]
        .split("<rect")
        .nth(1)
        .and_then(|rect| {
            let start = rect.find("fill=\"")? + 6;
            let end = start + rect[start..].find('"')?;
            Some(rect[start..end].to_string())
        })
        .unwrap_or_else(|| "#FFFFFF".into());
    let dark = background
        .strip_prefix('#')
        .filter(|hex| hex.len() == 6)
        .and_then(|hex| u32::from_str_radix(hex, 16).ok())
        .is_some_and(|rgb| {
            let (r, g, b) = ((rgb >> 16) & 0xff, (rgb >> 8) & 0xff, rgb & 0xff);
            r * 299 + g * 587 + b * 114 < 128_000
        });
    let ink = if dark { "#E6E9EF" } else { "#1F2430" };
    let escaped = title
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;");
    let band = f64::from(TITLE_BAND_PX);
    let total = height + band;
    let inner = format!("<svg x=\"0\" y=\"{band}\"{}", &svg[open_at + 4..]);
    Some(format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{total}\" viewBox=\"0 0 {width} {total}\">\
<rect x=\"0\" y=\"0\" width=\"{width}\" height=\"{band}\" fill=\"{background}\"/>\
<text x=\"12\" y=\"21\" font-family=\"sans-serif\" font-size=\"15\" font-weight=\"600\" fill=\"{ink}\">{escaped}</text>\
{inner}</svg>"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_title_band_goes_above_the_chart() {
        let chart = r##"<svg width="640" height="240" viewBox="0 0 640 240" xmlns="http://www.w3.org/2000/svg">
<rect x="0" y="0" width="640" height="240" opacity="1" fill="#1E1E24" stroke="none"/>
<polyline points="0,0 10,10"/></svg>"##;
        let out = titled(chart, "Utilization of gpu-a01 <1 h> & more").unwrap();
        assert!(
            out.starts_with(
                "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"272\""
            ),
            "{out}"
        );
        assert!(out.contains(">Utilization of gpu-a01 &lt;1 h&gt; &amp; more</text>"));
        assert!(
            out.contains("fill=\"#1E1E24\"/>"),
            "the chart's own background"
        );
        assert!(
            out.contains("fill=\"#E6E9EF\""),
            "light ink on a dark chart"
        );
        assert!(out.contains("<svg x=\"0\" y=\"32\" width=\"640\" height=\"240\""));
        assert!(out.ends_with("</svg></svg>"));
        // It still reads as an SVG of the new size.
        let tree = usvg::Tree::from_str(&out, &usvg::Options::default()).unwrap();
        assert_eq!(tree.size().height(), 272.0);
        assert_eq!(titled("<p>not a chart</p>", "x"), None);
        assert_eq!(titled("<svg viewBox=\"0 0 1 1\"></svg>", "x"), None);
    }
}
