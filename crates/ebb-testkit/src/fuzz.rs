//! Inputs for the parsers' never-panic properties: arbitrary bytes, and structure-aware
//! mutations of valid inputs (a line deleted, a number made huge, negative, NaN or not a
//! number, a cut at any byte, stray and invalid UTF-8, very long lines, a BOM, CRLF).
//!
//! [`check`] runs one property with its own case count and answers how many cases ran, so
//! each crate's parser tests can print the figure (`parser cases run: ...`).
//! `EBB_FUZZ_CASES_X=N` multiplies every count by `N` for a longer run by hand.

use proptest::prelude::*;
use proptest::test_runner::{Config, TestCaseError, TestRunner};
use std::sync::atomic::{AtomicU64, Ordering};

/// Values that break naive number handling, written as a file would hold them.
pub const ODD_NUMBERS: &[&str] = &[
    "99999999999999999999999999999",
    "18446744073709551616",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "4294967295",
    "4294967296",
    "1e309",
    "-1e309",
    "1e308",
    "1.7976931348623157e308",
    "5e-324",
    "1e-320",
    "-1",
    "-0",
    "-0.0",
    "0",
    "0.001",
    "1.005",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "0x10",
    "0b11",
    "1_000",
    "3.",
    ".5",
    "1e",
    "--1",
    "+-1",
    "",
    "\"\"",
    "\"12\"",
    "x",
    "true",
    "null",
    "[]",
    "{}",
    "１２",
    "٣",
    "1,5",
    "\u{0}",
    "🙂",
];

/// Bytes that are not UTF-8 on their own, or are awkward in a text parser.
pub const ODD_BYTES: &[&[u8]] = &[
    b"\xff",
    b"\xfe\xff",
    b"\xc3",
    b"\xe2\x82",
    b"\xf0\x9f\x99",
    b"\xed\xa0\x80",
    b"\xc0\xaf",
    b"\0",
    b"\r",
    b"\n",
    b"\r\n",
    b"\t",
    b"\x1b[31m",
    b"\xef\xbb\xbf",
    b"\xe2\x80\xae",
    b"\"",
    b"'",
    b"[",
    b"]",
    b"{",
    b"}",
    b"=",
    b",",
    b"#",
    b"\\",
];

/// One change to an input.
#[derive(Debug, Clone)]
pub enum Mutation {
    /// A whole line gone (a field or a row deleted).
    DeleteLine(usize),
    /// A line written twice (a key or a row repeated).
    DuplicateLine(usize),
    /// Two lines swapped (rows out of order, a key under another table).
    SwapLines(usize, usize),
    /// One comma-separated cell of a line gone.
    DeleteCell(usize, usize),
    /// A number replaced by one of [`ODD_NUMBERS`].
    ReplaceNumber(usize, &'static str),
    /// A word (a key, a name) replaced by another word.
    ReplaceWord(usize, String),
    /// Cut at a byte (possibly inside a character).
    Truncate(usize),
    /// Bytes put in at a byte offset.
    Insert(usize, Vec<u8>),
    /// One byte overwritten.
    Flip(usize, u8),
    /// A UTF-8 byte order mark in front.
    Bom,
    /// Every `\n` as `\r\n`.
    Crlf,
    /// A line made very long: one of its characters repeated.
    LongLine(usize, usize),
    /// Many copies of a line.
    RepeatLine(usize, usize),
}

fn line_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut start = 0;
    for (i, byte) in text.iter().enumerate() {
        if *byte == b'\n' {
            spans.push((start, i + 1));
            start = i + 1;
        }
    }
    if start < text.len() {
        spans.push((start, text.len()));
    }
    spans
}

/// Runs of `[0-9.]` with an optional leading `-`: the numbers of a text, roughly.
fn number_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_digit() {
            let start = if i > 0 && text[i - 1] == b'-' {
                i - 1
            } else {
                i
            };
            let mut end = i;
            while end < text.len() && (text[end].is_ascii_digit() || text[end] == b'.') {
                end += 1;
            }
            spans.push((start, end));
            i = end;
        } else {
            i += 1;
        }
    }
    spans
}

fn word_spans(text: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < text.len() {
        if text[i].is_ascii_alphabetic() || text[i] == b'_' {
            let start = i;
            while i < text.len() && (text[i].is_ascii_alphanumeric() || text[i] == b'_') {
                i += 1;
            }
            spans.push((start, i));
        } else {
            i += 1;
        }
    }
    spans
}

fn splice(text: &mut Vec<u8>, (start, end): (usize, usize), with: &[u8]) {
    text.splice(start..end, with.iter().copied());
}

impl Mutation {
    /// Applies this change; one that finds nothing to change leaves the input as it was.
    pub fn apply(&self, text: &mut Vec<u8>) {
        let lines = line_spans(text);
        let pick = |at: &usize, spans: &[(usize, usize)]| {
            (!spans.is_empty()).then(|| spans[at % spans.len()])
        };
        match self {
            Mutation::DeleteLine(at) => {
                if let Some(span) = pick(at, &lines) {
                    splice(text, span, b"");
                }
            }
            Mutation::DuplicateLine(at) => {
                if let Some((start, end)) = pick(at, &lines) {
                    let mut line = text[start..end].to_vec();
                    if !line.ends_with(b"\n") {
                        line.insert(0, b'\n');
                    }
                    splice(text, (end, end), &line);
                }
            }
            Mutation::SwapLines(a, b) => {
                if let (Some(a), Some(b)) = (pick(a, &lines), pick(b, &lines)) {
                    let (first, second) = if a.0 <= b.0 { (a, b) } else { (b, a) };
                    if first != second {
                        let one = text[first.0..first.1].to_vec();
                        let two = text[second.0..second.1].to_vec();
                        splice(text, second, &one);
                        splice(text, first, &two);
                    }
                }
            }
            Mutation::DeleteCell(line, cell) => {
                if let Some((start, end)) = pick(line, &lines) {
                    let row = &text[start..end];
                    let commas: Vec<usize> = row
                        .iter()
                        .enumerate()
                        .filter(|(_, byte)| **byte == b',')
                        .map(|(i, _)| start + i)
                        .collect();
                    if !commas.is_empty() {
                        let comma = commas[cell % commas.len()];
                        let cell_end = text[comma + 1..end]
                            .iter()
                            .position(|byte| matches!(byte, b',' | b'\r' | b'\n'))
                            .map_or(end, |i| comma + 1 + i);
                        splice(text, (comma, cell_end), b"");
                    }
                }
            }
            Mutation::ReplaceNumber(at, with) => {
                if let Some(span) = pick(at, &number_spans(text)) {
                    splice(text, span, with.as_bytes());
                }
            }
            Mutation::ReplaceWord(at, with) => {
                if let Some(span) = pick(at, &word_spans(text)) {
                    splice(text, span, with.as_bytes());
                }
            }
            Mutation::Truncate(at) => {
                let cut = at % (text.len() + 1);
                text.truncate(cut);
            }
            Mutation::Insert(at, bytes) => {
                let at = at % (text.len() + 1);
                splice(text, (at, at), bytes);
            }
            Mutation::Flip(at, byte) => {
                if !text.is_empty() {
                    let at = at % text.len();
                    text[at] = *byte;
                }
            }
            Mutation::Bom => splice(text, (0, 0), b"\xef\xbb\xbf"),
            Mutation::Crlf => {
                let mut out = Vec::with_capacity(text.len() + lines.len());
                for byte in text.iter() {
                    if *byte == b'\n' {
                        out.push(b'\r');
                    }
                    out.push(*byte);
                }
                *text = out;
            }
            Mutation::LongLine(at, length) => {
                if let Some((start, end)) = pick(at, &lines) {
                    let middle = start + (end - start) / 2;
                    let byte = text.get(middle).copied().unwrap_or(b'9');
                    let byte = if byte == b'\n' { b'9' } else { byte };
                    splice(text, (middle, middle), &vec![byte; *length]);
                }
            }
            Mutation::RepeatLine(at, times) => {
                if let Some((start, end)) = pick(at, &lines) {
                    let mut line = text[start..end].to_vec();
                    if !line.ends_with(b"\n") {
                        line.push(b'\n');
                    }
                    let copies = line.repeat(*times);
                    splice(text, (end, end), &copies);
                }
            }
        }
    }
}

/// Any one [`Mutation`].
pub fn mutation() -> impl Strategy<Value = Mutation> {
    let odd_bytes = prop_oneof![
        proptest::sample::select(ODD_BYTES).prop_map(<[u8]>::to_vec),
        proptest::collection::vec(any::<u8>(), 1..8),
        any::<char>().prop_map(|c| c.to_string().into_bytes()),
    ];
    let word = prop_oneof![
        "[a-z_]{1,12}",
        Just(String::new()),
        "\\PC{1,4}",
        Just("x".repeat(300)),
    ];
    prop_oneof![
        3 => any::<usize>().prop_map(Mutation::DeleteLine),
        1 => any::<usize>().prop_map(Mutation::DuplicateLine),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        1 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::DeleteCell(a, b)),
        4 => (any::<usize>(), proptest::sample::select(ODD_NUMBERS))
            .prop_map(|(at, with)| Mutation::ReplaceNumber(at, with)),
        2 => (any::<usize>(), word).prop_map(|(at, with)| Mutation::ReplaceWord(at, with)),
        2 => any::<usize>().prop_map(Mutation::Truncate),
        2 => (any::<usize>(), odd_bytes).prop_map(|(at, bytes)| Mutation::Insert(at, bytes)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, byte)| Mutation::Flip(at, byte)),
        1 => Just(Mutation::Bom),
        1 => Just(Mutation::Crlf),
        1 => (any::<usize>(), prop_oneof![Just(1_000usize), Just(70_000usize)])
            .prop_map(|(at, length)| Mutation::LongLine(at, length)),
        1 => (any::<usize>(), 2usize..200).prop_map(|(at, times)| Mutation::RepeatLine(at, times)),
    ]
}

/// One of `valid`, changed by one to four mutations.
pub fn mutated(valid: Vec<String>) -> impl Strategy<Value = Vec<u8>> {
    (
        proptest::sample::select(valid),
        proptest::collection::vec(mutation(), 1..5),
    )
        .prop_map(|(text, mutations)| {
            let mut bytes = text.into_bytes();
            for mutation in &mutations {
                mutation.apply(&mut bytes);
            }
            bytes
        })
}

/// Arbitrary bytes, arbitrary text, and text made of the characters `alphabet` holds (so a
/// parser's own syntax turns up often enough to go past its first check).
pub fn arbitrary(alphabet: &'static str) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..2_048),
        any::<String>().prop_map(String::into_bytes),
        proptest::string::string_regex(alphabet)
            .expect("a valid alphabet regex")
            .prop_map(String::into_bytes),
    ]
}

/// A valid input as it may also arrive: with a BOM, with CRLF line ends, or both.
pub fn valid_variants(valid: Vec<String>) -> impl Strategy<Value = String> {
    (
        proptest::sample::select(valid),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(text, bom, crlf)| {
            let text = if crlf {
                text.replace("\r\n", "\n").replace('\n', "\r\n")
            } else {
                text
            };
            if bom { format!("\u{feff}{text}") } else { text }
        })
}

/// How many cases each property of one parser ran.
#[derive(Debug, Default)]
pub struct CaseCount {
    parts: Vec<(&'static str, u64)>,
}

impl CaseCount {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `test` over `cases` inputs from `strategy` (a panic fails the case, as does an
    /// `Err`), panicking with the smallest failing input; counts the cases.
    pub fn check<S, F>(&mut self, name: &'static str, cases: u32, strategy: S, test: F)
    where
        S: Strategy,
        S::Value: std::fmt::Debug,
        F: Fn(S::Value) -> Result<(), String>,
    {
        let ran = AtomicU64::new(0);
        let cases = cases.saturating_mul(scale());
        let mut runner = TestRunner::new(Config {
            cases,
            failure_persistence: None,
            max_shrink_iters: 2_000,
            ..Config::default()
        });
        let outcome = runner.run(&strategy, |input| {
            ran.fetch_add(1, Ordering::Relaxed);
            test(input).map_err(TestCaseError::fail)
        });
        if let Err(failure) = outcome {
            panic!("{name}: {failure}");
        }
        self.parts.push((name, u64::from(cases)));
    }

    /// Cases run, all properties together.
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|(_, cases)| cases).sum()
    }

    /// Prints `parser cases run: PARSER TOTAL (name N, ...)` and answers the total.
    pub fn report(&self, parser: &str) -> u64 {
        let parts: Vec<String> = self
            .parts
            .iter()
            .map(|(name, cases)| format!("{name} {cases}"))
            .collect();
        println!(
            "parser cases run: {parser} {} ({})",
            self.total(),
            parts.join(", ")
        );
        self.total()
    }
}

/// `EBB_FUZZ_CASES_X`: how many times the usual cases to run (1 by default).
fn scale() -> u32 {
    std::env::var("EBB_FUZZ_CASES_X")
        .ok()
        .and_then(|value| value.parse().ok())
        .filter(|scale| *scale > 0)
        .unwrap_or(1)
}

/// The text a parser taking `&str` would be handed for these bytes: invalid UTF-8 read as
/// U+FFFD, as a lossy reader would.
pub fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Whether `message` names a line (`line N`, as TOML and CSV errors say it).
pub fn names_a_line(message: &str) -> bool {
    message
        .match_indices("line ")
        .any(|(at, word)| message[at + word.len()..].starts_with(|c: char| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(text: &str, mutation: Mutation) -> String {
        let mut bytes = text.as_bytes().to_vec();
        mutation.apply(&mut bytes);
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn mutations_change_what_they_say() {
        let text = "a = 1\nb = 22\nc = 3.5\n";
        let first = 0;
        assert_eq!(
            applied(text, Mutation::DeleteLine(first)),
            "b = 22\nc = 3.5\n"
        );
        assert_eq!(
            applied(text, Mutation::ReplaceNumber(first, "nan")),
            "a = nan\nb = 22\nc = 3.5\n"
        );
        assert_eq!(
            applied(text, Mutation::Crlf),
            "a = 1\r\nb = 22\r\nc = 3.5\r\n"
        );
        assert_eq!(
            applied("x,y,z\n", Mutation::DeleteCell(first, first)),
            "x,z\n"
        );
        assert_eq!(applied(text, Mutation::Bom), format!("\u{feff}{text}"));
        assert!(names_a_line("TOML parse error at line 3, column 1"));
        assert!(!names_a_line("no line here: line x"));
    }
}
