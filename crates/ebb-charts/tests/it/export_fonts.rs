//! PNG export's text on a machine without fonts: the shipped DejaVu Sans and Droid Sans
//! Fallback subsets alone draw zh-CN and ASCII labels, glyph by glyph.

use ebb_charts::chart::{RangeChartSpec, gpu_lines_svg};
use ebb_charts::raster::{Rasterizer, SHIPPED_LATIN_FONT, titled};
use ebb_wire::ipc::{ChartMetric, ChartTheme};
use resvg::tiny_skia::Pixmap;
use resvg::usvg::{self, fontdb};

const ZH_LABELS: [&str; 3] = ["利用率", "显存", "成本（元/小时）"];

/// Each label as a line of 20 px black text on white, 40 px a line.
fn labels_svg(labels: &[&str]) -> String {
    let height = 40 * labels.len();
    let mut svg = format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="400" height="{height}"><rect width="400" height="{height}" fill="white"/>"#
    );
    for (line, label) in labels.iter().enumerate() {
        let y = 40 * line + 28;
        svg += &format!(
            r#"<text x="10" y="{y}" font-family="sans-serif" font-size="20" fill="black">{label}</text>"#
        );
    }
    svg + "</svg>"
}

/// A rasterizer with the shipped Latin face only: no face has CJK.
fn without_cjk() -> Rasterizer {
    let mut fonts = fontdb::Database::new();
    fonts.load_font_data(SHIPPED_LATIN_FONT.to_vec());
    Rasterizer::with_fonts(fonts)
}

/// Every glyph laid out in `svg`: (its text, its glyph id, the family of its face).
fn glyphs(rasterizer: &Rasterizer, svg: &str) -> Vec<(String, u32, String)> {
    faces(rasterizer, svg)
        .into_iter()
        .map(|(text, id, face)| (text, id, face.families[0].0.clone()))
        .collect()
}

/// Every glyph laid out in `svg`: (its text, its glyph id, its face).
fn faces(rasterizer: &Rasterizer, svg: &str) -> Vec<(String, u32, fontdb::FaceInfo)> {
    fn walk(
        group: &usvg::Group,
        fonts: &fontdb::Database,
        out: &mut Vec<(String, u32, fontdb::FaceInfo)>,
    ) {
        for node in group.children() {
            match node {
                usvg::Node::Group(group) => walk(group, fonts, out),
                usvg::Node::Text(text) => {
                    for glyph in text.layouted().iter().flat_map(|s| &s.positioned_glyphs) {
                        let face = fonts.face(glyph.font).expect("a face of the database");
                        out.push((glyph.text.clone(), glyph.id.0, face.clone()));
                    }
                }
                _ => {}
            }
        }
    }
    let tree = usvg::Tree::from_str(svg, &rasterizer.options()).unwrap();
    let mut out = Vec::new();
    walk(tree.root(), tree.fontdb(), &mut out);
    out
}

/// Dark pixels in each 40 px line of the rendered `svg`.
fn ink_per_line(rasterizer: &Rasterizer, svg: &str, lines: usize) -> Vec<usize> {
    let pixmap = Pixmap::decode_png(&rasterizer.png(svg, 1.0).unwrap()).unwrap();
    let width = pixmap.width() as usize;
    let mut ink = vec![0; lines];
    for (index, pixel) in pixmap.pixels().iter().enumerate() {
        let line = index / width / 40;
        if line < lines && pixel.red() < 128 {
            ink[line] += 1;
        }
    }
    ink
}

#[test]
fn zh_cn_labels_are_drawn_by_the_shipped_fonts_alone() {
    let shipped = Rasterizer::with_shipped_fonts_only();
    assert_eq!(shipped.font_faces(), 2);
    let svg = labels_svg(&ZH_LABELS);
    let laid_out = glyphs(&shipped, &svg);
    let chars: String = laid_out.iter().map(|(text, ..)| text.as_str()).collect();
    assert_eq!(chars, ZH_LABELS.concat(), "one glyph a character");
    for (text, id, family) in &laid_out {
        assert_ne!(*id, 0, "{text} is not .notdef (tofu)");
        let expected = if text.is_ascii() {
            "DejaVu Sans"
        } else {
            "Droid Sans Fallback"
        };
        assert_eq!(family, expected, "{text}");
    }
    let ink = ink_per_line(&shipped, &svg, ZH_LABELS.len());
    assert!(
        ink.iter().all(|dots| *dots > 40),
        "every label is drawn: {ink:?}"
    );

    // Without a CJK face the same labels are tofu: so the checks above can fail.
    let tofu = glyphs(&without_cjk(), &svg);
    assert!(
        tofu.iter()
            .filter(|(text, ..)| !text.is_ascii())
            .all(|(_, id, _)| *id == 0),
        "{tofu:?}"
    );
    // And two different words of one length look alike (tofu), where the shipped font
    // draws them apart.
    let pair = labels_svg(&["利用率", "显存量"]);
    let shipped_ink = ink_per_line(&shipped, &pair, 2);
    let tofu_ink = ink_per_line(&without_cjk(), &pair, 2);
    assert_ne!(shipped_ink[0], shipped_ink[1], "{shipped_ink:?}");
    assert_eq!(tofu_ink[0], tofu_ink[1], "{tofu_ink:?}");
}

#[test]
fn ascii_labels_are_drawn_by_the_shipped_fonts_alone() {
    let shipped = Rasterizer::with_shipped_fonts_only();
    let labels = ["gpu-host-1", "GPU-HOST-2"];
    let svg = labels_svg(&labels);
    for (text, id, family) in glyphs(&shipped, &svg) {
        assert_ne!(id, 0, "{text} is not .notdef");
        assert_eq!(family, "DejaVu Sans", "{text}");
    }
    let ink = ink_per_line(&shipped, &svg, 2);
    assert!(ink[0] > 40 && ink[1] > 40, "{ink:?}");
    assert_ne!(ink[0], ink[1], "two different labels: {ink:?}");
}

#[test]
fn a_zh_cn_chart_exports_with_every_glyph_drawn() {
    let chart = gpu_lines_svg(
        &RangeChartSpec {
            title: "gpu-a01 显存利用率",
            theme: ChartTheme::Light,
            width_px: 640,
            height_px: 240,
            from_ms: 1_699_999_200_000,
            to_ms: 1_699_999_200_000 + 3_600_000,
            utc_offset_minutes: 480,
        },
        ChartMetric::MemoryPct,
        &[],
    )
    .unwrap();
    let svg = titled(&chart, "成本（元/小时）· 最近 1 小时").unwrap();
    let shipped = Rasterizer::with_shipped_fonts_only();
    let laid_out = glyphs(&shipped, &svg);
    let title: String = laid_out.iter().map(|(text, ..)| text.as_str()).collect();
    assert!(title.contains("成本（元/小时）"), "{title}");
    assert!(title.contains("显存利用率"), "{title}");
    let tofu: Vec<_> = laid_out.iter().filter(|(_, id, _)| *id == 0).collect();
    assert!(tofu.is_empty(), "drawn as tofu: {tofu:?}");
    assert!(shipped.png(&svg, 2.0).is_ok());
}

#[test]
fn with_system_fonts_chinese_falls_back_to_the_shipped_face_first() {
    // Whatever this machine has (a Japanese CJK face would draw Japanese forms), a
    // character the sans family lacks is drawn by the shipped simplified Chinese face.
    let system = Rasterizer::with_installed_fonts(crate::system_fonts());
    for (text, id, face) in faces(&system, &labels_svg(&["利用率"])) {
        assert_ne!(id, 0, "{text}");
        let shipped = matches!(face.source, fontdb::Source::Binary(_));
        let cjk_sans = face.families.iter().any(|(name, _)| name.contains("CJK"));
        assert!(shipped || cjk_sans, "{text} drawn by {:?}", face.families);
    }
}

#[test]
fn the_shipped_fonts_cover_the_zh_cn_catalog() {
    let catalog = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../ui/src/locales/zh-CN.json"
    ))
    .unwrap();
    let is_cjk =
        |c: &char| matches!(*c as u32, 0x3000..=0x303F | 0x3400..=0x9FFF | 0xFF00..=0xFFEF);
    let mut chars: Vec<char> = catalog.chars().filter(is_cjk).collect();
    chars.sort_unstable();
    chars.dedup();
    assert!(chars.len() > 300, "the catalog's hanzi: {}", chars.len());
    let line: String = chars.iter().collect();
    let missing: String = glyphs(
        &Rasterizer::with_shipped_fonts_only(),
        &labels_svg(&[&line]),
    )
    .into_iter()
    .filter(|(_, id, _)| *id == 0)
    .map(|(text, ..)| text)
    .collect();
    assert!(
        missing.is_empty(),
        "the shipped fonts lack {missing:?}: run crates/ebb-charts/fonts/make_subsets.py"
    );
}
