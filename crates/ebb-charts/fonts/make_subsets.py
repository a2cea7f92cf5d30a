#!/usr/bin/env python3
"""Regenerates the two fonts chart export ships (see README.md beside this script).

    apt-get install fonts-dejavu-core fonts-droid-fallback  # 2.37-6, 1:6.0.1r16-1.1
    python3 -m venv /tmp/fonttools && /tmp/fonttools/bin/pip install fonttools==4.68.0
    /tmp/fonttools/bin/python crates/ebb-charts/fonts/make_subsets.py

Each font keeps, of the characters below, those it has: ASCII and Latin-1, the
punctuation, arrows and shapes charts draw, CJK and full-width punctuation, GB2312's
symbol rows and its 3,755 level-1 hanzi (the common simplified characters), and every
non-ASCII character in the UI's sources (the zh-CN catalog) and the Rust that draws and
titles charts. The same sources and fontTools version give the same bytes. Run it again
after adding words to the zh-CN catalog: `tests/it/export_fonts.rs` fails while a
catalog character is missing from the fonts.
"""

import hashlib
import pathlib
import shutil
import sys

from fontTools import subset
from fontTools.ttLib import TTFont

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent.parent

# (source, its sha256, output)
FONTS = [
    (
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "abdc775b21b1bc470d50c97e790d276f2054b7504e56e5bd3e64f48d68582322",
        "DejaVuSans-subset.ttf",
    ),
    (
        "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
        "acb6440a713d880a13a21b468ba7cd43f5a2b2934972e51be791c880730777b8",
        "DroidSansFallback-subset.ttf",
    ),
]

RANGES = [
    (0x0020, 0x007E),  # ASCII
    (0x00A0, 0x00FF),  # Latin-1: ° × · ± ¥
    (0x2000, 0x206F),  # general punctuation: – — … ‘ ’ “ ”
    (0x2100, 0x214F),  # letterlike symbols: ℃
    (0x2190, 0x21FF),  # arrows
    (0x2200, 0x22FF),  # mathematical operators: ≤ ≥ −
    (0x2460, 0x24FF),  # enclosed numbers
    (0x25A0, 0x25FF),  # geometric shapes: ▲ ▼ ◆ ●
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0xFF00, 0xFFEF),  # half-width and full-width forms
]


def gb2312_rows(first, last):
    """The characters of GB2312 rows first..=last (rows 16 to 55 are the level-1 hanzi)."""
    chars = set()
    for row in range(first, last + 1):
        for cell in range(1, 95):
            try:
                chars.add(bytes([0xA0 + row, 0xA0 + cell]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return chars


def source_chars():
    """Every non-ASCII character in the UI's sources and catalogs and the Rust that draws charts.

    The charts and the telemetry were part of ebb-core when the fonts were made: the three
    crates are read so that the same sources still give the same bytes.
    """
    chars = set()
    for folder, pattern in [
        ("ui/src", "*.ts"),
        ("ui/src", "*.tsx"),
        ("ui/src/locales", "*.json"),
        ("crates/ebb-charts/src", "*.rs"),
        ("crates/ebb-core/src", "*.rs"),
        ("crates/ebb-telemetry/src", "*.rs"),
        ("crates/ebb-notify/src", "*.rs"),
        ("src-tauri/src", "*.rs"),
    ]:
        for path in sorted((ROOT / folder).rglob(pattern)):
            chars.update(c for c in path.read_text(encoding="utf-8") if ord(c) > 0x7F)
    return chars


def main():
    level_1 = gb2312_rows(16, 55)
    assert len(level_1) == 3755, len(level_1)
    codepoints = {cp for first, last in RANGES for cp in range(first, last + 1)}
    codepoints |= {ord(c) for c in gb2312_rows(1, 9) | level_1 | source_chars()}
    for source, sha256, output in FONTS:
        digest = hashlib.sha256(pathlib.Path(source).read_bytes()).hexdigest()
        if digest != sha256:
            sys.exit(f"{source} is not the expected file (sha256 {digest}); see the docstring")
        options = subset.Options()
        options.hinting = False  # resvg draws outlines unhinted
        options.name_IDs = ["*"]  # the copyright and licence strings stay in the font
        options.name_languages = ["*"]
        options.notdef_outline = True
        options.recalc_timestamp = False
        font = subset.load_font(source, options)
        subsetter = subset.Subsetter(options)
        subsetter.populate(unicodes=sorted(codepoints))
        subsetter.subset(font)
        subset.save_font(font, str(HERE / output), options)
        kept = len(TTFont(HERE / output).getBestCmap())
        print(f"{output}: {kept} characters, {(HERE / output).stat().st_size} bytes")
    # The licences, from the sources themselves.
    dejavu = TTFont(FONTS[0][0])["name"].getDebugName(13)
    (HERE / "LICENSE-DejaVu.txt").write_text(dejavu.rstrip() + "\n", encoding="utf-8")
    shutil.copyfile("/usr/share/common-licenses/Apache-2.0", HERE / "LICENSE-Apache-2.0.txt")


if __name__ == "__main__":
    main()
